package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/workspace"
)

// Status says what a restore does to a file.
type Status string

// The statuses of a restored file: Modified rewrites it (or only its
// mode), Created brings back a file deleted since the checkpoint, Deleted
// removes a file created since.
const (
	Modified Status = "modified"
	Created  Status = "created"
	Deleted  Status = "deleted"
)

// RestoreRequest names the checkpoint to go back to.
type RestoreRequest struct {
	SessionID    string
	CheckpointID string
	// Open holds the text of every buffer open in the editor now, by
	// absolute path. An open file is restored through its buffer, never
	// on disk: the editor holds the user's view of it.
	Open map[string]string
	// Force restores conflicting files too.
	Force bool
}

// Plan is what a restore does.
type Plan struct {
	// Turn is the checkpoint's turn, for the caller that also rewinds the
	// conversation.
	Turn int
	// Disk lists the files Restore wrote, removed or changed the mode of.
	Disk []DiskChange
	// Buffers are the open buffers the caller must set to Text (in one
	// versioned edit), or, with Remove, whose file the caller deletes.
	Buffers []BufferEdit
	// Conflicts are files changed after the session's latest checkpoint
	// (so neither what the checkpoint holds nor the agent's own result):
	// kept as they are unless Force. The test is whether the restore
	// would lose content: a file absent now, or whose content some
	// checkpoint of the session holds, is no conflict, which is what lets
	// a user restore forward again after going back.
	Conflicts []Conflict
	// Failed are files a restore could not write; the others were.
	Failed []Conflict
	// Skipped are files whose content the checkpoint did not store (too
	// large), left as they are.
	Skipped []string
}

// DiskChange is one file a restore changed on disk.
type DiskChange struct {
	Path   string
	Status Status
}

// BufferEdit is the text an open buffer goes back to.
type BufferEdit struct {
	Path   string
	Text   string
	Status Status
	// Remove means the file did not exist at the checkpoint: the caller
	// deletes it through the editor (a delete-file operation) rather than
	// emptying the buffer.
	Remove bool
}

// Conflict is a file a restore left alone, and why.
type Conflict struct {
	Path   string
	Reason string
}

// Restored returns the paths the restore changed on disk or hands to the
// caller as buffer edits, sorted.
func (p *Plan) Restored() []string {
	var out []string
	for _, d := range p.Disk {
		out = append(out, d.Path)
	}
	for _, b := range p.Buffers {
		out = append(out, b.Path)
	}
	slices.Sort(out)
	return out
}

// FileDiff is one file in a restore's preview.
type FileDiff struct {
	Path   string
	Status Status
	// Diff is the compact line diff from the file now to the checkpoint.
	Diff string
	// Conflict, when set, says why a restore without force keeps the file.
	Conflict string
}

// change is one file a restore would change.
type change struct {
	path     string
	status   Status
	buffer   bool        // open: the caller edits the buffer
	target   string      // content blob at the checkpoint; "" when absent
	mode     fs.FileMode // mode at the checkpoint
	modeOnly bool
	conflict string
}

const conflictReason = "changed after the session's latest checkpoint (its content is in none of the session's checkpoints)"

// planned is a restore worked out but not carried out.
type planned struct {
	ck      *record
	changes []change
	skipped []string
	open    map[string]string // req.Open by cleaned path
}

// plan compares the workspace now with a checkpoint.
func (s *Store) plan(ctx context.Context, req RestoreRequest) (*planned, error) {
	ck, latest, err := s.find(req.SessionID, req.CheckpointID)
	if err != nil {
		return nil, err
	}
	dirs, err := s.latestDirs()
	if err != nil {
		return nil, err
	}
	sd, _, err := s.scan(ctx, false, dirs, s.latestScan)
	if err != nil {
		return nil, err
	}
	cur := sd.flat()
	var base snapshot
	snapOf := func(r *record) (snapshot, error) {
		if r == s.records[len(s.records)-1] {
			if base == nil {
				base = flatDirs(dirs)
			}
			return base, nil
		}
		return s.readTrees(r.Roots)
	}
	cSnap, err := snapOf(ck)
	if err != nil {
		return nil, err
	}
	lSnap, err := snapOf(latest)
	if err != nil {
		return nil, err
	}
	cOv, lOv := overlayMap(ck.Overlays), overlayMap(latest.Overlays)
	open := make(map[string]string, len(req.Open))
	for p, text := range req.Open {
		p = filepath.Clean(p)
		if s.folderOf(p) != "" && !s.own.Holds(p) && !s.ign.Ignored(p, false) {
			open[p] = text
		}
	}

	paths := make(map[string]bool, len(cSnap)+len(cur))
	for p := range cSnap {
		paths[p] = true
	}
	for p := range cur {
		paths[p] = true
	}
	for p := range cOv {
		paths[p] = true
	}
	// The daemon's own files are never restored, even from a checkpoint
	// taken when a walk did not yet leave them out.
	for p := range paths {
		if s.own.Holds(p) {
			delete(paths, p)
		}
	}
	var changes []change
	var skipped []string
	var stored map[string]bool // every blob the session's checkpoints hold; read when first needed
	kept := func(hash string) bool {
		if hash == "" || hash == "?" {
			return false
		}
		if stored == nil {
			stored = make(map[string]bool)
			for _, r := range s.records {
				if r.SessionID != req.SessionID {
					continue
				}
				if _, err := s.markTrees(r.Roots, stored, stored); err != nil {
					return false
				}
				for _, o := range r.Overlays {
					stored[o.Hash] = true
				}
			}
		}
		return stored[hash]
	}
	// lost reports whether overwriting content h at p loses it: neither
	// checkpoint recorded it there (the quick test) nor does any of the
	// session's checkpoints hold it. A file absent now loses nothing.
	lost := func(p, h string) bool {
		if h == "" || cSnap[p].Hash == h || lSnap[p].Hash == h {
			return false
		}
		if v, ok := cOv[p]; ok && v == h {
			return false
		}
		if v, ok := lOv[p]; ok && v == h {
			return false
		}
		return !kept(h)
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		cst, inC := cSnap[p]
		// A file not stored, or a folder the walks did not enter, is
		// left as it is, whichever side names it.
		if inC && cst.Skip != "" || cur[p].Dir {
			skipped = append(skipped, p)
			continue
		}
		if text, ok := open[p]; ok {
			now := hashOf([]byte(text))
			target, inOv := cOv[p]
			if !inOv {
				target = cst.Hash
			}
			if now == target {
				continue
			}
			c := change{path: p, status: Modified, buffer: true, target: target, mode: cst.Mode}
			if target == "" {
				c.status = Deleted
			}
			if !req.Force && lost(p, now) {
				c.conflict = conflictReason
			}
			changes = append(changes, c)
			continue
		}
		st, onDisk := cur[p]
		now := st.Hash // "" when absent
		if onDisk && st.Skip != "" {
			now = "?" // too large to hash: unknown, so never a match
		}
		if now == cst.Hash && (!inC || st.Mode == cst.Mode) {
			continue
		}
		c := change{path: p, status: Modified, target: cst.Hash, mode: cst.Mode}
		switch {
		case now == cst.Hash:
			c.modeOnly = true
		case !inC:
			c.status = Deleted
		case !onDisk:
			c.status = Created
		}
		if !c.modeOnly && !req.Force && lost(p, now) {
			c.conflict = conflictReason
		}
		changes = append(changes, c)
	}
	return &planned{ck: ck, changes: changes, skipped: skipped, open: open}, nil
}

func overlayMap(refs []overlayRef) map[string]string {
	m := make(map[string]string, len(refs))
	for _, o := range refs {
		m[o.Path] = o.Hash
	}
	return m
}

// Diff previews a restore: every file it would change, with the compact
// diff from now to the checkpoint. Files a restore without force would
// keep are listed with the reason.
func (s *Store) Diff(ctx context.Context, req RestoreRequest) ([]FileDiff, error) {
	var out []FileDiff
	err := s.withLock(ctx, func() error {
		var err error
		out, err = s.diff(ctx, req)
		return err
	})
	return out, err
}

func (s *Store) diff(ctx context.Context, req RestoreRequest) ([]FileDiff, error) {
	pl, err := s.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]FileDiff, 0, len(pl.changes))
	for _, c := range pl.changes {
		fd := FileDiff{Path: c.path, Status: c.status, Conflict: c.conflict}
		var now []byte
		if c.buffer {
			now = []byte(pl.open[c.path])
		} else if c.status != Created {
			now, err = s.readCurrent(c.path)
			if err != nil {
				return nil, err
			}
		}
		var then []byte
		if c.target != "" {
			if then, err = s.blobs.get(c.target); err != nil {
				return nil, err
			}
		}
		switch {
		case c.modeOnly:
			fd.Diff = fmt.Sprintf("Mode of %s: %v → %v", c.path, s.currentMode(c.path), c.mode)
		case isBinary(now) || isBinary(then):
			fd.Diff = fmt.Sprintf("Binary file %s: %d → %d bytes", c.path, len(now), len(then))
		default:
			fd.Diff = diff.Compact(c.path, string(now), string(then)).Text
		}
		out = append(out, fd)
	}
	return out, nil
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// readCurrent reads a workspace file through its folder's root.
func (s *Store) readCurrent(abs string) ([]byte, error) {
	folder := s.folderOf(abs)
	i := slices.Index(s.folders, folder)
	if s.roots == nil {
		return nil, errClosed
	}
	if i < 0 {
		return nil, fmt.Errorf("checkpoint: %s is outside the workspace", abs)
	}
	f, err := s.roots[i].Open(filepath.ToSlash(abs[len(folder)+1:]))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	data, tooBig, err := readCapped(f, s.opts.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if tooBig {
		return nil, fmt.Errorf("checkpoint: %s is larger than %d bytes", abs, s.opts.MaxFileBytes)
	}
	return data, nil
}

func (s *Store) currentMode(abs string) fs.FileMode {
	fi, err := os.Lstat(abs)
	if err != nil {
		return 0
	}
	return fi.Mode() & modeBits
}

// Restore puts the workspace back as the checkpoint recorded it: files
// on disk are written (atomically, with their recorded mode), recreated
// or removed now; open buffers come back in the plan for the caller to
// edit. Conflicting files are kept unless req.Force.
func (s *Store) Restore(ctx context.Context, req RestoreRequest) (*Plan, error) {
	var p *Plan
	err := s.withLock(ctx, func() error {
		var err error
		p, err = s.restore(ctx, req)
		return err
	})
	return p, err
}

func (s *Store) restore(ctx context.Context, req RestoreRequest) (*Plan, error) {
	pl, err := s.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	ck := pl.ck
	p := &Plan{Turn: ck.Turn, Skipped: pl.skipped}
	var cDirs map[string]bool // folders holding files at the checkpoint; read if a file is removed
	for _, c := range pl.changes {
		if c.conflict != "" {
			p.Conflicts = append(p.Conflicts, Conflict{Path: c.path, Reason: c.conflict})
			continue
		}
		if c.buffer {
			b := BufferEdit{Path: c.path, Status: c.status, Remove: c.target == ""}
			if !b.Remove {
				data, err := s.blobs.get(c.target)
				if err != nil {
					p.Failed = append(p.Failed, Conflict{Path: c.path, Reason: err.Error()})
					continue
				}
				b.Text = string(data)
			}
			p.Buffers = append(p.Buffers, b)
			continue
		}
		if c.status == Deleted && cDirs == nil {
			if cDirs, err = s.foldersOf(ck); err != nil {
				return nil, err
			}
		}
		if err := s.apply(c, cDirs); err != nil {
			p.Failed = append(p.Failed, Conflict{Path: c.path, Reason: err.Error()})
			continue
		}
		p.Disk = append(p.Disk, DiskChange{Path: c.path, Status: c.status})
	}
	return p, nil
}

// apply carries out one disk change. The folder is resolved with its
// symlinks evaluated and confined to the workspace, and the file itself
// must not be a symlink, so no write can land outside.
func (s *Store) apply(c change, cDirs map[string]bool) error {
	dir, err := s.paths.Resolve(filepath.Dir(c.path))
	if err != nil {
		return err
	}
	target := filepath.Join(dir, filepath.Base(c.path))
	fi, err := os.Lstat(target)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is no longer a regular file", c.path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	exists := err == nil
	switch {
	case c.target == "":
		if exists {
			if err := os.Remove(target); err != nil {
				return err
			}
		}
		s.removeEmptyFolders(filepath.Dir(c.path), cDirs)
		return nil
	case c.modeOnly:
		return os.Chmod(target, c.mode)
	}
	data, err := s.blobs.get(c.target)
	if err != nil {
		return err
	}
	if !exists {
		if err := workspace.MkdirParents(target); err != nil {
			return err
		}
	}
	if err := workspace.WriteFileAtomic(target, data, c.mode); err != nil {
		return err
	}
	// WriteFileAtomic keeps the mode of the file it replaces and applies
	// the umask to a new one; the checkpoint's mode is what counts.
	if fi, err := os.Stat(target); err == nil && fi.Mode()&modeBits != c.mode {
		return os.Chmod(target, c.mode)
	}
	return nil
}

// foldersOf returns the folders that held files at a checkpoint.
func (s *Store) foldersOf(ck *record) (map[string]bool, error) {
	snap, err := s.readTrees(ck.Roots)
	if err != nil {
		return nil, err
	}
	dirs := make(map[string]bool)
	for p := range snap {
		for d := filepath.Dir(p); !dirs[d] && s.folderOf(d+string(filepath.Separator)) != ""; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs, nil
}

// removeEmptyFolders removes dir and its parents while they are empty
// and held no file at the checkpoint: folders made for files that the
// restore removed.
func (s *Store) removeEmptyFolders(dir string, cDirs map[string]bool) {
	folder := s.folderOf(dir + string(filepath.Separator))
	for folder != "" && dir != folder && strings.HasPrefix(dir, folder) && !cDirs[dir] {
		if os.Remove(dir) != nil { // fails when not empty
			return
		}
		dir = filepath.Dir(dir)
	}
}
