package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

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
	ls := &lockSet{locks: &f.s.locks, roots: r, held: make(map[string]bool)}
	defer ls.unlockAll()
	for {
		changes, err := f.applyLocked(ctx, plan, ls)
		if !ls.missed {
			if err == nil && len(ls.delivered) > 0 {
				// The editor's diagnostics of the edited text come
				// after it: wait for them without holding the files.
				ls.unlockAll()
				notes := f.s.text.editDiagnostics(ctx, ls.delivered, f.Display)
				for i := range changes {
					changes[i].Diagnostics = notes[changes[i].Path]
				}
			}
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
	// delivered is the buffer edits the editor took, once it took them.
	delivered []bufferEdit
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
		ft, ok := read[c.Path]
		switch changeRoute(c, viaClient, ok && ft.Open) {
		case toClient:
			clientWrites = append(clientWrites, c)
			continue
		case toBuffer:
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
	undo, err := f.writeDisk(diskOps, len(clientWrites) > 0 || len(bufEdits) > 0)
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
		ls.delivered = bufEdits
	}
	return changes, nil
}

// delivery is where a change is delivered.
type delivery int

const (
	toDisk   delivery = iota
	toBuffer          // the editor's open buffer, through workspace/applyEdit
	toClient          // the ACP client's fs/write_text_file
)

// changeRoute is the one rule of where change c goes: to an ACP client
// that writes files, to the buffer when the file is open, else to disk —
// which the approval says (diskNote), since the user's buffers are what
// they expect to change, not their files.
func changeRoute(c tools.Change, viaClient, open bool) delivery {
	switch {
	case viaClient && c.NewText != nil && c.MoveTo == "":
		return toClient
	case open && c.NewText != nil && c.MoveTo == "":
		return toBuffer
	}
	return toDisk
}

// diskNote says which of an approval's changes reach the disk at once
// ("writes notes.txt to disk"), or "" when none does.
func (s *Server) diskNote(sessionID string, changes []tools.Change) string {
	f := s.newFiles()
	f.sessionID = sessionID
	viaClient := f.acpWrites()
	var names []string
	for _, c := range changes {
		_, open := s.buffers.GetPath(c.Path)
		if changeRoute(c, viaClient, open) != toDisk {
			continue
		}
		name := f.Display(c.Path)
		switch {
		case c.MoveTo != "":
			names = append(names, "moves "+name+" on disk")
		case c.NewText == nil:
			names = append(names, "deletes "+name+" from disk")
		default:
			names = append(names, "writes "+name+" to disk")
		}
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
	}
	return strings.Join(names, ", ") + " (not open in the editor)"
}

// writeDisk applies disk changes in order and returns a function that
// restores what they replaced. Every step goes through the workspace
// folders' handles, so a path swapped for a link out of the workspace
// after the call was checked is refused, not followed. What a step
// replaces is read back for the undo only when something can still fail
// after it: a later step, or (more) the deliveries to the editor that
// follow; a single file written alone is not read a second time.
func (f *files) writeDisk(ops []tools.Change, more bool) (undo func() error, err error) {
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
	remember := func(path string, last bool) (saved, error) {
		if last && !more {
			// Nothing after this step can fail, and a failed atomic
			// write leaves the file as it was: no undo to prepare, so
			// nothing is added to done.
			fi, err := r.Stat(path)
			if errors.Is(err, fs.ErrNotExist) {
				return saved{path: path}, nil
			}
			if err != nil {
				return saved{}, err
			}
			return saved{path: path, mode: fi.Mode().Perm(), existed: true}, nil
		}
		data, fi, err := r.ReadFile(path, tools.MaxFileBytes)
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
	for i, c := range ops {
		// The last step, a write in place, is the one that needs no undo.
		last := i == len(ops)-1 && c.NewText != nil && (c.MoveTo == "" || c.MoveTo == c.Path)
		old, err := remember(c.Path, last)
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
			if _, err := remember(dst, false); err != nil {
				return fail(dst, f.diskErr(dst, err))
			}
		}
		if err := r.MkdirParents(dst); err != nil {
			return fail(dst, err)
		}
		if err := r.WriteFileString(dst, *c.NewText, mode); err != nil {
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
