package workspace

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// rebuildGuard bounds the waits below; it turns a hang into a failure and
// is never what a test measures.
const rebuildGuard = 60 * time.Second

// testLive is a Live over folders of its own, and how the connection's
// end stops it.
func testLive() (l *Live, folders *Folders, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	folders = &Folders{}
	l = NewLive(ctx, LiveOptions{Folders: folders})
	return l, folders, func() {
		l.Close()
		cancel()
		l.Wait()
	}
}

// changeFolders makes n changes of the folders, as n
// workspace/didChangeWorkspaceFolders do, swapping folders a and b each
// time, and returns the folder open after the last.
func changeFolders(t *testing.T, l *Live, folders *Folders, n int, a, b string) string {
	t.Helper()
	open := a
	for range n {
		from, to := open, a
		if open == a {
			to = b
		}
		f, err := FolderFromPath(to)
		if err != nil {
			t.Fatal(err)
		}
		folders.Remove(from)
		folders.Add(f)
		l.Changed(nil)
		open = to
	}
	return open
}

// blockFirstRebuild makes the watcher's first rebuild wait until release
// is closed, so that every change of a test arrives while it runs.
func blockFirstRebuild(l *Live) (started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	first := true
	l.mu.Lock()
	l.beforeRebuild = func(context.Context) {
		if first {
			first = false
			close(started)
			<-release
		}
	}
	l.mu.Unlock()
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
	l, folders, stop := testLive()
	t.Cleanup(stop)
	started, release := blockFirstRebuild(l)
	f, _ := FolderFromPath(a)
	folders.Add(f)
	l.Changed(nil)
	<-started
	last := changeFolders(t, l, folders, 1000, a, b)
	close(release)
	deadline := time.Now().Add(rebuildGuard)
	for l.Watcher() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no watcher after the changes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The loop has ended once it finds nothing left to do.
	for {
		l.mu.Lock()
		building := l.building
		l.mu.Unlock()
		if !building {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuild loop did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := l.rebuilds.Load(); n != 2 {
		t.Errorf("%d watcher rebuilds for 1,000 changes during one, want 2", n)
	}
	if w := l.Watcher(); w == nil || len(w.Folders()) != 1 || w.Folders()[0] != last {
		t.Errorf("the watcher is not over the last folder %s", last)
	}
}

// TestShutdownSkipsPendingRebuilds: a shutdown during a rebuild stops it
// and runs none of those the changes after it asked for.
func TestShutdownSkipsPendingRebuilds(t *testing.T) {
	a, b := twoFolders(t)
	l, folders, stop := testLive()
	started, release := blockFirstRebuild(l)
	f, _ := FolderFromPath(a)
	folders.Add(f)
	l.Changed(nil)
	<-started
	changeFolders(t, l, folders, 1000, a, b)
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	deadline := time.Now().Add(rebuildGuard)
	for {
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
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
	if n := l.rebuilds.Load(); n != 1 {
		t.Errorf("%d watcher rebuilds, want only the one stopped by the shutdown", n)
	}
	if l.Watcher() != nil {
		t.Error("a watcher outlived the shutdown")
	}
}

// TestLiveRootsAndAdmission: no roots before a folder, the roots of the
// folders after; the root of the file system refused, and the user told,
// unless the settings allow it.
func TestLiveRootsAndAdmission(t *testing.T) {
	allow := false
	var told []error
	folders := &Folders{}
	ctx, cancel := context.WithCancel(context.Background())
	l := NewLive(ctx, LiveOptions{Folders: folders, AllowBroad: func() bool { return allow },
		Home: func() string { return "/home/nobody" }, Refused: func(err error) { told = append(told, err) }})
	defer func() { l.Close(); cancel(); l.Wait() }()
	if _, err := l.Roots(); err == nil {
		t.Error("roots before any folder")
	}
	if l.Ignore() == nil {
		t.Error("no ignore rules before any folder")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	proj, _ := FolderFromPath(dir)
	root, _ := FolderFromPath("/")
	got := l.Admit([]Folder{root, proj})
	if len(got) != 1 || got[0].Path != dir || len(told) != 1 {
		t.Fatalf("Admit = %v, told %v", got, told)
	}
	if err := l.Check("/"); err == nil {
		t.Error("Check(/) allowed")
	}
	allow = true
	if got := l.Admit([]Folder{root}); len(got) != 1 || l.Check("/") != nil {
		t.Errorf("allowBroadWorkspace: Admit = %v", got)
	}
	folders.Add(proj)
	l.Changed(func(fn func()) { fn() }) // the rebuild in line
	r, err := l.Roots()
	if err != nil || r == nil {
		t.Fatalf("Roots = %v, %v", r, err)
	}
	if w := l.Watcher(); w == nil || len(w.Folders()) != 1 || w.Folders()[0] != dir {
		t.Errorf("watcher after an inline rebuild: %v", w)
	}
}

// TestLiveGoAfterClose: background work started before Close is waited
// for; none starts after.
func TestLiveGoAfterClose(t *testing.T) {
	l, _, stop := testLive()
	ran := make(chan struct{})
	if !l.Go(func() { close(ran) }) {
		t.Fatal("Go refused before Close")
	}
	stop()
	select {
	case <-ran:
	default:
		t.Error("Wait returned before the work ended")
	}
	if l.Go(func() {}) {
		t.Error("Go ran work after Close")
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, path string
		want      bool
	}{{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a", "/", false}, {"/a/b", "/a", false}} {
		if got := Within(c.dir, c.path); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.dir, c.path, got)
		}
	}
}
