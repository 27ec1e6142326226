package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
)

// wsTree writes files (slash-separated relative path → content) into a
// new temporary workspace and returns Files over it.
func wsTree(t testing.TB, files map[string]string) *toolstest.Files {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := toolstest.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wsBuild builds a call of a workspace tool through its real spec, so
// that arguments are validated as in the daemon.
func wsBuild(t testing.TB, files tools.Files, name, args string, opts ...tools.WorkspaceOption) (tools.Invocation, error) {
	t.Helper()
	tool, err := tools.Builtin(name, tools.WorkspaceTools(files, opts...)[name])
	if err != nil {
		t.Fatal(err)
	}
	return tool.Build(json.RawMessage(args))
}

// wsRun builds and executes a call that must build.
func wsRun(t *testing.T, files tools.Files, name, args string, opts ...tools.WorkspaceOption) tools.Result {
	t.Helper()
	inv, err := wsBuild(t, files, name, args, opts...)
	if err != nil {
		t.Fatalf("%s %s: build: %v", name, args, err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil {
		t.Fatalf("%s %s: execute: %v", name, args, err)
	}
	return res
}

// wsWant fails unless s holds every one of wants.
func wsWant(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, wsShort(s))
		}
	}
}

// wsWantNot fails if s holds any of nots.
func wsWantNot(t *testing.T, s string, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if strings.Contains(s, n) {
			t.Errorf("output holds %q:\n%s", n, wsShort(s))
		}
	}
}

func wsShort(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n…\n" + s[len(s)-1500:]
	}
	return s
}

func TestWorkspaceToolsCoverTheirBuiltins(t *testing.T) {
	impls := tools.WorkspaceTools(wsTree(t, nil))
	want := []string{tools.NameReadFiles, tools.NameListFiles, tools.NameSearchCodebase,
		tools.NameListCodeDefinitions, tools.NameRunCommands, tools.NameFetchWebContent,
		tools.NameReadCommandOutput, tools.NameStopCommand}
	for _, name := range want {
		if impls[name] == nil {
			t.Errorf("no implementation of %s", name)
		}
	}
	if len(impls) != len(want) {
		t.Errorf("%d implementations, want %d", len(impls), len(want))
	}
	if err := tools.NewRegistry().RegisterBuiltins(impls); err != nil {
		t.Fatal(err)
	}
}

// wsErrorText returns a build error's text, failing unless it is a
// *tools.ValidationError.
func wsErrorText(t *testing.T, err error) string {
	t.Helper()
	var ve *tools.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a *tools.ValidationError", err)
	}
	return err.Error()
}
