package rpc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// wsState is what the server derives from the workspace folders: the
// ignore rules and the file watcher. It is rebuilt when the folders change.
//
// Every file a tool touches reads the roots and the ignore rules, and every
// turn the watcher, from many sessions at once: they are published for
// reading without a lock (view, live); mu serialises the changes.
type wsState struct {
	mu      sync.Mutex
	view    atomic.Pointer[wsView]
	watcher *workspace.Watcher
	live    atomic.Pointer[workspace.Watcher] // watcher, once its first scan is done
	// The watcher is rebuilt by one loop at a time (building), which
	// takes the latest view at each round: changes that arrive while a
	// rebuild is pending or running are folded into the next round
	// (dirty), and the scan in progress is stopped (stopScan) since it no
	// longer matters. retired holds the watchers to close, off the
	// request path.
	building bool
	dirty    bool
	stopScan context.CancelFunc
	retired  []*workspace.Watcher
	// rebuilds counts the rounds the loop began, for tests.
	rebuilds atomic.Int64
	// beforeRebuild, when a test sets it, runs at the start of each
	// round with the round's context.
	beforeRebuild func(context.Context)
	// locks serialise edits per file across sessions; not guarded by mu
	// (FileLocks has its own lock).
	locks workspace.FileLocks
}

// wsView is the folders' roots and ignore rules, replaced whole when the
// folders change.
type wsView struct {
	// roots confines paths to the folders; rebuilt with them, since
	// building it evaluates symlinks on disk.
	roots    *workspace.Roots
	rootsErr error
	ignore   *workspace.IgnoreMatcher
	folders  []string // symlinks evaluated, for the watcher
}

// daemonStart is when this process started: a temporary file of an atomic
// write older than that was left by a process that died mid-write (this
// one's are all newer), so the cleaning at folder changes may remove it.
var daemonStart = time.Now()

// ignoreMatcher returns the ignore rules for the current folders.
func (s *Server) ignoreMatcher() *workspace.IgnoreMatcher {
	if v := s.ws.view.Load(); v != nil {
		return v.ignore
	}
	s.ws.mu.Lock()
	defer s.ws.mu.Unlock()
	if v := s.ws.view.Load(); v != nil {
		return v.ignore
	}
	// Before the folders are first set: no roots yet.
	s.ws.view.Store(&wsView{ignore: workspace.NewIgnoreMatcher(realFolders(s.folders.Paths()))})
	return s.ws.view.Load().ignore
}

// Watcher returns the file watcher once its first scan has finished, or
// nil while it is still scanning or when there is no folder.
func (s *Server) Watcher() *workspace.Watcher { return s.ws.live.Load() }

// foldersChanged rebuilds the ignore rules and restarts the watcher over
// the new folders. The watcher's first scan walks the whole tree, so it
// runs in the background, with the cleaning of stale temporary files.
func (s *Server) foldersChanged() {
	s.foldersChangedThen(func(fn func()) { s.goBackground(fn) })
	s.mcp.SetRoots(s.folders.Paths())
}

// foldersChangedThen is foldersChanged with its background work started
// by run: initialize has it start with its answer, which it is not needed
// for (the folders, their roots and ignore rules are in place at once).
// A thousand changes in a row cost a thousand cheap views and at most two
// rebuilds of the watcher: the one running, stopped, and one for the
// latest folders.
func (s *Server) foldersChangedThen(run func(func())) {
	folders := realFolders(s.folders.Paths())
	ignore := workspace.NewIgnoreMatcher(folders)
	var roots *workspace.Roots
	rootsErr := errors.New("no workspace folder is open: the editor sent no workspace folder or root")
	if paths := s.folders.Paths(); len(paths) > 0 {
		roots, rootsErr = workspace.NewRoots(paths...)
	}
	if roots != nil {
		roots.SetOwn(s.ownPaths())
	}
	s.ws.mu.Lock()
	s.ws.view.Store(&wsView{roots: roots, rootsErr: rootsErr, ignore: ignore, folders: folders})
	if s.ws.watcher != nil {
		s.ws.retired = append(s.ws.retired, s.ws.watcher)
	}
	s.ws.watcher = nil
	s.ws.live.Store(nil)
	s.ws.dirty = true
	if s.ws.stopScan != nil {
		s.ws.stopScan()
	}
	start := !s.ws.building && !s.closing
	s.ws.building = s.ws.building || start
	s.ws.mu.Unlock()
	if start {
		run(s.rebuildWatcher) // run may take ws.mu: not held
	}
}

// rebuildWatcher is the loop foldersChanged starts: a round per batch of
// changes, each over the view current when it begins, until no change is
// left or the connection closes.
func (s *Server) rebuildWatcher() {
	for {
		s.ws.mu.Lock()
		retired := s.ws.retired
		s.ws.retired = nil
		if s.closing || !s.ws.dirty {
			s.ws.building = false
			s.ws.mu.Unlock()
			closeWatchers(retired)
			return
		}
		s.ws.dirty = false
		v := s.ws.view.Load()
		ctx, cancel := context.WithCancel(s.bgCtx)
		s.ws.stopScan = cancel
		hook := s.ws.beforeRebuild
		s.ws.mu.Unlock()
		closeWatchers(retired)
		s.ws.rebuilds.Add(1)
		if hook != nil {
			hook(ctx)
		}
		s.rebuildRound(ctx, v)
		cancel()
	}
}

// rebuildRound cleans stale temporary files and builds the watcher for
// the view v, publishing it unless a newer view or the connection's end
// came meanwhile.
func (s *Server) rebuildRound(ctx context.Context, v *wsView) {
	var cleaning sync.WaitGroup
	defer cleaning.Wait()
	if v.roots != nil {
		// Beside the watcher's scan: neither needs the other, and both
		// walk the whole tree.
		cleaning.Go(func() {
			for _, p := range v.roots.CleanStaleTemps(ctx, daemonStart, func(abs string) bool { return v.ignore.Ignored(abs, true) }) {
				s.log.Info("removed a temporary file left by an interrupted write", "path", p)
			}
		})
	}
	if len(v.folders) == 0 || ctx.Err() != nil {
		return
	}
	w, err := workspace.NewWatcher(v.folders, workspace.WatchOptions{
		Ignore:   v.ignore,
		Context:  ctx,
		OnChange: func(evs []workspace.Event) { s.log.Debug("files changed on disk", "events", len(evs)) },
		OnError:  func(err error) { s.log.Warn("watcher", "err", err) },
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("file watching is off", "err", err)
		}
		return
	}
	s.ws.mu.Lock()
	if s.ws.view.Load() == v && !s.ws.dirty && !s.closing {
		s.ws.watcher = w
		s.ws.live.Store(w)
		w = nil
	}
	s.ws.mu.Unlock()
	if w != nil { // superseded or shutting down meanwhile
		w.Close()
	}
}

func closeWatchers(ws []*workspace.Watcher) {
	for _, w := range ws {
		w.Close()
	}
}

// goBackground runs fn in a goroutine that stopWorkspace waits for, and
// reports whether it did: once the connection is closing nothing new
// starts (a WaitGroup must not grow while it is being waited on).
func (s *Server) goBackground(fn func()) bool {
	s.ws.mu.Lock()
	defer s.ws.mu.Unlock()
	if s.closing {
		return false
	}
	s.bg.Go(fn)
	return true
}

// stopWorkspace stops the watcher and waits for background work.
func (s *Server) stopWorkspace() {
	s.ws.mu.Lock()
	s.closing = true
	s.ws.mu.Unlock()
	s.bgCancel()
	s.mcp.Close()
	s.bg.Wait()
	s.mcp.Close() // any started while the above waited
	s.ws.mu.Lock()
	w := s.ws.watcher
	s.ws.watcher = nil
	s.ws.live.Store(nil)
	retired := s.ws.retired
	s.ws.retired = nil
	s.ws.mu.Unlock()
	if w != nil {
		w.Close()
	}
	closeWatchers(retired)
}

// realFolders evaluates symlinks so that paths compare with what
// workspace.Roots resolves; a folder that cannot be evaluated is dropped.
func realFolders(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// folderFromPath makes a workspace folder of an absolute path.
func folderFromPath(p string) (workspace.Folder, error) {
	if !filepath.IsAbs(p) {
		return workspace.Folder{}, fmt.Errorf("%q is not an absolute path", p)
	}
	p = filepath.Clean(p)
	return workspace.Folder{URI: workspace.PathToURI(p), Name: filepath.Base(p), Path: p}, nil
}

// admitFolders returns the folders that may become workspace folders:
// the root of the file system and the home folder itself are refused
// (workspace.BroadFolder) unless the settings allow them, and the user is
// told why through window/showMessage.
func (s *Server) admitFolders(ctx context.Context, add []workspace.Folder) []workspace.Folder {
	if s.CurrentSettings().AllowBroadWorkspace {
		return add
	}
	var ok []workspace.Folder
	for _, f := range add {
		if err := s.checkFolder(f.Path); err != nil {
			s.log.Warn("workspace folder refused", "path", f.Path, "err", err)
			s.showToClient(ctx, wire.MessageWarning, "cline-ls: "+err.Error())
			continue
		}
		ok = append(ok, f)
	}
	return ok
}

// checkFolder refuses a folder too broad to open to the tools, unless the
// settings allow it.
func (s *Server) checkFolder(path string) error {
	if s.CurrentSettings().AllowBroadWorkspace {
		return nil
	}
	if why := workspace.BroadFolder(path, s.opts.Getenv("HOME")); why != "" {
		return fmt.Errorf("the workspace folder %s was not opened: %s, and the agent's tools would reach every file in it; open a project folder, or set allowBroadWorkspace: true to allow it", path, why)
	}
	return nil
}

// showToClient sends window/showMessage (type 1 error, 2 warning, 3 info).
func (s *Server) showToClient(ctx context.Context, typ wire.MessageType, msg string) {
	if s.conn == nil || !s.client().Messages() {
		return
	}
	if err := s.conn.Notify(ctx, methodShowMessage, wire.MessageParams{Type: typ, Message: msg}); err != nil {
		s.log.Debug("showMessage not sent", "err", err)
	}
}
