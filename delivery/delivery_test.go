package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// replace is a plan that replaces old with new in each path.
func replace(old, new string, paths ...string) tools.Planner {
	return func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
		var out []tools.Change
		for _, p := range paths {
			ft, err := read(p)
			if err != nil {
				return nil, err
			}
			if !strings.Contains(ft.Text, old) {
				return nil, errors.New(old + " not in " + p)
			}
			text := strings.Replace(ft.Text, old, new, 1)
			out = append(out, tools.Change{Path: p, OldText: ft.Text, Existed: ft.Exists, NewText: &text})
		}
		return out, nil
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestApplyEditRefusedRollsBackDisk: one call edits a closed file (disk)
// and an open buffer; the editor refuses the buffer's edit, so the disk
// file is put back as it was and the error names the refusal.
func TestApplyEditRefusedRollsBackDisk(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{ApplyEdit: true, DocChanges: true})
	disk, open := filepath.Join(tb.root, "disk.txt"), filepath.Join(tb.root, "open.txt")
	if err := os.WriteFile(disk, []byte("old disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb.open(open, "old buffer\n")
	tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
		return applyEditResult{Applied: false, FailureReason: "the user said no"}, nil
	}
	_, err := tb.d.Files("", "").Apply(context.Background(), replace("old", "new", disk, open))
	var de *tools.DeliveryError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "the user said no") {
		t.Fatalf("Apply: %v, want a DeliveryError with the editor's reason", err)
	}
	if got := readFile(t, disk); got != "old disk\n" {
		t.Errorf("disk file after the refusal: %q, want it rolled back", got)
	}
	if fi, _ := os.Stat(disk); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rollback: %v", fi.Mode().Perm())
	}
	if snap, _ := tb.buffers.GetPath(open); snap.Text != "old buffer\n" {
		t.Errorf("buffer: %q", snap.Text)
	}
	if n := tb.locks.Len(); n != 0 {
		t.Errorf("%d locks left held", n)
	}
}

// TestApplyStaleBufferReplansOnce: the user types while the edit is on
// its way, the editor refuses the stale version, and the plan is made
// again, once, on the text with the user's typing, which the edit then
// keeps.
func TestApplyStaleBufferReplansOnce(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{ApplyEdit: true, DocChanges: true})
	path := filepath.Join(tb.root, "a.go")
	uri := tb.open(path, "one\ntwo\n")
	var edits atomic.Int32
	tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
		p := params.(applyEditParams)
		if edits.Add(1) == 1 {
			// The user's keystroke reaches the editor first.
			if err := tb.buffers.Change(uri, 2, workspace.UTF16, []workspace.Change{{Text: "zero\none\ntwo\n"}}); err != nil {
				t.Error(err)
			}
			return applyEditResult{Applied: false, FailureReason: "version mismatch"}, nil
		}
		if v := p.Edit.DocumentChanges[0].TextDocument.Version; v != 2 {
			t.Errorf("second edit for version %d, want 2", v)
		}
		tb.applyToMirror(t, p)
		return applyEditResult{Applied: true}, nil
	}
	var plans []string
	plan := func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
		ft, err := read(path)
		if err != nil {
			return nil, err
		}
		plans = append(plans, ft.Text)
		text := strings.Replace(ft.Text, "two", "TWO", 1)
		return []tools.Change{{Path: path, OldText: ft.Text, Existed: true, NewText: &text}}, nil
	}
	if _, err := tb.d.Files("", "").Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 || plans[1] != "zero\none\ntwo\n" {
		t.Errorf("plans made on %q, want the first text then the typed one", plans)
	}
	if snap, _ := tb.buffers.GetPath(path); snap.Text != "zero\none\nTWO\n" {
		t.Errorf("buffer: %q", snap.Text)
	}
}

// TestApplyStaleTwiceGivesUp: a buffer that moves under both attempts is
// left to the user, and nothing is changed.
func TestApplyStaleTwiceGivesUp(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{ApplyEdit: true, DocChanges: true})
	path := filepath.Join(tb.root, "a.txt")
	uri := tb.open(path, "a\n")
	var v atomic.Int32
	v.Store(1)
	tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
		n := v.Add(1)
		if err := tb.buffers.Change(uri, n, workspace.UTF16, []workspace.Change{{Text: strings.Repeat("a\n", int(n))}}); err != nil {
			t.Error(err)
		}
		return applyEditResult{Applied: false}, nil
	}
	_, err := tb.d.Files("", "").Apply(context.Background(), replace("a", "b", path))
	var de *tools.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("Apply: %v, want a DeliveryError", err)
	}
	if n := tb.client.called(methodApplyEdit); n != 2 {
		t.Errorf("%d applyEdit requests, want 2", n)
	}
}

// TestTwoWritersOfOneFileAreSerialised: a second call on a file waits
// for the first to deliver, then plans on the text it wrote.
func TestTwoWritersOfOneFileAreSerialised(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{})
	path := filepath.Join(tb.root, "a.txt")
	if err := os.WriteFile(path, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inFirst, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := tb.d.Files("s1", "").Apply(context.Background(), func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
			ft, err := read(path)
			if err != nil {
				return nil, err
			}
			close(inFirst)
			<-release
			text := ft.Text + "1\n"
			return []tools.Change{{Path: path, OldText: ft.Text, Existed: true, NewText: &text}}, nil
		})
		done <- err
	}()
	<-inFirst
	second := make(chan error, 1)
	var saw string
	go func() {
		_, err := tb.d.Files("s2", "").Apply(context.Background(), func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
			ft, err := read(path)
			if err != nil {
				return nil, err
			}
			saw = ft.Text
			text := ft.Text + "2\n"
			return []tools.Change{{Path: path, OldText: ft.Text, Existed: true, NewText: &text}}, nil
		})
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("the second writer finished while the first held the file: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if saw != "0\n1\n" {
		t.Errorf("the second writer planned on %q, want the first's text", saw)
	}
	if got := readFile(t, path); got != "0\n1\n2\n" {
		t.Errorf("file: %q", got)
	}
}

// sdkError is how the TypeScript SDK answers for a handler that failed.
func sdkError(details string) error {
	data, _ := json.Marshal(map[string]string{"details": details})
	return &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: "Internal error", Data: data}
}

// TestACPReadErrorNamesFileAndReason: a failed fs/read_text_file says
// which file and the client's own reason, not "Internal error".
func TestACPReadErrorNamesFileAndReason(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{FSRead: true, FSWrite: true})
	path := filepath.Join(tb.root, "a.txt")
	if err := os.WriteFile(path, []byte("disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
		if p := params.(wire.ReadTextFileParams); method != methodReadTextFile || p.SessionID != "s1" || p.Path != path {
			t.Errorf("asked %s %+v", method, p)
		}
		return nil, sdkError("EACCES: permission denied")
	}
	_, err := tb.d.Files("s1", "").Read(context.Background(), path)
	if err == nil || err.Error() != "the editor could not read a.txt: EACCES: permission denied" {
		t.Errorf("Read: %v", err)
	}
	// Without a session the client is not asked: the disk is read.
	ft, err := tb.d.Files("", "").Read(context.Background(), path)
	if err != nil || ft.Text != "disk\n" || ft.Open {
		t.Errorf("Read without a session: %+v, %v", ft, err)
	}
	// A file not on disk is missing without asking.
	if ft, err := tb.d.Files("s1", "").Read(context.Background(), filepath.Join(tb.root, "none.txt")); err != nil || ft.Exists {
		t.Errorf("Read of a missing file: %+v, %v", ft, err)
	}
	if n := tb.client.called(methodReadTextFile); n != 1 {
		t.Errorf("%d fs/read_text_file requests, want 1", n)
	}
}

// TestACPWriteErrorRollsBack: of two fs/write_text_file, the second
// fails; the first file is written back with its old text and the error
// names the file the client did not write and why.
func TestACPWriteErrorRollsBack(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, Caps{FSRead: true, FSWrite: true})
	a, b := filepath.Join(tb.root, "a.txt"), filepath.Join(tb.root, "b.txt")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	written := map[string][]string{}
	tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
		switch method {
		case methodReadTextFile:
			return readTextFileResult{Content: "old\n"}, nil
		case methodWriteTextFile:
			w := params.(wire.WriteTextFileParams)
			if w.Path == b {
				return nil, sdkError("disk full")
			}
			written[w.Path] = append(written[w.Path], w.Content)
			return nil, nil
		}
		return nil, errors.New("unexpected " + method)
	}
	_, err := tb.d.Files("s1", "").Apply(context.Background(), replace("old", "new", a, b))
	var de *tools.DeliveryError
	if !errors.As(err, &de) || de.Path != "b.txt" || de.Reason != "the editor did not write it: disk full" {
		t.Fatalf("Apply: %v", err)
	}
	if got := written[a]; len(got) != 2 || got[0] != "new\n" || got[1] != "old\n" {
		t.Errorf("writes of a.txt: %q, want the new text then the old one back", got)
	}
	// The reads the plan made were the client's: one each.
	if n := tb.client.called(methodReadTextFile); n != 2 {
		t.Errorf("%d fs/read_text_file requests, want 2", n)
	}
}

// TestLateDidChange: the editor answers applied: true for the version
// the edit was made on but reports the change late (Eglot). The edit is
// believed, reads see its text meanwhile, and the user is told when the
// change that comes does not hold it.
func TestLateDidChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, late string
		warned     bool
	}{
		{"holds the edit", "one\nTWO\n", false},
		{"lost the edit", "one\ntwo\nthree\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := newTestbed(t, Caps{ApplyEdit: true, DocChanges: true})
			path := filepath.Join(tb.root, "a.txt")
			uri := tb.open(path, "one\ntwo\n")
			tb.client.handle = func(ctx context.Context, method string, params any) (any, error) {
				return applyEditResult{Applied: true}, nil
			}
			f := tb.d.Files("", "")
			if _, err := f.Apply(context.Background(), replace("two", "TWO", path)); err != nil {
				t.Fatal(err)
			}
			ft, err := f.Read(context.Background(), path)
			if err != nil || ft.Text != "one\nTWO\n" || ft.Version != 1 {
				t.Errorf("Read while the didChange is late: %+v, %v; want the edit's text at version 1", ft, err)
			}
			if err := tb.buffers.Change(uri, 2, workspace.UTF16, []workspace.Change{{Text: tc.late}}); err != nil {
				t.Fatal(err)
			}
			select {
			case msg := <-tb.warned:
				if !tc.warned {
					t.Errorf("warned: %s", msg)
				} else if !strings.Contains(msg, "does not hold it") {
					t.Errorf("warning: %s", msg)
				}
			case <-time.After(500 * time.Millisecond):
				if tc.warned {
					t.Error("no warning for a late change without the edit")
				}
			}
			if ft, _ := f.Read(context.Background(), path); ft.Text != tc.late {
				t.Errorf("Read after the didChange: %q, want the mirror's", ft.Text)
			}
		})
	}
}

// ACP's tool-call locations are absolute: a path the tools describe
// relative to the workspace becomes the file's absolute path, and one
// that does not resolve inside it is left as it was, never guessed.
func TestAbsoluteLocations(t *testing.T) {
	tb := newTestbed(t, Caps{})
	got := tb.d.Absolute([]wire.Location{{Path: "src/a.go", Line: 3}, {Path: "../outside.txt"}})
	if want := filepath.Join(tb.root, "src", "a.go"); got[0].Path != want || got[0].Line != 3 {
		t.Errorf("inside: %+v, want %s line 3", got[0], want)
	}
	if got[1].Path != "../outside.txt" {
		t.Errorf("outside: %+v, want it left as it was", got[1])
	}
	if tb.d.Absolute(nil) != nil {
		t.Error("no locations became some")
	}
}
