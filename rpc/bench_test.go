package rpc_test

import (
	"context"
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
