package delivery

import (
	"errors"
	"path/filepath"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/tools"
)

func TestClientError(t *testing.T) {
	data := func(s string) jsonrpc2.RawMessage { return jsonrpc2.RawMessage(s) }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("broken pipe"), "broken pipe"},
		{&jsonrpc2.Error{Message: "Resource not found"}, "Resource not found"},
		{&jsonrpc2.Error{Message: "Internal error", Data: data(`{"details":"ENOENT: no such file"}`)}, "ENOENT: no such file"},
		{&jsonrpc2.Error{Message: "Internal error", Data: data(`{"error":"denied by the user"}`)}, "denied by the user"},
		{&jsonrpc2.Error{Message: "Internal error", Data: data(`{"message":7,"details":"the second"}`)}, "the second"},
		{&jsonrpc2.Error{Message: "Invalid params", Data: data(`"path must be absolute"`)}, "Invalid params: path must be absolute"},
		{&jsonrpc2.Error{Message: "Internal error", Data: data(`[1]`)}, "Internal error"},
	} {
		if got := ClientError(tc.err); got != tc.want {
			t.Errorf("ClientError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestDiskNote: an approval names what goes to disk, not what goes to
// an open buffer or through the ACP client.
func TestDiskNote(t *testing.T) {
	tb := newTestbed(t, Caps{FSWrite: true})
	open, closed := filepath.Join(tb.root, "open.txt"), filepath.Join(tb.root, "closed.txt")
	tb.open(open, "")
	text := "x"
	changes := []tools.Change{
		{Path: open, NewText: &text},
		{Path: closed, NewText: &text},
		{Path: closed},
		{Path: closed, NewText: &text, MoveTo: filepath.Join(tb.root, "b.txt")},
	}
	want := "writes closed.txt to disk, deletes closed.txt from disk, moves closed.txt on disk (not open in the editor)"
	if got := tb.d.DiskNote("", changes); got != want {
		t.Errorf("DiskNote without a session: %q\nwant %q", got, want)
	}
	want = "deletes closed.txt from disk, moves closed.txt on disk (not open in the editor)"
	if got := tb.d.DiskNote("s1", changes); got != want {
		t.Errorf("DiskNote through ACP fs: %q\nwant %q", got, want)
	}
	if got := tb.d.DiskNote("", changes[:1]); got != "" {
		t.Errorf("DiskNote of a buffer edit: %q", got)
	}
	many := []tools.Change{{Path: closed, NewText: &text}, {Path: closed, NewText: &text}, {Path: closed, NewText: &text}, {Path: closed, NewText: &text}, {Path: closed, NewText: &text}}
	want = "writes closed.txt to disk, writes closed.txt to disk, writes closed.txt to disk, and 2 more (not open in the editor)"
	if got := tb.d.DiskNote("", many); got != want {
		t.Errorf("DiskNote of five: %q", got)
	}
}

func TestEditIntact(t *testing.T) {
	base := "a\nb\nc\nd\n"
	want := "a\nB\nc\nd\n"
	for _, tc := range []struct {
		got string
		ok  bool
	}{
		{want, true},
		{base, false},
		{"a\nB\nc\nd typed\n", true}, // typing elsewhere
		{"a\nB typed\nc\nd\n", false},
		{"a\nc\nd\n", false},
	} {
		if ok := editIntact(base, want, tc.got); ok != tc.ok {
			t.Errorf("editIntact(%q) = %v, want %v", tc.got, ok, tc.ok)
		}
	}
}
