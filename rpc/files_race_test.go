package rpc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// filesServer is a server with one workspace folder and no connection:
// enough for disk edits through files.Apply.
func filesServer(t *testing.T) (*Server, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Options{})
	f, err := folderFromPath(root)
	if err != nil {
		t.Fatal(err)
	}
	s.folders.Add(f)
	s.foldersChanged()
	t.Cleanup(s.stopWorkspace)
	return s, root
}

// TestApplyConcurrentEditsOfOneFile: 4 sessions make 50 edits each, all at
// once, every one to its own line of one large file. Each edit reads the
// file, changes its line and writes it whole; without a lock per file two
// edits plan on the same text and the later write erases the earlier one.
func TestApplyConcurrentEditsOfOneFile(t *testing.T) {
	s, root := filesServer(t)
	const sessions, perSession = 4, 50
	path := filepath.Join(root, "big.txt")
	var b strings.Builder
	for i := range sessions * perSession {
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("x", 1000)) // 200 KB in all
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied, failed := 0, 0
	for sn := range sessions {
		f := s.newFiles() // one per session, as the daemon makes them
		for k := range perSession {
			n := sn*perSession + k
			wg.Go(func() {
				_, err := f.Apply(ctx, func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
					ft, err := read(path)
					if err != nil {
						return nil, err
					}
					old := fmt.Sprintf("line %03d ", n)
					if !strings.Contains(ft.Text, old) {
						return nil, fmt.Errorf("line %d not found", n)
					}
					text := strings.Replace(ft.Text, old, fmt.Sprintf("EDIT %03d ", n), 1)
					return []tools.Change{{Path: path, OldText: ft.Text, Existed: true, NewText: &text}}, nil
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed++
					t.Errorf("edit %d: %v", n, err)
					return
				}
				applied++
			})
		}
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for n := range sessions * perSession {
		if !strings.Contains(string(data), fmt.Sprintf("EDIT %03d ", n)) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d edits reported applied are missing from the file", lost, applied)
	}
	if n := s.locks.Len(); n != 0 {
		t.Errorf("%d locks left held", n)
	}
	t.Logf("concurrent edits: %d sessions × %d edits, %d applied, %d failed, %d lost", sessions, perSession, applied, failed, lost)
}

// TestApplyMultiFileLocksDoNotDeadlock: calls that edit the same two files
// in opposite orders all finish (locks are taken without waiting while a
// plan runs, and in order when a call starts over).
func TestApplyMultiFileLocksDoNotDeadlock(t *testing.T) {
	s, root := filesServer(t)
	a, b := filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	const calls = 40
	for i := range calls {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		f := s.newFiles()
		wg.Go(func() {
			_, err := f.Apply(ctx, func(ctx context.Context, read func(string) (tools.FileText, error)) ([]tools.Change, error) {
				var out []tools.Change
				for _, p := range []string{first, second} {
					ft, err := read(p)
					if err != nil {
						return nil, err
					}
					text := ft.Text + "x\n"
					out = append(out, tools.Change{Path: p, OldText: ft.Text, Existed: true, NewText: &text})
				}
				return out, nil
			})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for _, p := range []string{a, b} {
		data, _ := os.ReadFile(p)
		if n := strings.Count(string(data), "x\n"); n != calls {
			t.Errorf("%s has %d of %d appended lines", filepath.Base(p), n, calls)
		}
	}
}
