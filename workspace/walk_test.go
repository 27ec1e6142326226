package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// deepChain makes depth nested folders "d" under a new folder, each with
// a file f.txt, and a .gitignore at level 3 hiding *.log, and returns the
// folder (symlinks evaluated).
func deepChain(tb testing.TB, depth int) string {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		tb.Fatal(err)
	}
	for level := range depth {
		if err := dir.Mkdir("d", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := dir.WriteFile("f.txt", []byte("x"), 0o644); err != nil {
			tb.Fatal(err)
		}
		if level == 3 {
			if err := dir.WriteFile(GitignoreFile, []byte("*.log\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		next, err := dir.OpenRoot("d")
		dir.Close()
		if err != nil {
			tb.Fatal(err)
		}
		dir = next
	}
	dir.Close()
	return root
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// TestDirReaderDeepChain: reading every folder of a chain through one
// DirReader lists what os.ReadDir lists, keeps a bounded number of
// handles, and releases them all at Close.
func TestDirReaderDeepChain(t *testing.T) {
	root := deepChain(t, 300)
	r, err := NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	rd := r.DirReader()
	dir := root
	for level := range 300 {
		entries, err := rd.ReadDir(dir)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		want := []string{"d", "f.txt"}
		if level == 3 {
			want = []string{GitignoreFile, "d", "f.txt"}
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("level %d: %v, want %v", level, got, want)
		}
		dir = filepath.Join(dir, "d")
	}
	if n := openFDs(t) - before; n > 2*dirHandlesKeep+2 {
		t.Errorf("%d descriptors open during the walk, want at most %d", n, 2*dirHandlesKeep)
	}
	rd.Close()
	if n := openFDs(t) - before; n > 0 {
		t.Errorf("%d descriptors left open after Close", n)
	}
	// A path outside is refused, as Roots.ReadDir refuses it.
	if _, err := r.DirReader().ReadDir(filepath.Dir(root)); err == nil {
		t.Error("a folder outside the workspace was read")
	}
}

// TestDirHandlesConcurrent: workers reading sibling and nested folders at
// once get their listings while handles come and go.
func TestDirHandlesConcurrent(t *testing.T) {
	root := deepChain(t, 200)
	base, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	h := NewDirHandles(base)
	defer h.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rel := "."
			for level := range 200 {
				entries, err := h.ReadDir(rel)
				if err != nil || len(entries) < 2 {
					t.Errorf("worker %d level %d: %v %v", w, level, entries, err)
					return
				}
				rel = filepath.Join(rel, "d")
			}
		})
	}
	wg.Wait()
}

// TestIgnoredDeep: the rules of a folder apply to everything below it
// however deep, asked in walk order or not, and a folder past the rules
// is not hidden.
func TestIgnoredDeep(t *testing.T) {
	root := deepChain(t, 40)
	walked := NewIgnoreMatcher([]string{root})
	dir := root
	for level := range 40 {
		log := filepath.Join(dir, "x.log")
		txt := filepath.Join(dir, "f.txt")
		wantLog := level >= 3 // the .gitignore is at level 3: it applies there and below
		if got := walked.Ignored(log, false); got != wantLog {
			t.Errorf("level %d: %s ignored = %v, want %v", level, log, got, wantLog)
		}
		if walked.Ignored(txt, false) || walked.Ignored(filepath.Join(dir, "d"), true) {
			t.Errorf("level %d: f.txt or d ignored", level)
		}
		// A matcher asked only this path, deep first, agrees.
		if fresh := NewIgnoreMatcher([]string{root}); fresh.Ignored(log, false) != wantLog {
			t.Errorf("level %d: a fresh matcher disagrees on %s", level, log)
		}
		dir = filepath.Join(dir, "d")
	}
	// A folder hidden by a rule hides what is below it.
	hide := NewIgnoreMatcher([]string{root}, "d/d/")
	deep := filepath.Join(root, "d", "d", "d", "d", "f.txt")
	if !hide.Ignored(deep, false) {
		t.Errorf("%s is under an ignored folder but not ignored", deep)
	}
	if hide.Ignored(filepath.Join(root, "d", "f.txt"), false) {
		t.Error("a file above the ignored folder is ignored")
	}
	// Invalidate drops what folders below inherited.
	if err := os.WriteFile(filepath.Join(root, GitignoreFile), []byte("f.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	walked.Invalidate(root)
	if !walked.Ignored(deep, false) {
		t.Error("a new rule at the root does not reach a deep file after Invalidate")
	}
}

// TestWatcherStopsAtMaxDepth: the watcher indexes a deep tree down to
// MaxWalkDepth, says once that it went no deeper, and is ready.
func TestWatcherStopsAtMaxDepth(t *testing.T) {
	root := deepChain(t, MaxWalkDepth+50)
	var mu sync.Mutex
	var errs []error
	w, err := NewWatcher([]string{root}, WatchOptions{OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n := len(w.Files()); n != MaxWalkDepth+1 { // f.txt at levels 0..MaxWalkDepth-1, and one .gitignore
		t.Errorf("%d files indexed, want %d", n, MaxWalkDepth+1)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), fmt.Sprintf("is %d folder levels deep; the watcher does not go deeper", MaxWalkDepth)) {
		t.Errorf("errors reported: %v, want one saying where the watcher stopped", errs)
	}
}

// BenchmarkDeepIgnored asks the ignore rules about every entry of a
// chain of nested folders, in walk order, with no depth limit: the cost
// per entry must not grow with the depth beyond reading the path.
func BenchmarkDeepIgnored(b *testing.B) {
	for _, depth := range []int{250, 500, 1000, 2000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			root, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			paths := make([]string, depth)
			dir := root
			for i := range paths {
				dir = filepath.Join(dir, "d")
				paths[i] = dir
			}
			for b.Loop() {
				m := NewIgnoreMatcher([]string{root}, "*.log", "build/")
				for _, p := range paths {
					m.Ignored(p, true)
					m.Ignored(p+"/f.go", false)
				}
			}
		})
	}
}
