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
)

// BenchmarkDidChangeKeystroke10MiB measures one-character didChange
// notifications into a 10 MiB buffer through the whole server: framing,
// decoding, the mirror. The last round trip makes sure every change was
// applied before the clock stops.
func BenchmarkDidChangeKeystroke10MiB(b *testing.B) {
	ctx := context.Background()
	ed := rpctest.New(b, rpc.Options{})
	ed.Initialize(ctx, "", nil)
	line := strings.Repeat("x", 79) + "\n"
	text := strings.Repeat(line, 10<<20/len(line))
	uri := "file:///tmp/big.txt"
	ed.Open(ctx, uri, text)
	ed.Sync(ctx)
	mid := strings.Count(text, "\n") / 2
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ed.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{
				"range": map[string]any{"start": map[string]any{"line": mid, "character": 10}, "end": map[string]any{"line": mid, "character": 10}},
				"text":  "a",
			}},
		})
	}
	ed.Sync(ctx)
	b.StopTimer()
	if s, _ := ed.Server.Buffers().Get(uri); len(s.Text) != len(text)+b.N {
		b.Fatalf("mirror has %d bytes, want %d", len(s.Text), len(text)+b.N)
	}
}

// BenchmarkACPEdit10MiB is case 1 of bench/edits over ACP, in process: a
// session/prompt whose replayed model replaces 5,000 lines of a 10 MiB
// file with the editor tool, in yolo mode, the daemon writing the file
// (durably) or the client through fs/*. Each iteration is one prompt in a
// fresh session (made with the clock stopped), alternating the edit and
// its reverse.
func BenchmarkACPEdit10MiB(b *testing.B) {
	for _, clientFS := range []bool{false, true} {
		b.Run(map[bool]string{false: "daemon-writes", true: "client-writes"}[clientFS], func(b *testing.B) {
			benchACPEdit(b, clientFS)
		})
	}
}

func benchACPEdit(b *testing.B, clientFS bool) {
	ctx := context.Background()
	orig, oldText, newText, want := bigEdit()
	dir := b.TempDir()
	root := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(dir, "config", "cline-ls"), 0o755)
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(dir, "config", "cline-ls", "config.json"), []byte(`{"provider":{"contextWindow":10000000}}`), 0o644)
	path := filepath.Join(root, "big.go")
	os.WriteFile(path, []byte(orig), 0o644)
	tr := filepath.Join(dir, "transcript.json")
	var transcripts [2][]byte
	for k, args := range [2][2]string{{oldText, newText}, {newText, oldText}} {
		transcripts[k], _ = json.Marshal(map[string]any{"model": "bench", "replies": []any{
			reply(call("c1", "editor", map[string]any{"path": "big.go", "old_text": args[0], "new_text": args[1]})),
			reply(text("Done."), call("c2", "submit_and_exit", map[string]any{"summary": "renamed", "verified": true})),
		}})
	}
	env := map[string]string{"CLINE_LS_PROVIDER": "replay", "CLINE_LS_MODE": "yolo", "CLINE_LS_TRANSCRIPT": tr,
		"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	c := inProcessACP(b, ctx, env)
	fsCaps := map[string]any{"readTextFile": clientFS, "writeTextFile": clientFS}
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": fsCaps}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		os.WriteFile(tr, transcripts[i%2], 0o644)
		res, err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
		if err != nil {
			b.Fatal(err)
		}
		var s struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(res, &s)
		b.StartTimer()
		if _, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": "rename compute"}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	got, _ := os.ReadFile(path)
	if clientFS {
		t, _ := c.File(path)
		got = []byte(t)
	}
	if wantText := map[bool]string{true: want, false: orig}[b.N%2 == 1]; string(got) != wantText {
		b.Fatalf("after %d edits the file is not as expected (%d bytes)", b.N, len(got))
	}
}

// BenchmarkLSPEdit10MiB is case 1 of bench/edits over LSP, in process:
// cline/callTool of the editor tool replacing 5,000 lines of a 10 MiB
// file that is not open, in yolo mode, so the daemon writes the file
// (durably) and reports the edit with cline/diff; in the editor's own
// session or in one made with session/new, which also streams the call's
// session/update notifications. Each iteration is one call, alternating
// the edit and its reverse.
func BenchmarkLSPEdit10MiB(b *testing.B) {
	for _, named := range []bool{false, true} {
		b.Run(map[bool]string{false: "editor-session", true: "named-session"}[named], func(b *testing.B) {
			benchLSPEdit(b, named)
		})
	}
}

func benchLSPEdit(b *testing.B, named bool) {
	ctx := context.Background()
	orig, oldText, newText, want := bigEdit()
	root := b.TempDir()
	path := filepath.Join(root, "big.go")
	os.WriteFile(path, []byte(orig), 0o644)
	b.Setenv("XDG_STATE_HOME", filepath.Join(b.TempDir(), "state"))
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(b.TempDir(), "config"))
	ed := rpctest.New(b, rpc.Options{})
	caps := map[string]any{
		"workspace":    map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		"experimental": map[string]any{"cline": map[string]any{"diffs": true}},
	}
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{"mode": "yolo"}, "capabilities": caps}); err != nil {
		b.Fatal(err)
	}
	args := [2]map[string]any{
		{"path": "big.go", "old_text": oldText, "new_text": newText},
		{"path": "big.go", "old_text": newText, "new_text": oldText},
	}
	params := func(i int) map[string]any { return map[string]any{"name": "editor", "arguments": args[i%2]} }
	if named {
		var created struct{ SessionID string }
		if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root}, &created); err != nil {
			b.Fatal(err)
		}
		params = func(i int) map[string]any {
			return map[string]any{"sessionId": created.SessionID, "name": "editor", "arguments": args[i%2]}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		var r struct {
			Content string `json:"content"`
			IsError bool   `json:"isError"`
		}
		if err := ed.Call(ctx, "cline/callTool", params(i), &r); err != nil {
			b.Fatal(err)
		}
		if r.IsError {
			b.Fatalf("the edit failed: %.300s", r.Content)
		}
	}
	b.StopTimer()
	got, _ := os.ReadFile(path)
	if wantText := map[bool]string{true: want, false: orig}[b.N%2 == 1]; string(got) != wantText {
		b.Fatalf("after %d edits the file is not as expected (%d bytes)", b.N, len(got))
	}
}
