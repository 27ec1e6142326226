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

func TestEditOpenUnsavedBuffer(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, nil, nil)
	path := filepath.Join(root, "a.txt")
	uri := workspace.PathToURI(path)
	ed.Open(ctx, uri, "one\ntwo\nthree\n")
	ed.Edit(ctx, uri, rng(1, 0, 1, 3), "TWO (unsaved)") // the user's unsaved change
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "TWO (unsaved)", "new_text": "2"})
	if r.IsError || !strings.Contains(r.Content, "Edited a.txt") {
		t.Fatalf("result = %+v", r)
	}
	assertBuffer(t, ctx, ed, uri, "one\n2\nthree\n")
	if disk := readFile(t, path); disk != "one\ntwo\nthree\n" {
		t.Fatalf("disk changed to %q: the daemon must never save the user's buffer", disk)
	}
	// Saving is the editor's business; the mirror keeps the text.
	if m := ed.Messages("window/logMessage"); len(m) == 0 || !strings.Contains(string(m[len(m)-1].Params), "+2: 2") {
		t.Errorf("no compact diff reported to a client without cline diffs: %v", m)
	}
}

func TestEditClosedFileWritesDiskAndSendsClineDiff(t *testing.T) {
	ctx := testCtx(t)
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"diffs": true}}}
	ed, root := editWorkspace(t, map[string]string{"b.txt": "x\r\ny\r\n"}, nil, caps)
	path := filepath.Join(root, "b.txt")
	os.Chmod(path, 0o640)
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "b.txt", "old_text": "y", "new_text": "Y\nZ"})
	if r.IsError {
		t.Fatal(r.Content)
	}
	if disk := readFile(t, path); disk != "x\r\nY\r\nZ\r\n" {
		t.Fatalf("disk = %q, want CRLF kept", disk)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	m, err := ed.Await(ctx, "cline/diff", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		URI            string
		Diff           string
		Added, Removed int
	}
	json.Unmarshal(m.Params, &d)
	if d.URI != workspace.PathToURI(path) || d.Added != 2 || d.Removed != 1 || !strings.Contains(d.Diff, "-2: y") {
		t.Errorf("cline/diff = %s", m.Params)
	}
}

func TestEditRejectedByClientChangesNothing(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "keep me\n", "other.txt": "closed\n"}, nil, nil)
	uri := workspace.PathToURI(filepath.Join(root, "a.txt"))
	ed.Open(ctx, uri, "keep me\n")
	ed.Mode = rpctest.ApplyRefuse
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "keep", "new_text": "lose"})
	if !r.IsError || !strings.Contains(r.Content, "declined") {
		t.Fatalf("result = %+v, want an error saying the editor declined", r)
	}
	assertBuffer(t, ctx, ed, uri, "keep me\n")
	if readFile(t, filepath.Join(root, "a.txt")) != "keep me\n" {
		t.Fatal("disk changed")
	}
	// A patch touching the open buffer and a closed file is all or
	// nothing: the refused buffer edit rolls the disk write back.
	// apply_patch is offered to the models trained on it, so this editor's
	// model is one (without one, the call was refused as unknown before
	// anything was written, and the rollback never ran).
	ed, root = editWorkspace(t, map[string]string{"a.txt": "keep me\n", "other.txt": "closed\n"}, map[string]any{
		"provider":  map[string]any{"name": "replay", "transcript": transcriptFor(t, "gpt-5", reply(text("unused")))},
		"approvals": map[string]any{"edit": "allow"}}, nil)
	uri = workspace.PathToURI(filepath.Join(root, "a.txt"))
	ed.Open(ctx, uri, "keep me\n")
	ed.Mode = rpctest.ApplyRefuse
	patch := "*** Begin Patch\n*** Update File: other.txt\n@@\n-closed\n+changed\n*** Update File: a.txt\n@@\n-keep me\n+gone\n*** End Patch"
	r = callTool(t, ctx, ed, "apply_patch", map[string]any{"input": patch})
	if !r.IsError || !strings.Contains(r.Content, "declined") {
		t.Fatalf("apply_patch result = %+v, want an error saying the editor declined", r)
	}
	if got := readFile(t, filepath.Join(root, "other.txt")); got != "closed\n" {
		t.Fatalf("other.txt = %q: the disk half of a refused patch was not rolled back", got)
	}
	assertBuffer(t, ctx, ed, uri, "keep me\n")
}

// TestUserTypesWhileAgentEdits: the user has typed, but the editor has not
// yet sent didChange (clients debounce), so the daemon computes its edit
// against an older version. The editor refuses it (eglot, VS Code) or
// skips it while answering applied:true (Neovim); either way the daemon
// waits for the mirror, re-runs the unique match on the user's latest
// text and lands the edit, and the user's keystrokes survive.
func TestUserTypesWhileAgentEdits(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode rpctest.ApplyMode
	}{{"refuses stale", rpctest.ApplyNormal}, {"skips stale", rpctest.ApplySkipStale}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := testCtx(t)
			ed, root := editWorkspace(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"}, nil, nil)
			uri := workspace.PathToURI(filepath.Join(root, "a.go"))
			ed.Mode = mode.mode
			ed.Open(ctx, uri, "package a\n\nfunc A() {}\n")
			ed.Sync(ctx)
			// The user types a comment at the top; the didChange is held
			// until the daemon's edit has reached the editor, so the edit
			// is surely planned on the older version.
			ed.Type(uri, rng(0, 0, 0, 0), "// typed by the user\n")
			flushed := make(chan struct{})
			go func() {
				defer close(flushed)
				if _, err := ed.Await(ctx, "workspace/applyEdit", nil); err == nil {
					ed.Flush(ctx, uri)
				}
			}()
			r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.go", "old_text": "func A() {}", "new_text": "func A() int { return 1 }"})
			<-flushed
			if r.IsError {
				t.Fatalf("result = %+v", r)
			}
			assertBuffer(t, ctx, ed, uri, "// typed by the user\npackage a\n\nfunc A() int { return 1 }\n")
			if n := len(ed.Messages("workspace/applyEdit")); n != 2 {
				t.Errorf("%d workspace/applyEdit requests, want 2: the stale one and the one planned again", n)
			}
		})
	}
}

// TestUserTypesOverTheEditedText: the user changed the very text the model
// wanted to replace; the re-run match fails cleanly and the user's text is
// kept.
func TestUserTypesOverTheEditedText(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "alpha\nbeta\n"}, nil, nil)
	uri := workspace.PathToURI(filepath.Join(root, "a.txt"))
	ed.Open(ctx, uri, "alpha\nbeta\n")
	ed.Sync(ctx)
	ed.Type(uri, rng(1, 0, 1, 4), "BETA")
	// The didChange comes once the daemon's edit (planned on "beta") has
	// reached the editor, which refuses it: the re-run match is the one
	// that fails.
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		if _, err := ed.Await(ctx, "workspace/applyEdit", nil); err == nil {
			ed.Flush(ctx, uri)
		}
	}()
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "beta", "new_text": "gamma"})
	<-flushed
	if !r.IsError || !strings.Contains(r.Content, "not found") {
		t.Fatalf("result = %+v, want text not found", r)
	}
	if n := len(ed.Messages("workspace/applyEdit")); n != 1 {
		t.Errorf("%d workspace/applyEdit requests, want 1, the stale one", n)
	}
	assertBuffer(t, ctx, ed, uri, "alpha\nBETA\n")
}

func TestEditCRLFAndSurrogatePairsInBuffer(t *testing.T) {
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			ctx := testCtx(t)
			caps := map[string]any{"general": map[string]any{"positionEncodings": []string{enc}}}
			text := "😀 start\r\nmid 𝄞 😀 here\r\nend 😀\r\n"
			ed, root := editWorkspace(t, map[string]string{"u.txt": text}, nil, caps)
			uri := workspace.PathToURI(filepath.Join(root, "u.txt"))
			ed.Open(ctx, uri, text)
			r := callTool(t, ctx, ed, "editor", map[string]any{"path": "u.txt", "old_text": "😀 here\nend", "new_text": "🎉 there\nlast\nend"})
			if r.IsError {
				t.Fatal(r.Content)
			}
			assertBuffer(t, ctx, ed, uri, "😀 start\r\nmid 𝄞 🎉 there\r\nlast\r\nend 😀\r\n")
		})
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

// TestEditRefusesBadInput: binary files, directories, hostile paths and
// malformed arguments get clear errors, nothing changes, and the daemon
// keeps serving.
func TestEditRefusesBadInput(t *testing.T) {
	ctx := testCtx(t)
	bin := "PK\x03\x04\x00\x00binary\x00data"
	ed, root := editWorkspace(t, map[string]string{"a.bin": bin, "dir/x.txt": "x", "ok.txt": "fine\n"}, nil, nil)
	cases := []struct {
		args any
		want string
	}{
		{map[string]any{"path": "a.bin", "old_text": "binary", "new_text": "text"}, "not a text file"},
		{map[string]any{"path": "dir", "old_text": "x", "new_text": "y"}, "directory"},
		{map[string]any{"path": "../outside.txt", "new_text": "y"}, "workspace"},
		{map[string]any{"path": "/etc/passwd", "old_text": "root", "new_text": "y"}, "workspace"},
		{map[string]any{"path": "ok.txt\x00.txt", "old_text": "fine", "new_text": "y"}, "NUL"},
		{map[string]any{"path": "ok.txt", "old_text": 7, "new_text": "y"}, "old_text"},
		{map[string]any{"old_text": "fine", "new_text": "y"}, "path"},
	}
	for _, c := range cases {
		r := callTool(t, ctx, ed, "editor", c.args)
		if !r.IsError || !strings.Contains(r.Content, c.want) {
			t.Errorf("%v: %+v, want an error mentioning %q", c.args, r, c.want)
		}
	}
	if readFile(t, filepath.Join(root, "a.bin")) != bin || readFile(t, filepath.Join(root, "ok.txt")) != "fine\n" {
		t.Fatal("a refused call changed a file")
	}
	if r := callTool(t, ctx, ed, "editor", map[string]any{"path": "ok.txt", "old_text": "fine", "new_text": "good"}); r.IsError {
		t.Fatalf("after bad input: %+v", r)
	}
}

// TestClineignoreBlocksAccess: a file .clineignore excludes can be neither
// read nor edited, even when the model names it.
func TestClineignoreBlocksAccess(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{".clineignore": "secrets/\n*.key\n", "secrets/token.txt": "t0k3n", "a.key": "k", "ok.txt": "fine"}, nil, nil)
	for _, c := range []struct {
		tool string
		args any
	}{
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "secrets/token.txt"}}}},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "a.key"}}}},
		{"editor", map[string]any{"path": "a.key", "old_text": "k", "new_text": "x"}},
	} {
		r := callTool(t, ctx, ed, c.tool, c.args)
		if !strings.Contains(r.Content, ".clineignore") || strings.Contains(r.Content, "t0k3n") {
			t.Errorf("%s %v: %+v", c.tool, c.args, r)
		}
	}
	if readFile(t, filepath.Join(root, "a.key")) != "k" {
		t.Fatal("an excluded file was edited")
	}
	if r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "ok.txt"}}}); r.IsError || !strings.Contains(r.Content, "fine") {
		t.Fatalf("ok.txt: %+v", r)
	}
}
