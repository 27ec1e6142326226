//go:build unix

package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guard runs fn and fails the test if it has not returned long after
// any honest run would have: what is asserted is that it returns.
func guard(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s has not returned: it blocks on a special file", what)
	}
}

// special puts at p each kind of file the state directory must not
// trust: a FIFO (opening it waits for a writer), a link to /dev/zero
// (endless), a folder, a sparse file over any read cap.
var specials = []struct {
	name string
	make func(t *testing.T, p string)
}{
	{"fifo", func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}},
	{"dev-zero", func(t *testing.T, p string) {
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}},
	{"folder", func(t *testing.T, p string) {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}},
	{"huge", func(t *testing.T, p string) {
		if err := os.WriteFile(p, []byte(`{"version":1,"checkpoints":[`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 1<<40); err != nil {
			t.Fatal(err)
		}
	}},
	{"not-json", func(t *testing.T, p string) {
		if err := os.WriteFile(p, []byte("{\"version\":1,\"checkp"), 0o600); err != nil {
			t.Fatal(err)
		}
	}},
}

// An index that cannot be one is moved aside by the next checkpoint,
// which says so; the store works on, and nothing blocks or reads
// without bound on the way.
func TestSpecialIndexIsMovedAside(t *testing.T) {
	for _, sp := range specials {
		t.Run(sp.name, func(t *testing.T) {
			w := newWS(t, map[string]string{"a.txt": "one\n"})
			w.checkpoint("s1", 1, nil)
			w.s.Close()
			idx := filepath.Join(w.s.dir, "index.json")
			if err := os.Remove(idx); err != nil {
				t.Fatal(err)
			}
			sp.make(t, idx)
			guard(t, "Open, List and Checkpoint", func() {
				w.open()
				if got := w.s.List("s1"); len(got) != 0 {
					t.Errorf("List over a damaged index: %d checkpoints", len(got))
				}
				info := w.checkpoint("s1", 2, nil)
				if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], idx) || !strings.Contains(info.Notes[0], "index.json.bad-") {
					t.Errorf("notes %q: want one naming %s and where it went", info.Notes, idx)
				}
				if again := w.checkpoint("s1", 3, nil); len(again.Notes) != 0 {
					t.Errorf("notes of the next checkpoint: %q, want none (said once)", again.Notes)
				}
				w.write("a.txt", "two\n")
				if p := w.restore("s1", info.ID, nil, true); len(p.Failed) > 0 {
					t.Errorf("restore in the new index: %+v", p.Failed)
				}
				w.want("a.txt", "one\n")
			})
			aside, _ := filepath.Glob(idx + ".bad-*")
			if len(aside) != 1 {
				t.Errorf("moved aside: %v, want one file", aside)
			}
		})
	}
}

// A blob replaced by a special file fails the restore of that file with
// a reason naming it; nothing blocks.
func TestSpecialBlobFailsItsFile(t *testing.T) {
	for _, sp := range specials[:4] {
		t.Run(sp.name, func(t *testing.T) {
			w := newWS(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
			info := w.checkpoint("s1", 1, nil)
			w.write("a.txt", "two\n")
			w.write("b.txt", "bzz\n")
			w.checkpoint("s1", 2, nil)
			blob := w.s.blobs.path(hashOf([]byte("one\n")))
			if err := os.Remove(blob); err != nil {
				t.Fatal(err)
			}
			sp.make(t, blob)
			guard(t, "Restore", func() {
				p := w.restore("s1", info.ID, nil, true)
				if len(p.Failed) != 1 || !strings.Contains(p.Failed[0].Reason, blob) {
					t.Errorf("failed %+v, want a.txt's failure naming %s", p.Failed, blob)
				}
				w.want("b.txt", "bee\n")
			})
		})
	}
}

// The store's lock file replaced by a special file: the operation fails
// naming it, without blocking.
func TestSpecialLockFile(t *testing.T) {
	for _, sp := range specials[:3] {
		t.Run(sp.name, func(t *testing.T) {
			w := newWS(t, map[string]string{"a.txt": "one\n"})
			lock := filepath.Join(w.s.dir, "lock")
			os.Remove(lock)
			sp.make(t, lock)
			guard(t, "Checkpoint", func() {
				_, err := w.s.Checkpoint(context.Background(), Request{SessionID: "s1", Turn: 1})
				if err == nil || !strings.Contains(err.Error(), lock) {
					t.Errorf("checkpoint with a special lock file: %v, want an error naming %s", err, lock)
				}
			})
		})
	}
}

// The blobs folder, or the store's whole folder, removed under a running
// store: the next checkpoint makes it again, says so, and is itself
// restorable.
func TestRemovedBlobsFolderIsMadeAgain(t *testing.T) {
	for _, what := range []string{"blobs", "store"} {
		t.Run(what, func(t *testing.T) {
			w := newWS(t, map[string]string{"a.txt": "one\n", "sub/b.txt": "bee\n"})
			w.checkpoint("s1", 1, nil)
			gone := filepath.Join(w.s.dir, "blobs")
			if what == "store" {
				gone = w.s.dir
			}
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			info := w.checkpoint("s1", 2, nil)
			if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "blobs") {
				t.Errorf("notes %q: want one saying the blobs folder was made again", info.Notes)
			}
			w.write("a.txt", "two\n")
			w.write("sub/b.txt", "bzz\n")
			if p := w.restore("s1", info.ID, nil, true); len(p.Failed) > 0 {
				t.Fatalf("restore of the checkpoint after the blobs folder was made again: %+v", p.Failed)
			}
			w.want("a.txt", "one\n")
			w.want("sub/b.txt", "bee\n")
		})
	}
}
