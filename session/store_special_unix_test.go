//go:build unix

package session

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/workspace"
)

// A session file (or its lock file) that is a FIFO, a link to
// /dev/zero, a folder or a file over the cap: Load, Open and Create fail
// at once naming the file, List skips it, and nothing blocks or reads
// without bound.
func TestSessionSpecialFiles(t *testing.T) {
	kinds := []struct {
		name string
		make func(t *testing.T, p string)
		want any
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, new(*workspace.NotRegularFileError)},
		{"dev-zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, new(*workspace.NotRegularFileError)},
		{"folder", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, new(*workspace.NotRegularFileError)},
		{"huge", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(`{"type":"meta","time":"2026-01-01T00:00:00Z","meta":{"sessionId":"s1","cwd":"/w"}}`+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, 1<<40); err != nil {
				t.Fatal(err)
			}
		}, new(*workspace.FileTooLargeError)},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			s, _, logs := newTestStore(t, StoreOptions{})
			storeCreate(t, s, "ok", "/w", storeT0).Close()
			p := s.path("s1")
			k.make(t, p)
			returnsOrFail(t, func() {
				if _, _, err := s.Load("s1"); !errors.As(err, k.want) || !strings.Contains(err.Error(), p) {
					t.Errorf("Load: %v, want %T naming %s", err, k.want, p)
				}
				if k.name != "huge" {
					if l, err := s.Open("s1"); !errors.As(err, k.want) {
						if l != nil {
							l.Close()
						}
						t.Errorf("Open: %v, want %T", err, k.want)
					}
				}
				list, err := s.List("")
				if err != nil || len(list) != 1 || list[0].SessionID != "ok" {
					t.Errorf("List: %+v, %v; want only the good session", list, err)
				}
				if k.name == "huge" && !strings.Contains(logs.String(), "s1") {
					t.Errorf("List did not log the session it skipped: %s", logs)
				}
			})
			// The same special file as the lock: claiming fails, naming it.
			lock := s.lockPath("ok")
			os.Remove(lock)
			if k.name == "huge" {
				return
			}
			k.make(t, lock)
			returnsOrFail(t, func() {
				if l, err := s.Open("ok"); err == nil || !strings.Contains(err.Error(), lock) {
					if l != nil {
						l.Close()
					}
					t.Errorf("Open with a special lock file: %v, want an error naming %s", err, lock)
				}
			})
		})
	}
}

// returnsOrFail fails the test if fn has not returned long after any honest run
// would have: what is asserted is that it returns.
func returnsOrFail(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("blocked on a special file")
	}
}

// The sessions folder itself swapped for a FIFO under a running store:
// List and Create fail at once naming it.
func TestSessionsFolderSwappedForFIFO(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	if err := os.RemoveAll(s.dir); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.dir, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	returnsOrFail(t, func() {
		if _, err := s.List(""); err == nil || !strings.Contains(err.Error(), s.dir) {
			t.Errorf("List: %v, want an error naming %s", err, s.dir)
		}
		if l, err := s.Create(Meta{SessionID: "s1", Cwd: "/w"}); err == nil {
			l.Close()
			t.Error("Create in a FIFO succeeded")
		}
	})
}
