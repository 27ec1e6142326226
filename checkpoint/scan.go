package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cline-ls/cline-ls/workspace"
)

// fileState is what a checkpoint knows of one file on disk.
type fileState struct {
	Hash  string // content blob; "" when Skip says why there is none
	Mode  fs.FileMode
	Size  int64
	MTime int64
	Ino   uint64
	Skip  string
}

// snapshot is the files of the workspace by absolute path.
type snapshot map[string]fileState

// scanner walks the workspace folders once.
type scanner struct {
	ctx     context.Context
	store   *Store
	save    bool     // store the contents of changed files as blobs
	prev    snapshot // the latest checkpoint's files, for stat-based reuse
	trustMT int64    // an mtime before this (the latest checkpoint's scan start) can be trusted
	ignored func(abs string, isDir bool) bool
	sem     chan struct{}
	wg      sync.WaitGroup
	budget  atomic.Int64 // content bytes this checkpoint may still hold
	written atomic.Int64 // blob bytes written

	mu   sync.Mutex
	out  snapshot // guarded by mu
	err  error    // guarded by mu; the first fault that must fail the scan
	read int      // guarded by mu; files whose content was read
}

// scan reads the state of every file the checkpoint covers. Folders are
// walked and changed files hashed by up to Workers goroutines.
func (s *Store) scan(ctx context.Context, save bool, prev snapshot, trustMT int64) (snapshot, *scanner, error) {
	ign := workspace.NewIgnoreMatcher(s.folders, s.opts.Exclude...)
	sc := &scanner{
		ctx: ctx, store: s, save: save, prev: prev, trustMT: trustMT,
		ignored: ign.Ignored,
		sem:     make(chan struct{}, s.opts.Workers-1),
		out:     make(snapshot, len(prev)),
	}
	sc.budget.Store(s.opts.MaxCheckpointBytes)
	for i, folder := range s.folders {
		root := s.roots[i]
		sc.spawn(func() { sc.dir(root, folder, ".") })
	}
	sc.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if sc.err != nil {
		return nil, nil, sc.err
	}
	return sc.out, sc, nil
}

// spawn runs f on a new goroutine when a worker slot is free, else
// inline: the walk never has more than Workers goroutines busy.
func (sc *scanner) spawn(f func()) {
	select {
	case sc.sem <- struct{}{}:
		sc.wg.Go(func() {
			defer func() { <-sc.sem }()
			f()
		})
	default:
		f()
	}
}

func (sc *scanner) fail(err error) {
	sc.mu.Lock()
	if sc.err == nil {
		sc.err = err
	}
	sc.mu.Unlock()
}

// dir lists one folder; rel is its path below root ("." for the root).
func (sc *scanner) dir(root *os.Root, abs, rel string) {
	if sc.ctx.Err() != nil {
		return
	}
	f, err := root.Open(rel)
	if err != nil {
		return // vanished or unreadable: nothing of it can be recorded
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		cabs := abs + string(filepath.Separator) + name
		crel := name
		if rel != "." {
			crel = rel + "/" + name
		}
		typ := e.Type()
		switch {
		case typ.IsDir():
			if !sc.ignored(cabs, true) {
				sc.spawn(func() { sc.dir(root, cabs, crel) })
			}
		case typ.IsRegular():
			if sc.ignored(cabs, false) {
				continue
			}
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			st := statOf(fi)
			if old, ok := sc.prev[cabs]; ok && old.Hash != "" && old.Size == st.Size &&
				old.MTime == st.MTime && old.Mode == st.Mode && old.Ino == st.Ino && old.MTime < sc.trustMT {
				if sc.budget.Add(-st.Size) < 0 {
					st.Skip = sc.overBudget()
				} else {
					st.Hash = old.Hash
				}
				sc.record(cabs, st)
				continue
			}
			sc.spawn(func() { sc.file(root, cabs, crel, st) })
		}
		// Symbolic links, devices, pipes and sockets are not recorded:
		// restoring one could write outside the workspace or block.
	}
}

func (sc *scanner) overBudget() string {
	return fmt.Sprintf("not stored: the checkpoint reached its cap of %d bytes", sc.store.opts.MaxCheckpointBytes)
}

func (sc *scanner) record(abs string, st fileState) {
	sc.mu.Lock()
	sc.out[abs] = st
	sc.mu.Unlock()
}

// file reads and hashes one file whose stat differs from the latest
// checkpoint's. st is the stat from the folder listing; the one recorded
// is taken from the opened handle, which is what was read.
func (sc *scanner) file(root *os.Root, abs, rel string, st fileState) {
	max := sc.store.opts.MaxFileBytes
	if st.Size > max {
		st.Skip = fmt.Sprintf("not stored: larger than %d bytes", max)
		sc.record(abs, st)
		return
	}
	f, err := root.Open(rel)
	if err != nil {
		return // gone since the listing
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	st = statOf(fi)
	if sc.budget.Add(-st.Size) < 0 {
		st.Skip = sc.overBudget()
		sc.record(abs, st)
		return
	}
	data, tooBig, err := readCapped(f, max)
	switch {
	case err != nil:
		st.Skip = "not stored: unreadable: " + err.Error()
	case tooBig:
		st.Skip = fmt.Sprintf("not stored: larger than %d bytes", max)
	default:
		st.Size = int64(len(data))
		st.Hash = hashOf(data)
		if sc.save {
			n, err := sc.store.blobs.put(st.Hash, data)
			if err != nil {
				sc.fail(err)
				return
			}
			sc.written.Add(n)
		}
	}
	sc.mu.Lock()
	sc.out[abs] = st
	sc.read++
	sc.mu.Unlock()
}

// modeBits is the part of a mode that a restore puts back.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func statOf(fi fs.FileInfo) fileState {
	return fileState{
		Mode:  fi.Mode() & modeBits,
		Size:  fi.Size(),
		MTime: fi.ModTime().UnixNano(),
		Ino:   inode(fi),
	}
}

// folderOf returns the workspace folder holding abs, or "".
func (s *Store) folderOf(abs string) string {
	for _, f := range s.folders {
		if strings.HasPrefix(abs, f) && len(abs) > len(f) && abs[len(f)] == filepath.Separator {
			return f
		}
	}
	return ""
}

// treeNode is a folder while trees are built.
type treeNode struct {
	files []treeEntry
	dirs  map[string]*treeNode
}

// writeTrees stores the folder trees of snap, one root tree per workspace
// folder, and returns their hashes and the bytes written.
func (s *Store) writeTrees(snap snapshot) ([]rootRef, int64, error) {
	nodes := make(map[string]*treeNode, len(s.folders))
	for _, f := range s.folders {
		nodes[f] = &treeNode{dirs: map[string]*treeNode{}}
	}
	for abs, st := range snap {
		folder := s.folderOf(abs)
		if folder == "" {
			continue
		}
		n := nodes[folder]
		names := strings.Split(filepath.ToSlash(abs[len(folder)+1:]), "/")
		for _, d := range names[:len(names)-1] {
			c := n.dirs[d]
			if c == nil {
				c = &treeNode{dirs: map[string]*treeNode{}}
				n.dirs[d] = c
			}
			n = c
		}
		n.files = append(n.files, treeEntry{
			Name: names[len(names)-1], Hash: st.Hash, Mode: uint32(st.Mode),
			Size: st.Size, MTime: st.MTime, Ino: st.Ino, Skip: st.Skip,
		})
	}
	var written int64
	var put func(n *treeNode) (string, error)
	put = func(n *treeNode) (string, error) {
		t := &tree{Entries: n.files}
		for name, c := range n.dirs {
			h, err := put(c)
			if err != nil {
				return "", err
			}
			t.Entries = append(t.Entries, treeEntry{Name: name, Dir: true, Hash: h})
		}
		sort.Slice(t.Entries, func(i, j int) bool { return t.Entries[i].Name < t.Entries[j].Name })
		h, w, err := s.blobs.putTree(t)
		written += w
		return h, err
	}
	refs := make([]rootRef, 0, len(s.folders))
	for _, f := range s.folders {
		h, err := put(nodes[f])
		if err != nil {
			return nil, written, err
		}
		refs = append(refs, rootRef{Folder: f, Tree: h})
	}
	return refs, written, nil
}

// readTrees loads the files a checkpoint recorded on disk.
func (s *Store) readTrees(refs []rootRef) (snapshot, error) {
	snap := make(snapshot)
	var walk func(dir, hash string) error
	walk = func(dir, hash string) error {
		t, _, err := s.blobs.getTree(hash)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			p := dir + string(filepath.Separator) + e.Name
			if e.Dir {
				if err := walk(p, e.Hash); err != nil {
					return err
				}
				continue
			}
			snap[p] = fileState{Hash: e.Hash, Mode: fs.FileMode(e.Mode), Size: e.Size, MTime: e.MTime, Ino: e.Ino, Skip: e.Skip}
		}
		return nil
	}
	for _, r := range refs {
		if err := walk(r.Folder, r.Tree); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// markTrees puts into fresh every blob the trees reach that keep does
// not hold, and returns their bytes.
func (s *Store) markTrees(refs []rootRef, keep, fresh map[string]bool) (int64, error) {
	var added int64
	seen := func(h string) bool { return keep[h] || fresh[h] }
	var walk func(hash string) error
	walk = func(hash string) error {
		if seen(hash) {
			return nil
		}
		t, size, err := s.blobs.getTree(hash)
		if err != nil {
			return err
		}
		fresh[hash] = true
		added += size
		for _, e := range t.Entries {
			switch {
			case e.Dir:
				if err := walk(e.Hash); err != nil {
					return err
				}
			case e.Hash != "" && !seen(e.Hash):
				fresh[e.Hash] = true
				added += e.Size
			}
		}
		return nil
	}
	for _, r := range refs {
		if err := walk(r.Tree); err != nil {
			return added, err
		}
	}
	return added, nil
}
