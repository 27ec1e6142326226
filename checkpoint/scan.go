package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	if s.roots == nil {
		return nil, nil, errClosed
	}
	s.checkExcludeFiles()
	sc := &scanner{
		ctx: ctx, store: s, save: save, prev: prev, trustMT: trustMT,
		sem: make(chan struct{}, s.opts.Workers-1),
		out: make(snapshot, len(prev)),
	}
	sc.budget.Store(s.opts.MaxCheckpointBytes)
	for i, folder := range s.folders {
		root, err := s.roots[i].OpenRoot(".")
		if err != nil {
			sc.fail(fmt.Errorf("checkpoint: %w", err))
			break
		}
		top := s.roots[i]
		sc.spawn(func() { sc.dir(root, top, folder, ".") })
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

// dir lists one folder, which dir is opened as and closes; rel is its
// path below top, the workspace folder. Each folder is an os.Root opened
// from its parent's, so that every open and stat is one system call on a
// single name, and none can leave the workspace.
func (sc *scanner) dir(dir, top *os.Root, abs, rel string) {
	defer dir.Close()
	if sc.ctx.Err() != nil {
		return
	}
	f, err := dir.Open(".")
	if err != nil {
		return // vanished or unreadable: nothing of it can be recorded
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	sc.store.checkIgnoreFiles(abs, entries)
	// Asking the matcher costs microseconds a path; its answers for this
	// folder's entries are kept until an ignore file above them changes.
	old := sc.store.ignoreAnswers(abs)
	answers := make(map[string]bool, len(entries))
	ignored := func(name, cabs string, isDir bool) bool {
		key := name
		if isDir {
			key += "/"
		}
		v, ok := old[key]
		if !ok {
			v = sc.store.ign.Ignored(cabs, isDir)
		}
		answers[key] = v
		return v
	}
	defer sc.store.keepIgnoreAnswers(abs, answers)
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
			if ignored(name, cabs, true) {
				continue
			}
			sub, err := dir.OpenRoot(name)
			if err != nil {
				continue
			}
			sc.spawn(func() { sc.dir(sub, top, cabs, crel) })
		case typ.IsRegular():
			if ignored(name, cabs, false) {
				continue
			}
			// A listing of a folder opened in a Root holds each entry's
			// lstat already: Info makes no system call.
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
			// A file read may outlive this listing, which closes dir,
			// so it goes through the folder's root.
			sc.spawn(func() { sc.file(top, cabs, crel, st) })
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

// ignoreStat is the stat of a folder's ignore files, as last seen.
type ignoreStat [2]fileState // .gitignore, .clineignore; zero when absent

// checkIgnoreFiles drops the cached rules of folder abs when one of its
// ignore files changed since the last scan. It runs before any path below
// abs is matched, so the walk never uses stale rules.
func (s *Store) checkIgnoreFiles(abs string, entries []fs.DirEntry) {
	var now ignoreStat
	for _, e := range entries {
		i := -1
		switch e.Name() {
		case workspace.GitignoreFile:
			i = 0
		case workspace.ClineignoreFile:
			i = 1
		}
		if i < 0 {
			continue
		}
		if fi, err := e.Info(); err == nil {
			now[i] = statOf(fi)
			now[i].Skip = "present"
		}
	}
	s.ignMu.Lock()
	old, seen := s.ignStat[abs]
	if !seen || old != now {
		s.ignStat[abs] = now
	}
	if seen && old != now {
		// The answers below abs used the old rules.
		for d := range s.ignAnswers {
			if d == abs || strings.HasPrefix(d, abs+string(filepath.Separator)) {
				delete(s.ignAnswers, d)
			}
		}
	}
	s.ignMu.Unlock()
	if seen && old != now {
		s.ign.Invalidate(abs)
	}
}

// ignoreAnswers returns the matcher's answers for the entries of folder
// abs from the last scan (entry name, "/" ending a folder's).
func (s *Store) ignoreAnswers(abs string) map[string]bool {
	s.ignMu.Lock()
	defer s.ignMu.Unlock()
	return s.ignAnswers[abs]
}

func (s *Store) keepIgnoreAnswers(abs string, answers map[string]bool) {
	s.ignMu.Lock()
	s.ignAnswers[abs] = answers
	s.ignMu.Unlock()
}

// checkExcludeFiles reloads every rule when a folder's .git/info/exclude
// changed: its stat is checked once per scan.
func (s *Store) checkExcludeFiles() {
	changed := false
	s.ignMu.Lock()
	for _, f := range s.folders {
		p := filepath.Join(f, ".git", "info", "exclude")
		var now ignoreStat
		if fi, err := os.Stat(p); err == nil {
			now[0] = statOf(fi)
			now[0].Skip = "present"
		}
		if old, ok := s.ignStat[p]; ok && old != now {
			changed = true
		}
		s.ignStat[p] = now
	}
	if changed {
		clear(s.ignAnswers)
	}
	s.ignMu.Unlock()
	if changed {
		s.ign.Reload()
	}
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
	cache := make(map[string]cachedTree, len(s.trees))
	var put func(dir string, n *treeNode) (string, error)
	put = func(dir string, n *treeNode) (string, error) {
		t := &tree{Entries: n.files}
		for name, c := range n.dirs {
			h, err := put(dir+string(filepath.Separator)+name, c)
			if err != nil {
				return "", err
			}
			t.Entries = append(t.Entries, treeEntry{Name: name, Dir: true, Hash: h})
		}
		slices.SortFunc(t.Entries, func(a, b treeEntry) int { return strings.Compare(a.Name, b.Name) })
		// A folder whose entries are those of the last checkpoint has
		// its tree stored already: no encoding, hashing or stat.
		if old, ok := s.trees[dir]; ok && slices.Equal(old.entries, t.Entries) && s.blobs.known(old.hash) {
			cache[dir] = old
			return old.hash, nil
		}
		h, w, err := s.blobs.putTree(t)
		written += w
		cache[dir] = cachedTree{entries: t.Entries, hash: h}
		return h, err
	}
	refs := make([]rootRef, 0, len(s.folders))
	for _, f := range s.folders {
		h, err := put(f, nodes[f])
		if err != nil {
			s.trees = nil
			return nil, written, err
		}
		refs = append(refs, rootRef{Folder: f, Tree: h})
	}
	s.trees = cache
	return refs, written, nil
}

// cachedTree is a folder's tree as the last checkpoint wrote it.
type cachedTree struct {
	entries []treeEntry
	hash    string
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
