package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestCodeActions: a stock client asks for code actions on a diagnostic
// and on a selection; each runs cline.prompt with the file, the lines, the
// selected text and the diagnostic's message. Running one starts a turn.
func TestCodeActions(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
	tr := transcript(t, reply(text("Fixed.")))
	ed := rpctest.New(t, rpc.Options{})
	res, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if caps := res["capabilities"].(map[string]any); caps["codeActionProvider"] == nil {
		t.Errorf("codeActionProvider not advertised: %v", caps)
	}
	uri := workspace.PathToURI(filepath.Join(root, "main.go"))
	ed.Open(ctx, uri, "package main\n\nfunc f() int { return x }\n")
	rng := func(l1, c1, l2, c2 int) map[string]any {
		return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
	}
	var actions []struct {
		Title   string
		Command struct {
			Command   string
			Arguments []struct{ Text string }
		}
	}
	if err := ed.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng(2, 0, 2, 26),
		"context": map[string]any{"diagnostics": []any{map[string]any{"range": rng(2, 22, 2, 23), "message": "undefined: x", "source": "compiler"}}},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 3 || actions[0].Title != "Fix with agent" {
		t.Fatalf("actions = %+v", actions)
	}
	fix := actions[0].Command
	if fix.Command != "cline.prompt" || len(fix.Arguments) != 1 {
		t.Fatalf("fix command = %+v", fix)
	}
	for _, want := range []string{"main.go", "line 3", "undefined: x", "compiler"} {
		if !strings.Contains(fix.Arguments[0].Text, want) {
			t.Errorf("the fix task lacks %q: %s", want, fix.Arguments[0].Text)
		}
	}
	if !strings.Contains(actions[1].Command.Arguments[0].Text, "func f() int { return x }") {
		t.Errorf("explain does not quote the selection: %s", actions[1].Command.Arguments[0].Text)
	}
	// A linter's diagnostic the client does not send: a bare cursor on
	// its line is offered the fix, quoting the line.
	actions = nil
	if err := ed.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng(2, 4, 2, 4),
		"context": map[string]any{"diagnostics": []any{}},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Title != "Fix with agent" ||
		!strings.Contains(actions[0].Command.Arguments[0].Text, "line 3 of main.go") ||
		!strings.Contains(actions[0].Command.Arguments[0].Text, "func f() int { return x }") {
		t.Errorf("actions on a bare cursor = %+v", actions)
	}
	var started struct{ SessionID string }
	if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": fix.Command,
		"arguments": []any{map[string]any{"text": fix.Arguments[0].Text}}}, &started); err != nil || started.SessionID == "" {
		t.Fatalf("running the action: %v %+v", err, started)
	}
}
