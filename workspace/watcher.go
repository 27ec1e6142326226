package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the watcher waits for a burst of file system
// events to end before it reports them: long enough to fold an editor's
// save or a "git checkout" into one batch, short enough to feel immediate.
const DefaultDebounce = 75 * time.Millisecond

// watchMaxDelayFactor bounds how long a never-ending burst (a process
// appending to a log) can postpone a report: this many debounce periods.
const watchMaxDelayFactor = 10

// watchMaxTombs bounds the memory kept for deleted files.
const watchMaxTombs = 1 << 16

// EventOp is the kind of change an Event reports.
type EventOp uint8

// The kinds of change. A file that is created and deleted within one
// debounce period produces nothing; one that is created and then written
// produces a single EventCreate.
const (
	EventCreate EventOp = iota + 1
	EventModify
	EventDelete
	EventRename
)

// String returns the name of the change.
func (op EventOp) String() string {
	switch op {
	case EventCreate:
		return "create"
	case EventModify:
		return "modify"
	case EventDelete:
		return "delete"
	case EventRename:
		return "rename"
	}
	return fmt.Sprintf("EventOp(%d)", uint8(op))
}

// Event is one change to a file (not a folder) of the workspace.
type Event struct {
	Op      EventOp
	Path    string // absolute; for EventRename the new location
	OldPath string // for EventRename, the previous location
	Gen     uint64 // the generation in which the change was seen
}

// FileState is what the watcher's index holds about a file.
type FileState struct {
	Size    int64
	ModTime time.Time
	Gen     uint64 // generation of the last change seen; 0 if none since the watch began
}

// WatchOptions configure a Watcher. The zero value is usable.
type WatchOptions struct {
	// Debounce is the quiet period that ends a burst; 0 means DefaultDebounce.
	Debounce time.Duration
	// Ignore hides files and folders from the watcher; ignored folders are
	// not watched at all. Nil means a matcher over the watched folders with
	// no extra patterns. The watcher invalidates it when ignore files change.
	Ignore *IgnoreMatcher
	// OnChange receives each batch of events, sorted by path, on the
	// watcher's goroutine: it must not block for long and must not call
	// Close. The index already reflects the batch when it is called.
	OnChange func([]Event)
	// OnError receives problems that do not stop the watcher (a folder
	// that cannot be watched, an event queue overflow). Same goroutine
	// rules as OnChange; it may also be called from NewWatcher.
	OnError func(error)
	// Context, when set, ends the initial scan early: NewWatcher then
	// fails with its error. A scan of a big tree that no longer matters
	// (the folders changed again, the daemon is shutting down) need not
	// run to its end.
	Context context.Context
}

// Watcher watches the workspace folders recursively and keeps an index of
// their files (size, modification time, generation of the last change).
// fsnotify watches single folders, so the Watcher adds every folder that
// is not ignored, including new ones as they appear, scanning each new
// folder so files created in it before its watch was in place are seen.
//
// The index is eventually consistent: a change becomes visible one
// debounce period after it happens. Code about to overwrite a file should
// still compare the file itself; the index answers "did anything change
// since generation g" cheaply for the common case.
//
// Each batch of changes increments the generation. To learn whether a
// file changed after reading it, take Generation() before the read and
// ask ChangedSince(path, gen) later.
type Watcher struct {
	folders  []string
	debounce time.Duration
	ignore   *IgnoreMatcher
	onChange func([]Event)
	onError  func(error)
	fw       *fsnotify.Watcher

	// Owned by the run goroutine (by NewWatcher before it starts).
	scanCtx context.Context // the initial scan's, nil after it
	dirs    map[string]*watchDir
	pending map[string]fsnotify.Op
	limbo   []watchGone // files renamed away last batch, still unpaired

	overflow atomic.Bool   // the kernel dropped events: rescan everything
	tooDeep  atomic.Bool   // a folder past MaxWalkDepth was met, and reported
	nudge    chan struct{} // wakes run when overflow is set

	mu    sync.RWMutex // guards files, tombs and gen against readers
	files map[string]watchEntry
	tombs map[string]uint64 // deleted path → generation of the deletion
	gen   uint64

	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// watchDir is a watched folder and the names of its indexed children.
type watchDir struct {
	files map[string]struct{}
	dirs  map[string]struct{}
}

type watchEntry struct {
	info fs.FileInfo // from Lstat: a symlink is indexed as itself
	gen  uint64
}

// watchGone is a file that left the index in a batch.
type watchGone struct {
	path    string
	info    fs.FileInfo
	renamed bool // it went away by a rename: its new name may follow
}

// watchBatch collects the changes of one flush.
type watchBatch struct {
	gen      uint64
	appeared []string
	modified []string
	gone     []watchGone
	changed  bool
}

// NewWatcher starts watching folders (absolute, clean, symlinks evaluated:
// Roots.Folders gives them). The initial scan happens before it returns,
// so the index is complete at generation 0.
func NewWatcher(folders []string, opts WatchOptions) (*Watcher, error) {
	w, err := newWatcher(folders, opts)
	if err != nil {
		return nil, err
	}
	w.wg.Add(2)
	go w.run()
	go w.drainErrors()
	return w, nil
}

// newWatcher does NewWatcher's work short of starting its goroutines, so
// tests can feed events and flush by hand.
func newWatcher(folders []string, opts WatchOptions) (*Watcher, error) {
	fw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, fmt.Errorf("workspace: start file watcher: %w", err)
	}
	w := &Watcher{
		folders:  append([]string(nil), folders...),
		debounce: opts.Debounce,
		ignore:   opts.Ignore,
		onChange: opts.OnChange,
		onError:  opts.OnError,
		fw:       fw,
		dirs:     make(map[string]*watchDir),
		pending:  make(map[string]fsnotify.Op),
		nudge:    make(chan struct{}, 1),
		files:    make(map[string]watchEntry),
		tombs:    make(map[string]uint64),
		done:     make(chan struct{}),
	}
	if w.debounce <= 0 {
		w.debounce = DefaultDebounce
	}
	if w.ignore == nil {
		w.ignore = NewIgnoreMatcher(w.folders)
	}
	w.scanCtx = opts.Context
	initial := &watchBatch{}
	for _, f := range w.folders {
		if err := fw.Add(f); err != nil {
			fw.Close()
			return nil, fmt.Errorf("workspace: watch %s: %w", f, err)
		}
		w.scanDir(f, initial)
	}
	if ctx := w.scanCtx; ctx != nil && ctx.Err() != nil {
		fw.Close()
		return nil, fmt.Errorf("workspace: watch: the first scan was stopped: %w", ctx.Err())
	}
	w.scanCtx = nil
	return w, nil
}

// Close stops watching and waits for the watcher's goroutines to end,
// including an OnChange call in progress. It is safe to call more than
// once; the index stays readable.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.done)
		w.closeErr = w.fw.Close()
		w.wg.Wait()
	})
	return w.closeErr
}

// Folders returns the folders the watcher watches.
func (w *Watcher) Folders() []string { return slices.Clone(w.folders) }

// Generation returns the current generation.
func (w *Watcher) Generation() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.gen
}

// Stat returns the indexed state of the file at the absolute path, and
// false when the path is not an indexed file (missing, ignored, a folder).
func (w *Watcher) Stat(path string) (FileState, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	e, ok := w.files[filepath.Clean(path)]
	if !ok {
		return FileState{}, false
	}
	return FileState{Size: e.info.Size(), ModTime: e.info.ModTime(), Gen: e.gen}, true
}

// ChangedSince reports whether the file at the absolute path was created,
// modified, deleted or renamed (either way) in a generation after gen.
// Ignored and unknown paths report false; so may a deletion long ago, as
// only the most recent deletions are remembered.
func (w *Watcher) ChangedSince(path string, gen uint64) bool {
	path = filepath.Clean(path)
	w.mu.RLock()
	defer w.mu.RUnlock()
	if e, ok := w.files[path]; ok {
		return e.gen > gen
	}
	if g, ok := w.tombs[path]; ok {
		return g > gen
	}
	return false
}

// Files returns the absolute paths of all indexed files, sorted.
func (w *Watcher) Files() []string {
	w.mu.RLock()
	out := make([]string, 0, len(w.files))
	for p := range w.files {
		out = append(out, p)
	}
	w.mu.RUnlock()
	sort.Strings(out)
	return out
}

// run collects fsnotify events and flushes them once a burst is over.
func (w *Watcher) run() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var burstStart time.Time
	armed := false
	arm := func() {
		now := time.Now()
		if !armed {
			burstStart, armed = now, true
		}
		d := w.debounce
		if rest := watchMaxDelayFactor*w.debounce - now.Sub(burstStart); rest < d {
			d = max(rest, 0)
		}
		timer.Reset(d)
	}
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.pending[filepath.Clean(ev.Name)] |= ev.Op
			arm()
		case <-w.nudge:
			arm()
		case <-timer.C:
			armed = false
			w.flush()
			if len(w.limbo) > 0 {
				arm() // give a rename's second half one more period
			}
		}
	}
}

// drainErrors reads fsnotify's error channel on its own goroutine: fsnotify
// can report an error while holding the lock that Add needs, so run (which
// calls Add) must never be the only reader.
func (w *Watcher) drainErrors() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.overflow.Store(true)
				select {
				case w.nudge <- struct{}{}:
				default:
				}
			}
			w.report(fmt.Errorf("workspace: file watcher: %w", err))
		}
	}
}

func (w *Watcher) report(err error) {
	if w.onError != nil {
		w.onError(err)
	}
}

// flush brings the index in line with the disk for every path that had
// events, then reports the differences. It looks at the current state
// rather than replaying events, so coalesced, reordered or partly lost
// events still end in the right index.
func (w *Watcher) flush() {
	w.mu.RLock()
	b := &watchBatch{gen: w.gen + 1}
	w.mu.RUnlock()
	pending := w.pending
	w.pending = make(map[string]fsnotify.Op)

	// New ignore rules must apply to this very batch.
	var rulesChanged []string
	for p := range pending {
		if IsIgnoreFile(filepath.Base(p)) {
			dir := filepath.Dir(p)
			w.ignore.Invalidate(dir)
			rulesChanged = append(rulesChanged, dir)
		}
	}

	paths := make([]string, 0, len(pending))
	for p := range pending {
		paths = append(paths, p)
	}
	sort.Strings(paths) // parents before children

	// Removals first: a folder renamed within the workspace must lose its
	// old watches before its new name is added, or fsnotify would keep
	// reporting the new folder's events under the old name.
	type present struct {
		path string
		info fs.FileInfo
		op   fsnotify.Op
	}
	var existing []present
	for _, p := range paths {
		op := pending[p]
		fi, err := os.Lstat(p)
		if err != nil {
			w.drop(p, op.Has(fsnotify.Rename), b)
			continue
		}
		existing = append(existing, present{p, fi, op})
	}
	for _, e := range existing {
		w.update(e.path, e.info, e.op, b)
	}
	for _, dir := range rulesChanged {
		if _, ok := w.dirs[dir]; ok {
			w.scanDir(dir, b)
		}
	}
	if w.overflow.Swap(false) {
		for _, f := range w.folders {
			w.scanDir(f, b)
		}
	}

	events := w.pair(b)
	if b.changed || len(events) > 0 {
		w.mu.Lock()
		w.gen = b.gen
		w.pruneTombs()
		w.mu.Unlock()
	}
	if len(events) > 0 && w.onChange != nil {
		w.onChange(events)
	}
}

// drop removes whatever the index holds at p (a file or a folder tree).
func (w *Watcher) drop(p string, renamed bool, b *watchBatch) {
	if _, ok := w.dirs[p]; ok {
		w.dropDir(p, renamed, b)
	} else if _, ok := w.files[p]; ok {
		w.dropFile(p, renamed, b)
	}
}

// update handles an existing path that had events.
func (w *Watcher) update(p string, fi fs.FileInfo, op fsnotify.Op, b *watchBatch) {
	if _, ok := w.dirs[filepath.Dir(p)]; !ok && !slices.Contains(w.folders, p) {
		return // a late event from a folder no longer watched
	}
	if fi.IsDir() {
		if _, ok := w.files[p]; ok {
			w.dropFile(p, false, b) // a file replaced by a folder
		}
		if w.ignore.Ignored(p, true) {
			if _, ok := w.dirs[p]; ok {
				w.dropDir(p, false, b)
			}
			return
		}
		if _, known := w.dirs[p]; known && op&^fsnotify.Chmod == 0 {
			return // only its attributes changed
		}
		w.scanDir(p, b)
		return
	}
	if _, ok := w.dirs[p]; ok {
		w.dropDir(p, false, b) // a folder replaced by a file
	}
	if w.ignore.Ignored(p, false) {
		if _, ok := w.files[p]; ok {
			w.dropFile(p, false, b)
		}
		return
	}
	// A write event counts even when size and time look unchanged: file
	// times are coarse, and two writes can land in the same tick.
	w.noteFile(p, fi, op.Has(fsnotify.Write), b)
}

// scanDir makes sure folder dir is watched and its indexed contents match
// the disk, recursively.
func (w *Watcher) scanDir(dir string, b *watchBatch) {
	depth := 0
	for _, f := range w.folders {
		if d := WalkDepth(f, dir); d >= 0 && (depth == 0 || d < depth) {
			depth = d
		}
	}
	w.scanDirAt(dir, depth, b)
}

// scanDirAt is scanDir of a folder depth levels below its watched
// folder. Folders MaxWalkDepth levels down are not entered: the index
// holds them as folders without contents, said once through OnError.
func (w *Watcher) scanDirAt(dir string, depth int, b *watchBatch) {
	if w.scanCtx != nil && w.scanCtx.Err() != nil {
		return
	}
	if depth >= MaxWalkDepth {
		if w.tooDeep.CompareAndSwap(false, true) {
			w.report(fmt.Errorf("workspace: %s is %d folder levels deep; the watcher does not go deeper", dir, depth))
		}
		return
	}
	node, known := w.dirs[dir]
	if !known {
		if err := w.fw.Add(dir); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.report(fmt.Errorf("workspace: watch %s: %w", dir, err))
			}
			// Unwatched, its index would go stale: leave it out.
			return
		}
		node = &watchDir{files: make(map[string]struct{}), dirs: make(map[string]struct{})}
		w.dirs[dir] = node
		if parent, ok := w.dirs[filepath.Dir(dir)]; ok && !slices.Contains(w.folders, dir) {
			parent.dirs[filepath.Base(dir)] = struct{}{}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.dropDir(dir, false, b)
		} else {
			w.report(fmt.Errorf("workspace: scan %s: %w", dir, err))
		}
		return
	}
	seenFiles := make(map[string]bool, len(entries))
	seenDirs := make(map[string]bool)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() { // a symlink to a folder is not: it is indexed, not followed
			if w.ignore.Ignored(p, true) {
				continue
			}
			if _, ok := w.files[p]; ok {
				w.dropFile(p, false, b)
			}
			seenDirs[e.Name()] = true
			w.scanDirAt(p, depth+1, b)
			continue
		}
		if w.ignore.Ignored(p, false) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone since ReadDir; its event will follow
		}
		if _, ok := w.dirs[p]; ok {
			w.dropDir(p, false, b)
		}
		seenFiles[e.Name()] = true
		w.noteFile(p, fi, false, b)
	}
	for name := range node.files {
		if !seenFiles[name] {
			w.dropFile(filepath.Join(dir, name), false, b)
		}
	}
	for name := range node.dirs {
		if !seenDirs[name] {
			w.dropDir(filepath.Join(dir, name), false, b)
		}
	}
}

// noteFile records a file's current state; written forces a modification
// even when the state compares equal.
func (w *Watcher) noteFile(p string, fi fs.FileInfo, written bool, b *watchBatch) {
	old, ok := w.files[p]
	if ok && !written && watchSameState(old.info, fi) {
		return
	}
	w.mu.Lock()
	w.files[p] = watchEntry{info: fi, gen: b.gen}
	delete(w.tombs, p)
	w.mu.Unlock()
	if parent, ok := w.dirs[filepath.Dir(p)]; ok {
		parent.files[filepath.Base(p)] = struct{}{}
	}
	b.changed = true
	if ok {
		b.modified = append(b.modified, p)
	} else {
		b.appeared = append(b.appeared, p)
	}
}

func (w *Watcher) dropFile(p string, renamed bool, b *watchBatch) {
	old, ok := w.files[p]
	if !ok {
		return
	}
	w.mu.Lock()
	delete(w.files, p)
	w.tombs[p] = b.gen
	w.mu.Unlock()
	if parent, ok := w.dirs[filepath.Dir(p)]; ok {
		delete(parent.files, filepath.Base(p))
	}
	b.changed = true
	b.gone = append(b.gone, watchGone{path: p, info: old.info, renamed: renamed})
}

// dropDir forgets a folder tree and removes its watches. The files of a
// renamed folder count as renamed: they may reappear under its new name.
func (w *Watcher) dropDir(dir string, renamed bool, b *watchBatch) {
	node, ok := w.dirs[dir]
	if !ok {
		return
	}
	for name := range node.files {
		w.dropFile(filepath.Join(dir, name), renamed, b)
	}
	for name := range node.dirs {
		w.dropDir(filepath.Join(dir, name), renamed, b)
	}
	// The kernel drops the watch of a deleted folder by itself, and
	// fsnotify that of a moved one, so "no such watch" is expected here.
	_ = w.fw.Remove(dir)
	delete(w.dirs, dir)
	if parent, ok := w.dirs[filepath.Dir(dir)]; ok {
		delete(parent.dirs, filepath.Base(dir))
	}
}

// watchKey buckets files for rename pairing; a rename keeps both.
type watchKey struct {
	size  int64
	mtime int64
}

// pair turns the batch into events. A file that left one path and
// appeared at another, being the same file (same device and inode, size
// and modification time), was renamed. A file renamed away whose new name
// has not shown up waits one more batch before it is reported deleted,
// in case the two halves of the rename straddled a flush.
func (w *Watcher) pair(b *watchBatch) []Event {
	gone := append(w.limbo, b.gone...)
	heldOver := len(w.limbo)
	w.limbo = nil
	byKey := make(map[watchKey][]int)
	for i, g := range gone {
		k := watchKey{g.info.Size(), g.info.ModTime().UnixNano()}
		byKey[k] = append(byKey[k], i)
	}
	used := make([]bool, len(gone))
	var events []Event
	for _, p := range b.appeared {
		fi := w.files[p].info
		ev := Event{Op: EventCreate, Path: p, Gen: b.gen}
		for _, i := range byKey[watchKey{fi.Size(), fi.ModTime().UnixNano()}] {
			if !used[i] && os.SameFile(gone[i].info, fi) {
				used[i] = true
				ev.Op, ev.OldPath = EventRename, gone[i].path
				if ev.OldPath == p {
					// Renamed away and back before we looked.
					ev.Op, ev.OldPath = EventModify, ""
				}
				break
			}
		}
		events = append(events, ev)
	}
	for _, p := range b.modified {
		events = append(events, Event{Op: EventModify, Path: p, Gen: b.gen})
	}
	for i, g := range gone {
		if used[i] {
			continue
		}
		if g.renamed && i >= heldOver {
			w.limbo = append(w.limbo, g)
			continue
		}
		events = append(events, Event{Op: EventDelete, Path: g.path, Gen: b.gen})
	}
	sort.Slice(events, func(i, j int) bool { return events[i].Path < events[j].Path })
	return events
}

// watchSameState reports whether two observations are of the same,
// unmodified file.
func watchSameState(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// pruneTombs forgets the oldest deletions once there are too many; the
// caller holds mu.
func (w *Watcher) pruneTombs() {
	if len(w.tombs) <= watchMaxTombs {
		return
	}
	gens := make([]uint64, 0, len(w.tombs))
	for _, g := range w.tombs {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	cutoff := gens[len(gens)/2]
	for p, g := range w.tombs {
		if g < cutoff {
			delete(w.tombs, p)
		}
	}
}
