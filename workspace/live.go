package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Live is what a connection derives from its workspace folders — the
// roots, the ignore rules and the file watcher, rebuilt when the folders
// change — and the connection's background work, which its end waits for.
//
// Every file a tool touches reads the roots and the ignore rules, and every
// turn the watcher, from many sessions at once: they are published for
// reading without a lock (view, live); mu serialises the changes.
type Live struct {
	opts LiveOptions
	ctx  context.Context // the connection's background context

	mu      sync.Mutex
	view    atomic.Pointer[liveView]
	watcher *Watcher
	live    atomic.Pointer[Watcher] // watcher, once its first scan is done
	// The watcher is rebuilt by one loop at a time (building), which
	// takes the latest view at each round: changes that arrive while a
	// rebuild is pending or running are folded into the next round
	// (dirty), and the scan in progress is stopped (stopScan) since it no
	// longer matters. retired holds the watchers to close, off the
	// request path.
	building bool
	dirty    bool
	stopScan context.CancelFunc
	retired  []*Watcher
	closing  bool           // guarded by mu: nothing new starts
	bg       sync.WaitGroup // background work, Go's

	// rebuilds counts the rounds the loop began, for tests.
	rebuilds atomic.Int64
	// beforeRebuild, when a test sets it, runs at the start of each
	// round with the round's context.
	beforeRebuild func(context.Context)
}

// LiveOptions are what a Live reads of the connection.
type LiveOptions struct {
	Folders *Folders
	// Own is the daemon's own folders the roots must never resolve to,
	// asked at each change of the folders (the state directory follows
	// the settings).
	Own func() *OwnPaths
	// AllowBroad reports whether the settings let "/" or the home folder
	// itself be a workspace folder; Home is the home folder.
	AllowBroad func() bool
	Home       func() string
	// Refused tells the user a folder was not admitted, and why.
	Refused func(err error)
	Log     *slog.Logger
}

// liveView is the folders' roots and ignore rules, replaced whole when the
// folders change.
type liveView struct {
	// roots confines paths to the folders; rebuilt with them, since
	// building it evaluates symlinks on disk.
	roots    *Roots
	rootsErr error
	ignore   *IgnoreMatcher
	folders  []string // symlinks evaluated, for the watcher
}

// errNoFolder is the roots' error while no folder is open.
var errNoFolder = errors.New("no workspace folder is open: the editor sent no workspace folder or root")

// daemonStart is when this process started: a temporary file of an atomic
// write older than that was left by a process that died mid-write (this
// one's are all newer), so the cleaning at folder changes may remove it.
var daemonStart = time.Now()

// NewLive returns the folders' state before their first change; ctx ends
// the connection's background work.
func NewLive(ctx context.Context, opts LiveOptions) *Live {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Folders == nil {
		opts.Folders = &Folders{}
	}
	if opts.Own == nil {
		opts.Own = func() *OwnPaths { return nil }
	}
	if opts.AllowBroad == nil {
		opts.AllowBroad = func() bool { return false }
	}
	if opts.Home == nil {
		opts.Home = func() string { return "" }
	}
	if opts.Refused == nil {
		opts.Refused = func(error) {}
	}
	return &Live{opts: opts, ctx: ctx}
}

// Roots returns the roots of the current folders, or why there are none.
func (l *Live) Roots() (*Roots, error) {
	v := l.view.Load()
	if v == nil || v.roots == nil && v.rootsErr == nil {
		return nil, errNoFolder
	}
	return v.roots, v.rootsErr
}

// Ignore returns the ignore rules for the current folders.
func (l *Live) Ignore() *IgnoreMatcher {
	if v := l.view.Load(); v != nil {
		return v.ignore
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v := l.view.Load(); v != nil {
		return v.ignore
	}
	// Before the folders are first set: no roots yet.
	l.view.Store(&liveView{ignore: NewIgnoreMatcher(RealFolders(l.opts.Folders.Paths()))})
	return l.view.Load().ignore
}

// Watcher returns the file watcher once its first scan has finished, or
// nil while it is still scanning or when there is no folder.
func (l *Live) Watcher() *Watcher { return l.live.Load() }

// Changed rebuilds the ignore rules and restarts the watcher over the
// folders as they are now. The watcher's first scan walks the whole tree,
// so it runs in the background, with the cleaning of stale temporary
// files: started by run, or by Go when run is nil (initialize has it
// start with its answer, which it is not needed for: the folders, their
// roots and ignore rules are in place at once). A thousand changes in a
// row cost a thousand cheap views and at most two rebuilds of the
// watcher: the one running, stopped, and one for the latest folders.
func (l *Live) Changed(run func(func())) {
	if run == nil {
		run = func(fn func()) { l.Go(fn) }
	}
	paths := l.opts.Folders.Paths()
	folders := RealFolders(paths)
	ignore := NewIgnoreMatcher(folders)
	var roots *Roots
	rootsErr := errNoFolder
	if len(paths) > 0 {
		roots, rootsErr = NewRoots(paths...)
	}
	if roots != nil {
		roots.SetOwn(l.opts.Own())
	}
	l.mu.Lock()
	l.view.Store(&liveView{roots: roots, rootsErr: rootsErr, ignore: ignore, folders: folders})
	if l.watcher != nil {
		l.retired = append(l.retired, l.watcher)
	}
	l.watcher = nil
	l.live.Store(nil)
	l.dirty = true
	if l.stopScan != nil {
		l.stopScan()
	}
	start := !l.building && !l.closing
	l.building = l.building || start
	l.mu.Unlock()
	if start {
		run(l.rebuildWatcher) // run may take mu: not held
	}
}

// rebuildWatcher is the loop Changed starts: a round per batch of
// changes, each over the view current when it begins, until no change is
// left or the connection closes.
func (l *Live) rebuildWatcher() {
	for {
		l.mu.Lock()
		retired := l.retired
		l.retired = nil
		if l.closing || !l.dirty {
			l.building = false
			l.mu.Unlock()
			closeWatchers(retired)
			return
		}
		l.dirty = false
		v := l.view.Load()
		ctx, cancel := context.WithCancel(l.ctx)
		l.stopScan = cancel
		hook := l.beforeRebuild
		l.mu.Unlock()
		closeWatchers(retired)
		l.rebuilds.Add(1)
		if hook != nil {
			hook(ctx)
		}
		l.rebuildRound(ctx, v)
		cancel()
	}
}

// rebuildRound cleans stale temporary files and builds the watcher for
// the view v, publishing it unless a newer view or the connection's end
// came meanwhile.
func (l *Live) rebuildRound(ctx context.Context, v *liveView) {
	var cleaning sync.WaitGroup
	defer cleaning.Wait()
	log := l.opts.Log
	if v.roots != nil {
		// Beside the watcher's scan: neither needs the other, and both
		// walk the whole tree.
		cleaning.Go(func() {
			for _, p := range v.roots.CleanStaleTemps(ctx, daemonStart, func(abs string) bool { return v.ignore.Ignored(abs, true) }) {
				log.Info("removed a temporary file left by an interrupted write", "path", p)
			}
		})
	}
	if len(v.folders) == 0 || ctx.Err() != nil {
		return
	}
	w, err := NewWatcher(v.folders, WatchOptions{
		Ignore:   v.ignore,
		Context:  ctx,
		OnChange: func(evs []Event) { log.Debug("files changed on disk", "events", len(evs)) },
		OnError:  func(err error) { log.Warn("watcher", "err", err) },
	})
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("file watching is off", "err", err)
		}
		return
	}
	l.mu.Lock()
	if l.view.Load() == v && !l.dirty && !l.closing {
		l.watcher = w
		l.live.Store(w)
		w = nil
	}
	l.mu.Unlock()
	if w != nil { // superseded or shutting down meanwhile
		w.Close()
	}
}

func closeWatchers(ws []*Watcher) {
	for _, w := range ws {
		w.Close()
	}
}

// Go runs fn in a goroutine that Wait waits for, and reports whether it
// did: once Close is called nothing new starts (a WaitGroup must not grow
// while it is being waited on).
func (l *Live) Go(fn func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.bg.Go(fn)
	return true
}

// Close begins the connection's end: no background work starts after it,
// and no rebuild of the watcher begins or publishes its watcher.
func (l *Live) Close() {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
}

// Wait waits for the background work Go started, then closes the
// watchers. Close comes first.
func (l *Live) Wait() {
	l.bg.Wait()
	l.mu.Lock()
	w := l.watcher
	l.watcher = nil
	l.live.Store(nil)
	retired := l.retired
	l.retired = nil
	l.mu.Unlock()
	if w != nil {
		w.Close()
	}
	closeWatchers(retired)
}

// Admit returns the folders of add that may become workspace folders:
// the root of the file system and the home folder itself are refused
// (BroadFolder) unless the settings allow them, and the user is told why
// (LiveOptions.Refused).
func (l *Live) Admit(add []Folder) []Folder {
	if l.opts.AllowBroad() {
		return add
	}
	var ok []Folder
	for _, f := range add {
		if err := l.Check(f.Path); err != nil {
			l.opts.Log.Warn("workspace folder refused", "path", f.Path, "err", err)
			l.opts.Refused(err)
			continue
		}
		ok = append(ok, f)
	}
	return ok
}

// Check refuses a folder too broad to open to the tools, unless the
// settings allow it.
func (l *Live) Check(path string) error {
	if l.opts.AllowBroad() {
		return nil
	}
	if why := BroadFolder(path, l.opts.Home()); why != "" {
		return fmt.Errorf("the workspace folder %s was not opened: %s, and the agent's tools would reach every file in it; open a project folder, or set allowBroadWorkspace: true to allow it", path, why)
	}
	return nil
}

// RealFolders evaluates symlinks so that paths compare with what Roots
// resolves; a folder that cannot be evaluated is dropped.
func RealFolders(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// RealPath evaluates symlinks in path (or, for a file not yet on disk, in
// its folder), so buffers are found under the same path that
// Roots.Resolve gives tools.
func RealPath(path string) string {
	if path == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// Within reports whether path is dir or inside it.
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// FolderFromPath makes a workspace folder of an absolute path.
func FolderFromPath(p string) (Folder, error) {
	if !filepath.IsAbs(p) {
		return Folder{}, fmt.Errorf("%q is not an absolute path", p)
	}
	p = filepath.Clean(p)
	return Folder{URI: PathToURI(p), Name: filepath.Base(p), Path: p}, nil
}
