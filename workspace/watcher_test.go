package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// watchTimeout only guards against a hang; no test depends on it.
const watchTimeout = 20 * time.Second

// watchTestRoot returns a real (symlink-free) temporary folder.
func watchTestRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// watchStart runs a Watcher over root whose batches arrive on the
// returned channel. Every batch is checked for duplicate paths: debouncing
// must leave at most one event per path and batch.
func watchStart(t *testing.T, root string, ignore *IgnoreMatcher) (*Watcher, <-chan Event) {
	t.Helper()
	ch := make(chan Event, 4096)
	w, err := NewWatcher([]string{root}, WatchOptions{
		Debounce: 20 * time.Millisecond,
		Ignore:   ignore,
		OnChange: func(batch []Event) {
			seen := make(map[string]bool)
			for _, e := range batch {
				if seen[e.Path] {
					t.Errorf("batch %v reports %s twice", batch, e.Path)
				}
				seen[e.Path] = true
				ch <- e
			}
		},
		OnError: func(err error) { t.Errorf("watcher error: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w, ch
}

// watchWaitEvents collects events until done says the ones seen so far are
// enough, and returns them all.
func watchWaitEvents(t *testing.T, ch <-chan Event, what string, done func(seen []Event) bool) []Event {
	t.Helper()
	var seen []Event
	timeout := time.After(watchTimeout)
	for !done(seen) {
		select {
		case e := <-ch:
			seen = append(seen, e)
		case <-timeout:
			t.Fatalf("waiting for %s; got %v", what, seen)
		}
	}
	return seen
}

// watchHasEvent returns a watchWaitEvents condition: an event op on path (and from
// oldPath, for a rename).
func watchHasEvent(op EventOp, path, oldPath string) func([]Event) bool {
	return func(seen []Event) bool {
		return slices.ContainsFunc(seen, func(e Event) bool {
			return e.Op == op && e.Path == path && e.OldPath == oldPath
		})
	}
}

func watchAllOf(conds ...func([]Event) bool) func([]Event) bool {
	return func(seen []Event) bool {
		for _, c := range conds {
			if !c(seen) {
				return false
			}
		}
		return true
	}
}

func watchWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWatchCreateModifyDeleteRename(t *testing.T) {
	root := watchTestRoot(t)
	stable := filepath.Join(root, "stable.txt")
	watchWriteFile(t, stable, "unchanged")
	w, ch := watchStart(t, root, nil)

	if st, ok := w.Stat(stable); !ok || st.Size != int64(len("unchanged")) || st.Gen != 0 {
		t.Fatalf("initial scan: Stat(stable.txt) = %+v, %v", st, ok)
	}

	a := filepath.Join(root, "a.txt")
	watchWriteFile(t, a, "one")
	watchWaitEvents(t, ch, "create", watchHasEvent(EventCreate, a, ""))
	if st, ok := w.Stat(a); !ok || st.Size != 3 {
		t.Errorf("after create: Stat(a.txt) = %+v, %v", st, ok)
	}

	gen := w.Generation()
	f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(" two"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	watchWaitEvents(t, ch, "modify", watchHasEvent(EventModify, a, ""))
	if !w.ChangedSince(a, gen) {
		t.Error("ChangedSince(a.txt) = false after a modification")
	}
	if w.ChangedSince(stable, gen) || w.ChangedSince(stable, 0) {
		t.Error("ChangedSince(stable.txt) = true, but it never changed")
	}
	if st, _ := w.Stat(a); st.Size != int64(len("one two")) {
		t.Errorf("after modify: size %d", st.Size)
	}

	b := filepath.Join(root, "b.txt")
	gen = w.Generation()
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	watchWaitEvents(t, ch, "rename", watchHasEvent(EventRename, b, a))
	if _, ok := w.Stat(a); ok {
		t.Error("old name still indexed after rename")
	}
	if _, ok := w.Stat(b); !ok {
		t.Error("new name not indexed after rename")
	}
	if !w.ChangedSince(a, gen) || !w.ChangedSince(b, gen) {
		t.Error("ChangedSince is false for a side of a rename")
	}

	gen = w.Generation()
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	watchWaitEvents(t, ch, "delete", watchHasEvent(EventDelete, b, ""))
	if _, ok := w.Stat(b); ok {
		t.Error("deleted file still indexed")
	}
	if !w.ChangedSince(b, gen) {
		t.Error("ChangedSince(deleted file) = false")
	}
	if got := w.Files(); !slices.Equal(got, []string{stable}) {
		t.Errorf("Files() = %q, want only stable.txt", got)
	}
}

func TestWatchNewFolders(t *testing.T) {
	root := watchTestRoot(t)
	w, ch := watchStart(t, root, nil)

	// The files are written right after their folders, before the watcher
	// can have added the new folders: only scanning them finds the files.
	deep := filepath.Join(root, "new", "nested", "deeper")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []string{
		filepath.Join(root, "new", "a.txt"),
		filepath.Join(root, "new", "nested", "b.txt"),
		filepath.Join(deep, "c.txt"),
	}
	var conds []func([]Event) bool
	for _, f := range files {
		watchWriteFile(t, f, f)
		conds = append(conds, watchHasEvent(EventCreate, f, ""))
	}
	watchWaitEvents(t, ch, "creates in new folders", watchAllOf(conds...))

	// The new folders are watched: a later file in the deepest one is seen.
	later := filepath.Join(deep, "later.txt")
	watchWriteFile(t, later, "x")
	watchWaitEvents(t, ch, "create in a watched new folder", watchHasEvent(EventCreate, later, ""))

	// Renaming the tree renames every file in it, and the new location is
	// watched under its new name.
	moved := filepath.Join(root, "moved")
	if err := os.Rename(filepath.Join(root, "new"), moved); err != nil {
		t.Fatal(err)
	}
	conds = nil
	for _, f := range append(files, later) {
		to := filepath.Join(moved, strings.TrimPrefix(f, filepath.Join(root, "new")))
		conds = append(conds, watchHasEvent(EventRename, to, f))
	}
	watchWaitEvents(t, ch, "renames of a moved folder's files", watchAllOf(conds...))

	after := filepath.Join(moved, "nested", "deeper", "after.txt")
	watchWriteFile(t, after, "x")
	seen := watchWaitEvents(t, ch, "create in a moved folder", watchHasEvent(EventCreate, after, ""))
	for _, e := range seen {
		if strings.HasPrefix(e.Path, filepath.Join(root, "new")+"/") {
			t.Errorf("event under the folder's old name: %+v", e)
		}
	}
	for _, d := range w.fw.WatchList() {
		if strings.HasPrefix(d+"/", filepath.Join(root, "new")+"/") {
			t.Errorf("still watching the old name %s", d)
		}
	}

	// Removing the tree deletes every file in it.
	if err := os.RemoveAll(moved); err != nil {
		t.Fatal(err)
	}
	conds = nil
	for _, f := range []string{"a.txt", "nested/b.txt", "nested/deeper/c.txt", "nested/deeper/later.txt", "nested/deeper/after.txt"} {
		conds = append(conds, watchHasEvent(EventDelete, filepath.Join(moved, f), ""))
	}
	watchWaitEvents(t, ch, "deletes of a removed tree", watchAllOf(conds...))
	if got := w.Files(); len(got) != 0 {
		t.Errorf("Files() after removing everything = %q", got)
	}
}

func TestWatchIgnoredFolders(t *testing.T) {
	root := watchTestRoot(t)
	ignoreWriteTree(t, root, map[string]string{
		".gitignore":              "node_modules/\n*.log\nbuild/\n",
		"node_modules/pkg/i.js":   "",
		".git/objects/00/abc":     "",
		"src/main.go":             "",
		"old.log":                 "",
		"src/node_modules/m/x.js": "",
	})
	w, ch := watchStart(t, root, NewIgnoreMatcher([]string{root}))

	for _, d := range w.fw.WatchList() {
		if strings.Contains(d, "node_modules") || strings.Contains(d, ".git") {
			t.Errorf("ignored folder %s is watched", d)
		}
	}
	if _, ok := w.Stat(filepath.Join(root, "old.log")); ok {
		t.Error("ignored file indexed")
	}
	if _, ok := w.Stat(filepath.Join(root, "src/main.go")); !ok {
		t.Error("src/main.go not indexed")
	}

	// Changes in ignored places, then one that is not: the kernel queues
	// events in order, so by the time the last one arrives, any event for
	// the ignored ones would have arrived too.
	watchWriteFile(t, filepath.Join(root, "node_modules/pkg/i.js"), "changed")
	watchWriteFile(t, filepath.Join(root, "node_modules/new.js"), "")
	watchWriteFile(t, filepath.Join(root, ".git/objects/00/def"), "")
	watchWriteFile(t, filepath.Join(root, "debug.log"), "")
	if err := os.MkdirAll(filepath.Join(root, "build/out"), 0o755); err != nil {
		t.Fatal(err)
	}
	watchWriteFile(t, filepath.Join(root, "build/out/app"), "")
	sentinel := filepath.Join(root, "src/sentinel.go")
	watchWriteFile(t, sentinel, "")
	seen := watchWaitEvents(t, ch, "the sentinel", watchHasEvent(EventCreate, sentinel, ""))
	if len(seen) != 1 {
		t.Errorf("events for ignored paths: %v", seen)
	}
	for _, d := range w.fw.WatchList() {
		if strings.Contains(d, "build") {
			t.Errorf("new ignored folder %s is watched", d)
		}
	}

	// Editing .gitignore takes effect at once: *.tmp becomes ignored and
	// *.log no longer is, so the existing log files join the index.
	watchWriteFile(t, filepath.Join(root, ".gitignore"), "node_modules/\n*.tmp\nbuild/\n")
	watchWaitEvents(t, ch, "logs revealed by the new rules", watchAllOf(
		watchHasEvent(EventModify, filepath.Join(root, ".gitignore"), ""),
		watchHasEvent(EventCreate, filepath.Join(root, "old.log"), ""),
		watchHasEvent(EventCreate, filepath.Join(root, "debug.log"), ""),
	))
	watchWriteFile(t, filepath.Join(root, "x.tmp"), "")
	sentinel2 := filepath.Join(root, "sentinel2.go")
	watchWriteFile(t, sentinel2, "")
	seen = watchWaitEvents(t, ch, "the second sentinel", watchHasEvent(EventCreate, sentinel2, ""))
	for _, e := range seen {
		if e.Path != sentinel2 {
			t.Errorf("unexpected event %+v", e)
		}
	}
}

func TestWatchCloseWaitsForCallback(t *testing.T) {
	root := watchTestRoot(t)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	closed := make(chan struct{})
	w, err := NewWatcher([]string{root}, WatchOptions{
		Debounce: 10 * time.Millisecond,
		OnChange: func([]Event) {
			select {
			case <-closed:
				t.Error("OnChange called after Close returned")
			default:
			}
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	watchWriteFile(t, filepath.Join(root, "a"), "")
	select {
	case <-entered:
	case <-time.After(watchTimeout):
		t.Fatal("no callback")
	}

	// Close must block while the callback runs. Looking once, at once,
	// passed a Close that does not wait at all: it had not run yet. So
	// wait until it has either returned (a failure) or is parked inside
	// Close, then give it a while more: parked is not enough, since
	// Close also parks briefly while fsnotify shuts down.
	closeDone := make(chan error)
	go func() { closeDone <- w.Close() }()
	for !testenv.Parked("workspace.(*Watcher).Close") {
		select {
		case err := <-closeDone:
			t.Fatalf("Close returned (%v) while a callback was running", err)
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case err := <-closeDone:
		t.Fatalf("Close returned (%v) while a callback was running", err)
	case <-time.After(50 * time.Millisecond): // a Close that does not wait returns well within this
	}
	close(release)
	if err := <-closeDone; err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(closed)
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Close waited for the goroutines it started. (fsnotify's own reader
	// signals its end from a deferred call, so it may still be unwinding.)
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, fn := range []string{"(*Watcher).run", "(*Watcher).drainErrors"} {
		if strings.Contains(stacks, fn) {
			t.Errorf("goroutine %s still running after Close", fn)
		}
	}
	// The index stays readable after Close.
	if _, ok := w.Stat(filepath.Join(root, "a")); !ok {
		t.Error("index lost after Close")
	}
	watchWriteFile(t, filepath.Join(root, "b"), "") // must not reach the callback
}

// watchManual builds a watcher without its goroutines: the test reads
// fsnotify's events itself and decides when to flush, so what lands in
// one batch is under its control.
func watchManual(t *testing.T, root string) (*Watcher, *[]Event) {
	t.Helper()
	var got []Event
	w, err := newWatcher([]string{root}, WatchOptions{OnChange: func(b []Event) { got = append(got, b...) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, &got
}

// watchCollectUntil moves fsnotify events into the pending set until one for
// path arrives.
func watchCollectUntil(t *testing.T, w *Watcher, path string) {
	t.Helper()
	timeout := time.After(watchTimeout)
	for {
		select {
		case ev := <-w.fw.Events:
			w.pending[filepath.Clean(ev.Name)] |= ev.Op
			if ev.Name == path {
				return
			}
		case err := <-w.fw.Errors:
			t.Fatalf("fsnotify error: %v", err)
		case <-timeout:
			t.Fatalf("no event for %s", path)
		}
	}
}

func TestWatchBatchCoalesces(t *testing.T) {
	root := watchTestRoot(t)
	existing := filepath.Join(root, "existing.txt")
	watchWriteFile(t, existing, "0")
	w, got := watchManual(t, root)

	created := filepath.Join(root, "created.txt")
	for i := range 50 {
		watchWriteFile(t, created, fmt.Sprint(i))
		watchWriteFile(t, existing, fmt.Sprint(i))
	}
	transient := filepath.Join(root, "transient.txt")
	watchWriteFile(t, transient, "gone soon")
	if err := os.Remove(transient); err != nil {
		t.Fatal(err)
	}
	from, to := filepath.Join(root, "from.txt"), filepath.Join(root, "to.txt")
	watchWriteFile(t, from, "moving")
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	sentinel := filepath.Join(root, "sentinel")
	watchWriteFile(t, sentinel, "")
	watchCollectUntil(t, w, sentinel)
	gen := w.Generation()
	w.flush()

	want := []Event{
		{Op: EventCreate, Path: created, Gen: gen + 1},
		{Op: EventModify, Path: existing, Gen: gen + 1},
		{Op: EventCreate, Path: sentinel, Gen: gen + 1},
		{Op: EventCreate, Path: to, Gen: gen + 1}, // created and renamed in one burst
	}
	if !slices.Equal(*got, want) {
		t.Errorf("one batch of a burst:\n got %+v\nwant %+v", *got, want)
	}
	if w.Generation() != gen+1 {
		t.Errorf("generation %d after one batch from %d", w.Generation(), gen)
	}
}

func TestWatchRenameAcrossBatches(t *testing.T) {
	root := watchTestRoot(t)
	from, to := filepath.Join(root, "from.txt"), filepath.Join(root, "to.txt")
	watchWriteFile(t, from, "moving")
	w, got := watchManual(t, root)

	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	// Flush between the two halves of the rename.
	watchCollectUntil(t, w, from)
	w.flush()
	if len(*got) != 0 {
		t.Fatalf("first half of a rename reported at once: %v", *got)
	}
	if _, ok := w.Stat(from); ok {
		t.Error("renamed-away file still indexed")
	}
	watchCollectUntil(t, w, to)
	w.flush()
	if want := []Event{{Op: EventRename, Path: to, OldPath: from, Gen: w.Generation()}}; !slices.Equal(*got, want) {
		t.Errorf("got %+v, want %+v", *got, want)
	}

	// A file renamed out of the workspace is reported deleted after one
	// more batch.
	*got = nil
	outside := filepath.Join(t.TempDir(), "out.txt")
	if err := os.Rename(to, outside); err != nil {
		t.Fatal(err)
	}
	watchCollectUntil(t, w, to)
	w.flush()
	if len(*got) != 0 {
		t.Fatalf("rename away reported at once: %v", *got)
	}
	w.flush()
	if want := []Event{{Op: EventDelete, Path: to, Gen: w.Generation()}}; !slices.Equal(*got, want) {
		t.Errorf("got %+v, want %+v", *got, want)
	}
}

func TestWatchOverflowRescans(t *testing.T) {
	root := watchTestRoot(t)
	gone := filepath.Join(root, "gone.txt")
	kept := filepath.Join(root, "kept.txt")
	watchWriteFile(t, gone, "x")
	watchWriteFile(t, kept, "x")
	w, got := watchManual(t, root)

	// Change the disk while losing the events, as a queue overflow would.
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	added := filepath.Join(root, "sub", "added.txt")
	if err := os.MkdirAll(filepath.Dir(added), 0o755); err != nil {
		t.Fatal(err)
	}
	watchWriteFile(t, added, "y")
	sentinel := filepath.Join(root, "sentinel")
	watchWriteFile(t, sentinel, "")
	watchCollectUntil(t, w, sentinel)
	clear(w.pending)

	w.overflow.Store(true)
	w.flush()
	gen := w.Generation()
	want := []Event{
		{Op: EventDelete, Path: gone, Gen: gen},
		{Op: EventCreate, Path: sentinel, Gen: gen},
		{Op: EventCreate, Path: added, Gen: gen},
	}
	if !slices.Equal(*got, want) {
		t.Errorf("rescan after overflow:\n got %+v\nwant %+v", *got, want)
	}
	if !slices.Contains(w.fw.WatchList(), filepath.Dir(added)) {
		t.Error("folder found by the rescan is not watched")
	}
}

func TestWatchEventOpString(t *testing.T) {
	for op, want := range map[EventOp]string{EventCreate: "create", EventModify: "modify", EventDelete: "delete", EventRename: "rename", 0: "EventOp(0)"} {
		if op.String() != want {
			t.Errorf("%d.String() = %q, want %q", op, op.String(), want)
		}
	}
}
