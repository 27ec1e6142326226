package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// catchUp is how long an edit waits for the editor's buffer to reach the
// expected text, or to move on after a refusal. Stock clients send
// didChange late (Neovim debounces 150 ms, eglot waits for 0.5 s of idle).
const catchUp = 2 * time.Second

// maxReadBytes refuses to load huge files into memory for a tool.
const maxReadBytes = 64 << 20

// files is the daemon's tools.Files: the workspace folders on disk with the
// editor's open buffers overlaid, and edits delivered to the editor for
// open buffers and atomically to disk for the rest. One is made per
// session, so that what "the model has seen" is per session.
type files struct {
	s         *Server
	sessionID string // for the ACP client's fs methods
	cwd       string // the session's folder: relative paths start there

	mu       sync.Mutex
	seen     map[string]string
	acpReads map[string]tools.FileText // guarded by mu; texts the ACP client gave since the last edit
}

func (s *Server) newFiles() *files {
	return &files{s: s, seen: make(map[string]string), acpReads: make(map[string]tools.FileText)}
}

func (f *files) roots() (*workspace.Roots, error) {
	f.s.ws.mu.Lock()
	defer f.s.ws.mu.Unlock()
	if f.s.ws.roots == nil && f.s.ws.rootsErr == nil {
		return nil, errors.New("no workspace folder is open: the editor sent no workspace folder or root")
	}
	return f.s.ws.roots, f.s.ws.rootsErr
}

func (f *files) Resolve(path string) (string, error) {
	r, err := f.roots()
	if err != nil {
		return "", err
	}
	if f.cwd != "" && path != "" && !filepath.IsAbs(path) {
		// Relative to the session's folder, which may be below a
		// workspace folder; the roots still decide whether it is inside.
		path = filepath.Join(f.cwd, path)
	}
	abs, err := r.Resolve(path)
	if err != nil {
		return "", err
	}
	fi, statErr := r.Stat(abs)
	if f.s.ignoreMatcher().ClineIgnored(abs, statErr == nil && fi.IsDir()) {
		return "", &workspace.PathError{Path: path, Kind: workspace.PathOutside,
			Reason: "the workspace's .clineignore excludes it; the agent may not read or change it"}
	}
	return abs, nil
}

// Disk implements tools.Files.
func (f *files) Disk() (*workspace.Roots, error) { return f.roots() }

func (f *files) Display(abs string) string {
	r, err := f.roots()
	if err != nil {
		return abs
	}
	return r.Display(abs)
}

func (f *files) Root() string {
	if f.cwd != "" {
		return f.cwd
	}
	if p := f.s.folders.Paths(); len(p) > 0 {
		return p[0]
	}
	return ""
}

func (f *files) Ignored(abs string, isDir bool) bool {
	return f.s.ignoreMatcher().Ignored(abs, isDir)
}

func (f *files) Read(ctx context.Context, abs string) (tools.FileText, error) {
	if ft, handled, err := f.acpRead(ctx, abs); handled {
		return ft, err
	}
	if snap, ok := f.s.buffers.GetPath(abs); ok {
		return tools.FileText{Text: snap.Text, Exists: true, Open: true, Version: snap.Version}, nil
	}
	r, err := f.roots()
	if err != nil {
		return tools.FileText{}, err
	}
	data, fi, err := r.ReadFile(abs, maxReadBytes)
	if err != nil {
		// A missing file is no error: FileText.Exists stays false.
		return tools.FileText{}, f.diskErr(abs, err)
	}
	return tools.FileText{Text: string(data), Exists: true, Mode: fi.Mode().Perm()}, nil
}

// diskErr words a disk read error for the model: a missing file is not
// an error for Read (Exists is false), the rest name the file by its
// display path.
func (f *files) diskErr(abs string, err error) error {
	var nr *workspace.NotRegularFileError
	var tl *workspace.FileTooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return fmt.Errorf("%s is a directory, not a file", f.Display(abs))
	case errors.As(err, &nr):
		return &workspace.NotRegularFileError{Path: f.Display(abs), Mode: nr.Mode}
	case errors.As(err, &tl):
		return fmt.Errorf("%s is over the %d MB a tool may load", f.Display(abs), maxReadBytes>>20)
	}
	return err
}

// OpenBuffers lists the files open in the editor, so search_codebase
// searches their unsaved text (tools.OpenBufferLister).
func (f *files) OpenBuffers() []string {
	var out []string
	for _, u := range f.s.buffers.URIs() {
		if snap, ok := f.s.buffers.Get(u); ok && snap.Path != "" {
			out = append(out, snap.Path)
		}
	}
	return out
}

func (f *files) Seen(abs, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[abs] = text
}

func (f *files) SeenText(abs string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[abs]
	return t, ok
}

// errStale means the editor's buffer had moved past the text an edit was
// computed on; Apply re-plans once on the newer text.
var errStale = errors.New("the buffer changed while the edit was being delivered")

// Apply implements tools.Files. Disk changes are written first, each
// atomically and with the old contents kept for rollback; then the open
// buffers are edited through one workspace/applyEdit. If the editor does
// not take the edit, the disk changes are rolled back, so a call changes
// everything it planned or nothing.
//
// The whole read → plan → write runs under the locks of every file it
// reads or changes (workspace.FileLocks, shared by all sessions of the
// connection), so two edits of one file never both plan on the same text
// and one erase the other. Which files a plan touches is only known as it
// runs: a lock is taken when a file is first read or changed, without
// waiting; if another edit holds it, everything is released and the call
// starts over, this time waiting for all the locks it now knows of, in
// order, so that no two calls can wait on each other.
func (f *files) Apply(ctx context.Context, plan tools.Planner) ([]tools.Change, error) {
	r, _ := f.roots() // without folders, the plan's own reads fail and say why
	ls := &lockSet{locks: &f.s.ws.locks, roots: r, held: make(map[string]bool)}
	defer ls.unlockAll()
	for {
		changes, err := f.applyLocked(ctx, plan, ls)
		if !ls.missed {
			return changes, err
		}
		// Nothing was written: a missed lock stops the call before any
		// delivery (lockSet.need runs first).
		ls.unlockAll()
		if err := ls.lockWanted(ctx); err != nil {
			return nil, err
		}
	}
}

// applyLocked is one attempt of Apply with the locks in ls.
func (f *files) applyLocked(ctx context.Context, plan tools.Planner, ls *lockSet) ([]tools.Change, error) {
	changes, err := f.applyOnce(ctx, plan, ls)
	if !errors.Is(err, errStale) {
		return changes, err
	}
	f.s.log.Info("edit met a moved buffer; re-planning on the latest text")
	changes, err = f.applyOnce(ctx, plan, ls)
	if errors.Is(err, errStale) {
		var de *tools.DeliveryError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, &tools.DeliveryError{Path: "the file", Reason: "the user kept editing the buffer while the change was delivered; nothing was changed, read the file again and retry"}
	}
	return changes, err
}

// lockSet is the file locks one Apply holds, and those it found it needs.
type lockSet struct {
	locks *workspace.FileLocks
	roots *workspace.Roots // nil without workspace folders: keys by path
	held  map[string]bool
	want  []string // every key met so far, for the next attempt
	// missed is set when a lock was busy (or its file replaced under it):
	// the attempt must end without delivering and start over.
	missed bool
}

// errLockBusy ends a plan's read of a file whose lock another edit holds.
var errLockBusy = errors.New("another edit of this file is in progress")

func (l *lockSet) key(abs string) string {
	if l.roots == nil {
		return "path:" + abs
	}
	return l.roots.FileKey(abs)
}

// need takes the lock of the file at abs if this call does not hold it.
func (l *lockSet) need(abs string) error {
	if l.missed {
		return errLockBusy
	}
	k := l.key(abs)
	if l.held[k] {
		return nil
	}
	l.want = append(l.want, k)
	if !l.locks.TryLock(k) {
		l.missed = true
		return errLockBusy
	}
	l.held[k] = true
	// The file may have been replaced (a new inode) between naming and
	// locking it: then the lock guards nothing, start over.
	if k2 := l.key(abs); k2 != k {
		l.want = append(l.want, k2)
		l.missed = true
		return errLockBusy
	}
	return nil
}

func (l *lockSet) unlockAll() {
	for k := range l.held {
		l.locks.Unlock(k)
	}
	clear(l.held)
}

// lockWanted waits for every lock met so far, in key order.
func (l *lockSet) lockWanted(ctx context.Context) error {
	slices.Sort(l.want)
	l.want = slices.Compact(l.want)
	l.missed = false
	for _, k := range l.want {
		if err := l.locks.Lock(ctx, k); err != nil {
			return err
		}
		l.held[k] = true
	}
	return nil
}

// staleError carries the path for errStale.
type staleError struct{ de *tools.DeliveryError }

func (e *staleError) Error() string   { return e.de.Error() }
func (e *staleError) Unwrap() []error { return []error{errStale, e.de} }

func (f *files) applyOnce(ctx context.Context, plan tools.Planner, ls *lockSet) ([]tools.Change, error) {
	read := make(map[string]tools.FileText)
	var readMu sync.Mutex
	viaClient := f.acpWrites()
	if viaClient {
		defer f.acpForget()
	}
	reader := func(abs string) (tools.FileText, error) {
		readMu.Lock()
		err := ls.need(abs)
		readMu.Unlock()
		if err != nil {
			return tools.FileText{}, err
		}
		get := f.Read
		if viaClient {
			get = f.acpPlanRead
		}
		ft, err := get(ctx, abs)
		if err == nil {
			readMu.Lock()
			read[abs] = ft
			readMu.Unlock()
		}
		return ft, err
	}
	changes, err := plan(ctx, reader)
	if ls.missed {
		return nil, errLockBusy
	}
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if err := ls.need(c.Path); err != nil {
			return nil, err
		}
		if c.MoveTo != "" {
			if err := ls.need(c.MoveTo); err != nil {
				return nil, err
			}
		}
	}
	var bufEdits []bufferEdit
	var diskOps, clientWrites []tools.Change
	for _, c := range changes {
		if viaClient && c.NewText != nil && c.MoveTo == "" {
			clientWrites = append(clientWrites, c)
			continue
		}
		ft, ok := read[c.Path]
		if ok && ft.Open && c.NewText != nil && c.MoveTo == "" {
			bufEdits = append(bufEdits, bufferEdit{change: c, base: ft})
			continue
		}
		if _, open := f.s.buffers.GetPath(c.Path); open {
			// Deleting or moving a file the user has open would leave
			// the editor holding a buffer for a file that is gone.
			return nil, &tools.DeliveryError{Path: f.Display(c.Path),
				Reason: "the file is open in the editor; deleting or moving an open file is not allowed (ask the user to close it)"}
		}
		diskOps = append(diskOps, c)
	}
	undo, err := f.writeDisk(diskOps)
	if err != nil {
		return nil, err
	}
	if len(clientWrites) > 0 {
		if err := f.acpWrite(ctx, clientWrites); err != nil {
			if uerr := undo(); uerr != nil {
				f.s.log.Error("rollback of disk changes failed", "err", uerr)
			}
			return nil, err
		}
	}
	if len(bufEdits) > 0 {
		if err := f.s.editBuffers(ctx, bufEdits); err != nil {
			if uerr := undo(); uerr != nil {
				f.s.log.Error("rollback of disk changes failed", "err", uerr)
			}
			return nil, err
		}
	}
	return changes, nil
}

// writeDisk applies disk changes in order and returns a function that
// restores what they replaced. Every step goes through the workspace
// folders' handles, so a path swapped for a link out of the workspace
// after the call was checked is refused, not followed.
func (f *files) writeDisk(ops []tools.Change) (undo func() error, err error) {
	if len(ops) == 0 {
		return func() error { return nil }, nil
	}
	r, err := f.roots()
	if err != nil {
		return nil, &tools.DeliveryError{Path: f.Display(ops[0].Path), Reason: err.Error()}
	}
	type saved struct {
		path    string
		data    []byte
		mode    fs.FileMode
		existed bool
	}
	var done []saved
	undo = func() error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			s := done[i]
			if s.existed {
				errs = append(errs, r.WriteFile(s.path, s.data, s.mode))
			} else if err := r.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	remember := func(path string) (saved, error) {
		data, fi, err := r.ReadFile(path, maxReadBytes)
		if errors.Is(err, fs.ErrNotExist) {
			s := saved{path: path}
			done = append(done, s)
			return s, nil
		}
		if err != nil {
			return saved{}, err
		}
		s := saved{path: path, data: data, mode: fi.Mode().Perm(), existed: true}
		done = append(done, s)
		return s, nil
	}
	fail := func(path string, err error) (func() error, error) {
		if uerr := undo(); uerr != nil {
			f.s.log.Error("rollback of disk changes failed", "err", uerr)
		}
		return nil, &tools.DeliveryError{Path: f.Display(path), Reason: err.Error()}
	}
	for _, c := range ops {
		old, err := remember(c.Path)
		if err != nil {
			return fail(c.Path, f.diskErr(c.Path, err))
		}
		if c.NewText == nil {
			if err := r.Remove(c.Path); err != nil {
				return fail(c.Path, err)
			}
			continue
		}
		dst := c.Path
		mode := fs.FileMode(0o644)
		if old.existed {
			mode = old.mode
		}
		if c.MoveTo != "" && c.MoveTo != c.Path {
			dst = c.MoveTo
			if _, err := remember(dst); err != nil {
				return fail(dst, f.diskErr(dst, err))
			}
		}
		if err := r.MkdirParents(dst); err != nil {
			return fail(dst, err)
		}
		if err := r.WriteFile(dst, []byte(*c.NewText), mode); err != nil {
			return fail(dst, err)
		}
		if dst != c.Path {
			if err := r.Remove(c.Path); err != nil {
				return fail(c.Path, err)
			}
		}
	}
	return undo, nil
}

// bufferEdit is one change to an open buffer and the text it was computed
// on.
type bufferEdit struct {
	change tools.Change
	base   tools.FileText
}

// applyEditParams is workspace/applyEdit's params with versioned document
// changes (the daemon only sends edits to documents it mirrors).
type applyEditParams struct {
	Label string            `json:"label,omitempty"`
	Edit  workspaceEditWire `json:"edit"`
}

type workspaceEditWire struct {
	DocumentChanges []textDocumentEditWire `json:"documentChanges,omitempty"`
	Changes         map[string][]diff.Edit `json:"changes,omitempty"`
}

type textDocumentEditWire struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	Edits []diff.Edit `json:"edits"`
}

type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// editBuffers sends one workspace/applyEdit for all edits and waits until
// the mirror shows them. It returns a *staleError when the editor's buffer
// had moved on (the caller re-plans), a *tools.DeliveryError when the
// editor refused, and nil once every buffer holds its new text.
func (s *Server) editBuffers(ctx context.Context, edits []bufferEdit) error {
	enc := s.Encoding()
	var p applyEditParams
	p.Label = "cline-ls"
	uris := make([]string, len(edits))
	for i, e := range edits {
		snap, ok := s.buffers.GetPath(e.change.Path)
		if !ok {
			return &tools.DeliveryError{Path: e.change.Path, Reason: "the editor closed the file"}
		}
		uris[i] = snap.URI
		if snap.Version != e.base.Version {
			return &staleError{&tools.DeliveryError{Path: e.change.Path, Reason: "the buffer changed while the edit was prepared"}}
		}
		var d textDocumentEditWire
		d.TextDocument.URI, d.TextDocument.Version = snap.URI, snap.Version
		d.Edits = diff.TextEdits(e.base.Text, *e.change.NewText, enc)
		p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, d)
	}
	s.mu.Lock()
	versioned := s.caps.docChanges
	canEdit := s.caps.applyEdit
	s.mu.Unlock()
	if !canEdit {
		return &tools.DeliveryError{Path: edits[0].change.Path, Reason: "the editor does not support workspace/applyEdit, so its open buffer cannot be edited"}
	}
	if !versioned {
		// Clients without documentChanges take unversioned edits; the
		// mirror check below still catches a buffer that moved on.
		p.Edit.Changes = make(map[string][]diff.Edit)
		for _, d := range p.Edit.DocumentChanges {
			p.Edit.Changes[d.TextDocument.URI] = d.Edits
		}
		p.Edit.DocumentChanges = nil
	}

	var res applyEditResult
	_, err := s.conn.Call(ctx, methodApplyEdit, p, &res)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || !res.Applied {
		reason := res.FailureReason
		if err != nil {
			reason = err.Error()
		}
		if reason == "" {
			reason = "the editor declined the edit"
		}
		// A refusal because the buffer moved on shows up as a newer
		// version in the mirror, now or shortly (didChange comes late).
		if s.buffersMoved(ctx, edits, uris) {
			return &staleError{&tools.DeliveryError{Path: edits[0].change.Path, Reason: reason}}
		}
		return &tools.DeliveryError{Path: edits[0].change.Path, Reason: reason}
	}
	// applied: true. A client that checks versions itself is believed;
	// for the others trust the mirror, not the answer: Neovim answers true
	// and silently skips an edit for a stale version.
	s.mu.Lock()
	believe := s.caps.checksVersions && versioned
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, catchUp)
	defer cancel()
	for i, e := range edits {
		want := *e.change.NewText
		_, err := s.buffers.Wait(wctx, uris[i], func(snap workspace.Snapshot) bool {
			return snap.Version != e.base.Version && editIntact(e.base.Text, want, snap.Text)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if believe {
				// Its didChange is late; the next read or edit sees the
				// mirror catch up or, if stale, is re-planned.
				continue
			}
			if snap, ok := s.buffers.Get(uris[i]); ok && snap.Version != e.base.Version {
				return &staleError{&tools.DeliveryError{Path: e.change.Path, Reason: "the editor skipped the edit because the buffer had changed"}}
			}
			return &tools.DeliveryError{Path: e.change.Path, Reason: "the editor said the edit was applied but its buffer never showed it"}
		}
	}
	return nil
}

// buffersMoved waits (up to catchUp) for any of the buffers to move past
// the version the edit was computed for.
func (s *Server) buffersMoved(ctx context.Context, edits []bufferEdit, uris []string) bool {
	wctx, cancel := context.WithTimeout(ctx, catchUp)
	defer cancel()
	moved := make(chan struct{}, len(edits))
	var wg sync.WaitGroup
	for i, e := range edits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.buffers.Wait(wctx, uris[i], func(snap workspace.Snapshot) bool { return snap.Version != e.base.Version })
			if err == nil {
				moved <- struct{}{}
				cancel()
			}
		}()
	}
	wg.Wait()
	return len(moved) > 0
}

// editIntact reports whether got, the buffer after the edit, holds the
// edit that turned base into want: either exactly want, or want with other
// changes (the user typing) only on lines the edit did not write.
func editIntact(base, want, got string) bool {
	if got == want {
		return true
	}
	if got == base {
		return false
	}
	type span struct{ from, to int } // lines of want, [from, to)
	var ours []span
	for _, h := range diff.Lines(base, want) {
		from := h.NewLine - 1
		to := from + len(h.Added)
		if to == from { // a pure deletion: guard the lines around it
			from, to = max(from-1, 0), from+1
		}
		ours = append(ours, span{from, to})
	}
	for _, h := range diff.Lines(want, got) {
		from := h.OldLine - 1
		to := from + len(h.Removed)
		if to == from {
			to = from + 1
		}
		for _, o := range ours {
			if from < o.to && o.from < to {
				return false
			}
		}
	}
	return true
}
