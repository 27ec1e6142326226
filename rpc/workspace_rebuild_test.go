package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/workspace"
)

// rebuildGuard bounds the waits below; it turns a hang into a failure and
// is never what a test measures.
const rebuildGuard = 60 * time.Second

// changeFolders sends n workspace/didChangeWorkspaceFolders through their
// handler, swapping folders a and b each time, and returns the folder
// open after the last.
func changeFolders(t *testing.T, s *Server, n int, a, b string) string {
	t.Helper()
	open := a
	for range n {
		from, to := open, a
		if open == a {
			to = b
		}
		raw, _ := json.Marshal(map[string]any{"event": map[string]any{
			"added":   []any{map[string]any{"uri": workspace.PathToURI(to), "name": filepath.Base(to)}},
			"removed": []any{map[string]any{"uri": workspace.PathToURI(from), "name": filepath.Base(from)}},
		}})
		if err := s.didChangeFolders(raw); err != nil {
			t.Fatal(err)
		}
		open = to
	}
	return open
}

// blockFirstRebuild makes the watcher's first rebuild wait until release
// is closed, so that every change of a test arrives while it runs.
func blockFirstRebuild(s *Server) (started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	first := true
	s.ws.mu.Lock()
	s.ws.beforeRebuild = func(context.Context) {
		if first {
			first = false
			close(started)
			<-release
		}
	}
	s.ws.mu.Unlock()
	return started, release
}

func twoFolders(t *testing.T) (string, string) {
	a, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestFolderChangesCoalesce: 1,000 folder changes while the watcher is
// being rebuilt give one more rebuild, over the last folders, not 1,000.
func TestFolderChangesCoalesce(t *testing.T) {
	a, b := twoFolders(t)
	s := NewServer(Options{})
	t.Cleanup(s.stopWorkspace)
	started, release := blockFirstRebuild(s)
	f, _ := folderFromPath(a)
	s.folders.Add(f)
	s.foldersChanged()
	<-started
	last := changeFolders(t, s, 1000, a, b)
	close(release)
	deadline := time.Now().Add(rebuildGuard)
	for s.Watcher() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no watcher after the changes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The loop has ended once it finds nothing left to do.
	for {
		s.ws.mu.Lock()
		building := s.ws.building
		s.ws.mu.Unlock()
		if !building {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuild loop did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.ws.rebuilds.Load(); n != 2 {
		t.Errorf("%d watcher rebuilds for 1,000 changes during one, want 2", n)
	}
	if w := s.Watcher(); w == nil || len(w.Folders()) != 1 || w.Folders()[0] != last {
		t.Errorf("the watcher is not over the last folder %s", last)
	}
}

// TestShutdownSkipsPendingRebuilds: a shutdown during a rebuild stops it
// and runs none of those the changes after it asked for.
func TestShutdownSkipsPendingRebuilds(t *testing.T) {
	a, b := twoFolders(t)
	s := NewServer(Options{})
	started, release := blockFirstRebuild(s)
	f, _ := folderFromPath(a)
	s.folders.Add(f)
	s.foldersChanged()
	<-started
	changeFolders(t, s, 1000, a, b)
	stopped := make(chan struct{})
	go func() {
		s.stopWorkspace()
		close(stopped)
	}()
	deadline := time.Now().Add(rebuildGuard)
	for {
		s.ws.mu.Lock()
		closing := s.closing
		s.ws.mu.Unlock()
		if closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shutdown never began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(rebuildGuard):
		t.Fatal("the shutdown waited on rebuilds")
	}
	if n := s.ws.rebuilds.Load(); n != 1 {
		t.Errorf("%d watcher rebuilds, want only the one stopped by the shutdown", n)
	}
	if s.Watcher() != nil {
		t.Error("a watcher outlived the shutdown")
	}
}
