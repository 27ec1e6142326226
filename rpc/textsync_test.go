package rpc_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

func rng(l1, c1, l2, c2 uint32) workspace.Range {
	return workspace.Range{Start: workspace.Position{Line: l1, Character: c1}, End: workspace.Position{Line: l2, Character: c2}}
}

func TestMirrorFollowsEditorOverTheWire(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	root := t.TempDir()
	ed.Initialize(ctx, root, nil)
	uri := workspace.PathToURI(filepath.Join(root, "a.txt"))
	ed.Open(ctx, uri, "héllo 😀\r\nworld\n")
	ed.Edit(ctx, uri, rng(0, 8, 0, 8), "!")     // after the emoji: UTF-16 counts it as 2
	ed.Edit(ctx, uri, rng(1, 0, 1, 5), "there") // replace a word
	ed.Edit(ctx, uri, rng(2, 0, 2, 0), "tail")  // the empty last line
	ed.Sync(ctx)
	want, ver, _ := ed.Text(uri)
	got, ok := ed.Server.Buffers().Get(uri)
	if !ok || got.Text != want || got.Version != ver {
		t.Fatalf("mirror %q v%d, editor %q v%d", got.Text, got.Version, want, ver)
	}
	if want != "héllo 😀!\r\nthere\ntail" {
		t.Fatalf("editor text %q", want)
	}
	if got.Path != filepath.Join(root, "a.txt") {
		t.Errorf("path = %q", got.Path)
	}
	ed.CloseDoc(ctx, uri)
	ed.Sync(ctx)
	if _, ok := ed.Server.Buffers().Get(uri); ok {
		t.Fatal("closed document still mirrored")
	}
}

// TestOutOfOrderChangeRefused: a change whose version goes backwards (as
// when notifications are delivered out of order) is refused and reported;
// the mirror keeps the newer text.
func TestOutOfOrderChangeRefused(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, "", nil)
	uri := "file:///tmp/o.txt"
	ed.Open(ctx, uri, "abc")
	change := func(v int, text string) {
		ed.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": v},
			"contentChanges": []any{map[string]any{"range": rng(0, 0, 0, 0), "text": text}},
		})
	}
	change(3, "3")
	change(2, "2") // arrives late
	change(3, "x") // repeats a version
	ed.Sync(ctx)
	s, _ := ed.Server.Buffers().Get(uri)
	if s.Text != "3abc" || s.Version != 3 {
		t.Fatalf("mirror = %q v%d, want \"3abc\" v3", s.Text, s.Version)
	}
	n := 0
	for _, m := range ed.Messages("window/logMessage") {
		if strings.Contains(string(m.Params), "stale document version") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d stale-version reports, want 2", n)
	}
}

func TestWorkspaceFoldersChange(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	a, b := t.TempDir(), t.TempDir()
	ed.Initialize(ctx, a, nil)
	ed.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": workspace.PathToURI(b), "name": "b"}},
		"removed": []any{map[string]any{"uri": workspace.PathToURI(a), "name": "a"}},
	}})
	ed.Sync(ctx)
	if got := ed.Server.Folders().Paths(); len(got) != 1 || got[0] != b {
		t.Fatalf("folders = %v, want [%s]", got, b)
	}
}

func TestDidChangeConfiguration(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, "", map[string]any{"initializationOptions": map[string]any{"mode": "plan"}})
	if m := ed.Server.CurrentSettings().Mode; m != "plan" {
		t.Fatalf("mode from initializationOptions = %q", m)
	}
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"cline": map[string]any{"mode": "yolo", "maxTurns": 7}}})
	ed.Sync(ctx)
	if st := ed.Server.CurrentSettings(); st.Mode != "yolo" || st.MaxTurns != 7 {
		t.Fatalf("settings after change = %+v", st)
	}
	// A change of the wrong type is reported, naming the field, and
	// changes nothing.
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"mode": 3}})
	if _, err := ed.Await(ctx, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "settings.mode: expected a string")
	}); err != nil {
		t.Fatal(err)
	}
	if st := ed.Server.CurrentSettings(); st.Mode != "yolo" || st.MaxTurns != 7 {
		t.Fatalf("settings after a refused change = %+v", st)
	}
}

// TestEmptyConfigurationKeepsSettings: eglot sends {"settings":{}} right
// after connecting; that must not wipe initializationOptions.
func TestEmptyConfigurationKeepsSettings(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, "", map[string]any{"initializationOptions": map[string]any{
		"mode": "plan", "provider": map[string]any{"name": "replay", "transcript": "/t.json"}}})
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{}})
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"maxTurns": 3}})
	ed.Sync(ctx)
	st := ed.Server.CurrentSettings()
	if st.Mode != "plan" || st.Provider == nil || st.Provider.Name != "replay" || st.MaxTurns != 3 {
		t.Fatalf("settings after partial changes = %+v %+v", st, st.Provider)
	}
}
