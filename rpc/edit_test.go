package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// editWorkspace starts a fake editor on a temp workspace holding files,
// with edits allowed without asking unless opts says otherwise.
func editWorkspace(t *testing.T, files map[string]string, initOpts map[string]any, caps map[string]any) (*rpctest.Editor, string) {
	t.Helper()
	ctx := testCtx(t)
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if initOpts == nil {
		initOpts = map[string]any{"approvals": map[string]any{"edit": "allow"}}
	}
	c := map[string]any{
		"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		"window":    map[string]any{"showMessage": map[string]any{}},
	}
	for k, v := range caps {
		c[k] = v
	}
	ed := rpctest.New(t, rpc.Options{})
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": initOpts, "capabilities": c}); err != nil {
		t.Fatal(err)
	}
	return ed, root
}

type toolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError"`
}

func callTool(t *testing.T, ctx context.Context, ed *rpctest.Editor, name string, args any) toolResult {
	t.Helper()
	var r toolResult
	if err := ed.Call(ctx, "cline/callTool", map[string]any{"name": name, "arguments": args}, &r); err != nil {
		t.Fatalf("cline/callTool %s: %v", name, err)
	}
	return r
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertBuffer checks that the editor's buffer and the daemon's mirror both
// hold want.
func assertBuffer(t *testing.T, ctx context.Context, ed *rpctest.Editor, uri, want string) {
	t.Helper()
	ed.Sync(ctx)
	got, _, _ := ed.Text(uri)
	if got != want {
		t.Errorf("editor buffer = %q, want %q", got, want)
	}
	if snap, _ := ed.Server.Buffers().Get(uri); snap.Text != want {
		t.Errorf("daemon mirror = %q, want %q", snap.Text, want)
	}
}

func TestEditLargeBuffer(t *testing.T) {
	ctx := testCtx(t)
	var b strings.Builder
	for i := range 50000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString(" #")
		b.WriteString(itoa(i))
		b.WriteString("\n")
	}
	text := b.String()
	ed, root := editWorkspace(t, map[string]string{"big.txt": text}, nil, nil)
	uri := workspace.PathToURI(filepath.Join(root, "big.txt"))
	ed.Open(ctx, uri, text)
	old := " #25000\n"
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "big.txt", "old_text": old, "new_text": " #25000 edited\n"})
	if r.IsError {
		t.Fatal(r.Content)
	}
	assertBuffer(t, ctx, ed, uri, strings.Replace(text, old, " #25000 edited\n", 1))
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
