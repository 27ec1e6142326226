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
	Dir   bool // a folder the walk did not enter (Skip says why)
}

// snapshot is the files of the workspace by absolute path.
type snapshot map[string]fileState

// folderScan is one folder as a scan saw it: its files sorted by name
// and the names of the subfolders it walked.
type folderScan struct {
	files   []treeEntry // Dir false
	subdirs []string
}

// scanned is a scan's result by absolute folder path: a map entry per
// folder, not per file, so that comparing with the latest checkpoint
// costs a lookup per folder.
type scanned map[string]*folderScan

// flat returns the files of a scan by absolute path.
func (sd scanned) flat() snapshot {
	n := 0
	for _, f := range sd {
		n += len(f.files)
	}
	out := make(snapshot, n)
	for dir, f := range sd {
		for _, e := range f.files {
			out[dir+string(filepath.Separator)+e.Name] = e.state()
		}
	}
	return out
}

// lookup returns the state of the file at abs.
func (sd scanned) lookup(abs string) (fileState, bool) {
	f := sd[filepath.Dir(abs)]
	if f == nil {
		return fileState{}, false
	}
	name := filepath.Base(abs)
	i, ok := slices.BinarySearchFunc(f.files, name, func(e treeEntry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return fileState{}, false
	}
	return f.files[i].state(), true
}

// scanner walks the workspace folders once.
type scanner struct {
	ctx     context.Context
	store   *Store
	save    bool                  // store the contents of changed files as blobs
	prev    map[string]cachedTree // the latest checkpoint's folders, for stat-based reuse
	trustMT int64                 // an mtime before this (the latest checkpoint's scan start) can be trusted
	sem     chan struct{}
	wg      sync.WaitGroup
	budget  atomic.Int64 // content bytes this checkpoint may still hold
	written atomic.Int64 // blob bytes written

	mu      sync.Mutex
	out     scanned       // guarded by mu
	changed []changedFile // guarded by mu; files read, merged into out after the walk
	err     error         // guarded by mu; the first fault that must fail the scan
	read    int           // guarded by mu; files whose content was read
	tooDeep int           // guarded by mu; folders not entered, workspace.MaxWalkDepth down
	// pace, when set, is called by the walkers between files and
	// folders; it may sleep, to hold the scan to a CPU budget.
	pace     func()
	maxBytes int64 // the cap of budget
	files    *atomic.Int64
}

// changedFile is a file that was read because its stat changed.
type changedFile struct {
	dir string
	e   treeEntry
}

// scan reads the state of every file the checkpoint covers. Folders are
// walked and changed files hashed by up to Workers goroutines.
// s.mu is held.
func (s *Store) scan(ctx context.Context, save bool, prev map[string]cachedTree, trustMT int64) (scanned, *scanner, error) {
	return s.scanWith(ctx, s.scanConfig(), save, prev, trustMT)
}

// scanConfig is what a scan takes from the store's fields that s.mu
// guards, so that Prime's scan can run without holding it.
type scanConfig struct {
	roots    []*os.Root
	maxBytes int64 // MaxCheckpointBytes
	workers  int
	pace     func()
	files    *atomic.Int64 // when set, counts the files read
}

// scanConfig returns the store's; s.mu is held.
func (s *Store) scanConfig() scanConfig {
	return scanConfig{roots: s.roots, maxBytes: s.opts.MaxCheckpointBytes, workers: s.opts.Workers}
}

// scanWith is scan with cfg in place of the store's fields. The scanner
// is returned on failure too: a cancelled scan's reads can be reused
// (scanner.partial).
func (s *Store) scanWith(ctx context.Context, cfg scanConfig, save bool, prev map[string]cachedTree, trustMT int64) (scanned, *scanner, error) {
	if cfg.roots == nil {
		return nil, nil, errClosed
	}
	s.checkExcludeFiles()
	sc := &scanner{
		ctx: ctx, store: s, save: save, prev: prev, trustMT: trustMT, pace: cfg.pace, maxBytes: cfg.maxBytes, files: cfg.files,
		// The calling goroutine only waits, so Workers goroutines walk.
		sem: make(chan struct{}, cfg.workers),
		out: make(scanned, len(prev)),
	}
	sc.budget.Store(cfg.maxBytes)
	for i, folder := range s.folders {
		if s.own.Holds(folder) {
			continue // a workspace folder inside the state directory: none of it is the user's
		}
		h, err := openTop(cfg.roots[i])
		if err != nil {
			sc.fail(fmt.Errorf("checkpoint: %w", err))
			break
		}
		d := newFolder(h)
		sc.spawn(func() { sc.dir(d, folder, 0) })
	}
	sc.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, sc, err
	}
	if sc.err != nil {
		return nil, sc, sc.err
	}
	// The files that were read join their folders' entries, which stay
	// sorted by name.
	touched := make(map[*folderScan]bool)
	for _, c := range sc.changed {
		if f := sc.out[c.dir]; f != nil {
			f.files = append(f.files, c.e)
			touched[f] = true
		}
	}
	for f := range touched {
		slices.SortFunc(f.files, byName)
	}
	return sc.out, sc, nil
}

func byName(a, b treeEntry) int { return strings.Compare(a.Name, b.Name) }

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

// listed is one entry of a folder's listing: a folder, or a regular
// file with its stat.
type listed struct {
	name string
	dir  bool
	st   fileState
}

// folder is an open folder of the walk, shared by its listing and the
// reads of its files, which may outlive the listing: the last to let
// go closes it.
type folder struct {
	h    dirHandle
	refs atomic.Int32
}

func newFolder(h dirHandle) *folder {
	f := &folder{h: h}
	f.refs.Store(1)
	return f
}

func (f *folder) hold() *folder { f.refs.Add(1); return f }

func (f *folder) release() {
	if f.refs.Add(-1) == 0 {
		f.h.close()
	}
}

// tooDeepNote is the Skip of a folder workspace.MaxWalkDepth levels
// below its workspace folder: the walk does not enter it, so nothing in
// it is stored and a restore leaves it alone.
var tooDeepNote = fmt.Sprintf("not stored: %d folder levels deep (checkpoints stop at that depth)", workspace.MaxWalkDepth)

// dir lists one folder, which dir is opened as and releases; depth is
// its level below its workspace folder. Each folder, and each file read,
// is opened from its folder's handle by one name, so that no open or
// stat can leave the workspace (dirHandle) and none costs more than one
// lookup however deep it lies. Folders workspace.MaxWalkDepth down are
// recorded with a note and not entered.
func (sc *scanner) dir(dir *folder, abs string, depth int) {
	defer dir.release()
	if sc.pace != nil {
		sc.pace()
	}
	if sc.ctx.Err() != nil {
		return
	}
	entries, err := dir.h.list()
	if err != nil && len(entries) == 0 {
		return // vanished or unreadable: nothing of it can be recorded
	}
	slices.SortFunc(entries, func(a, b listed) int { return strings.Compare(a.name, b.name) })
	sc.store.checkIgnoreFiles(abs, entries)
	// Asking the matcher costs microseconds a path; its answers for this
	// folder's entries are kept, sorted like the entries, until an ignore
	// file above them changes. Both lists are sorted, so one pass over
	// each finds the answers without hashing a name.
	old := sc.store.ignoreAnswers(abs)
	answers := make([]ignoreAnswer, 0, len(entries))
	ignored := func(name string, isDir bool) bool {
		for len(old) > 0 && old[0].name < name {
			old = old[1:]
		}
		var v bool
		if len(old) > 0 && old[0].name == name && old[0].dir == isDir {
			v = old[0].ignored
		} else {
			v = sc.store.ign.Ignored(abs+string(filepath.Separator)+name, isDir)
		}
		answers = append(answers, ignoreAnswer{name: name, dir: isDir, ignored: v})
		return v
	}
	defer func() { sc.store.keepIgnoreAnswers(abs, answers) }()
	prev := sc.prev[abs].entries
	out := &folderScan{files: make([]treeEntry, 0, len(entries))}
	for _, e := range entries {
		name := e.name
		if name == ".git" {
			continue
		}
		if e.dir {
			if ignored(name, true) || sc.store.own.Holds(abs+string(filepath.Separator)+name) {
				continue
			}
			if depth+1 >= workspace.MaxWalkDepth {
				out.files = append(out.files, treeEntry{Name: name, Dir: true, Skip: tooDeepNote})
				sc.mu.Lock()
				sc.tooDeep++
				sc.mu.Unlock()
				continue
			}
			sub, err := dir.h.sub(name)
			if err != nil {
				continue
			}
			out.subdirs = append(out.subdirs, name)
			cabs := abs + string(filepath.Separator) + name
			d := newFolder(sub)
			sc.spawn(func() { sc.dir(d, cabs, depth+1) })
			continue
		}
		if ignored(name, false) {
			continue
		}
		st := e.st
		// prev is sorted by name like entries: skip what is before.
		for len(prev) > 0 && prev[0].Name < name {
			prev = prev[1:]
		}
		if len(prev) > 0 {
			if old := prev[0]; old.Name == name && !old.Dir && old.Hash != "" && old.Size == st.Size &&
				old.MTime == st.MTime && fs.FileMode(old.Mode) == st.Mode && old.Ino == st.Ino && old.MTime < sc.trustMT {
				if sc.budget.Add(-st.Size) < 0 {
					st.Skip = sc.overBudget()
				} else {
					st.Hash = old.Hash
				}
				out.files = append(out.files, st.entry(name))
				continue
			}
		}
		fd := dir.hold()
		sc.spawn(func() {
			defer fd.release()
			sc.file(fd, abs, name, st)
		})
		// Symbolic links, devices, pipes and sockets are not listed:
		// restoring one could write outside the workspace or block.
	}
	sc.mu.Lock()
	sc.out[abs] = out
	sc.mu.Unlock()
}

// partial returns the files a scan read and stored, by folder, as a
// base for the next scan: a scan cancelled half-way (Prime's, when a
// checkpoint needs the store) leaves that checkpoint only the rest to
// read.
func (sc *scanner) partial() map[string]cachedTree {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	m := make(map[string]cachedTree, len(sc.out))
	add := func(dir string, e treeEntry) {
		if e.Hash == "" || e.Dir {
			return
		}
		t := m[dir]
		t.entries = append(t.entries, e)
		m[dir] = t
	}
	for dir, f := range sc.out {
		for _, e := range f.files {
			add(dir, e)
		}
	}
	for _, c := range sc.changed {
		add(c.dir, c.e)
	}
	for _, t := range m {
		slices.SortFunc(t.entries, byName)
	}
	return m
}

// ignoreAnswer is the matcher's answer for one entry of a folder.
type ignoreAnswer struct {
	name    string
	dir     bool
	ignored bool
}

func (sc *scanner) overBudget() string {
	return fmt.Sprintf("not stored: the checkpoint reached its cap of %d bytes", sc.maxBytes)
}

func (sc *scanner) record(dir, name string, st fileState, read bool) {
	sc.mu.Lock()
	sc.changed = append(sc.changed, changedFile{dir: dir, e: st.entry(name)})
	if read {
		sc.read++
	}
	sc.mu.Unlock()
	if read && sc.files != nil {
		sc.files.Add(1)
	}
}

// file reads and hashes one file whose stat differs from the latest
// checkpoint's. st is the stat from the folder listing; the one recorded
// is taken from the opened handle, which is what was read.
func (sc *scanner) file(in *folder, dir, name string, st fileState) {
	if sc.pace != nil {
		if sc.pace(); sc.ctx.Err() != nil {
			return
		}
	}
	max := sc.store.opts.MaxFileBytes
	if st.Size > max {
		st.Skip = fmt.Sprintf("not stored: larger than %d bytes", max)
		sc.record(dir, name, st, false)
		return
	}
	f, err := in.h.open(name)
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
		sc.record(dir, name, st, false)
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
	sc.record(dir, name, st, true)
}

// ignoreStat is the stat of a folder's ignore files, as last seen.
type ignoreStat [2]fileState // .gitignore, .clineignore; zero when absent

// checkIgnoreFiles drops the cached rules of folder abs when one of its
// ignore files changed since the last scan. It runs before any path below
// abs is matched, so the walk never uses stale rules.
func (s *Store) checkIgnoreFiles(abs string, entries []listed) {
	var now ignoreStat
	for _, e := range entries {
		i := -1
		switch e.name {
		case workspace.GitignoreFile:
			i = 0
		case workspace.ClineignoreFile:
			i = 1
		}
		if i < 0 || e.dir {
			continue
		}
		now[i] = e.st
		now[i].Skip = "present"
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
func (s *Store) ignoreAnswers(abs string) []ignoreAnswer {
	s.ignMu.Lock()
	defer s.ignMu.Unlock()
	return s.ignAnswers[abs]
}

func (s *Store) keepIgnoreAnswers(abs string, answers []ignoreAnswer) {
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

// entry is st as a tree's entry for a file named name.
func (st fileState) entry(name string) treeEntry {
	return treeEntry{Name: name, Hash: st.Hash, Mode: uint32(st.Mode), Size: st.Size, MTime: st.MTime, Ino: st.Ino, Skip: st.Skip, Dir: st.Dir}
}

// state is a file's entry as a fileState.
func (e treeEntry) state() fileState {
	return fileState{Hash: e.Hash, Mode: fs.FileMode(e.Mode), Size: e.Size, MTime: e.MTime, Ino: e.Ino, Skip: e.Skip, Dir: e.Dir}
}

// writeTrees stores the folder trees of a scan, one root tree per
// workspace folder, and returns their hashes, the trees by folder and
// the bytes written. A folder with no file below it has no tree.
func (s *Store) writeTrees(sd scanned) ([]rootRef, map[string]cachedTree, int64, error) {
	var written int64
	cache := make(map[string]cachedTree, len(sd))
	var put func(dir string, top bool) (string, error)
	put = func(dir string, top bool) (string, error) {
		f := sd[dir]
		if f == nil {
			f = &folderScan{}
		}
		entries := make([]treeEntry, 0, len(f.files)+len(f.subdirs))
		entries = append(entries, f.files...)
		for _, name := range f.subdirs {
			h, err := put(dir+string(filepath.Separator)+name, false)
			if err != nil {
				return "", err
			}
			if h != "" {
				entries = append(entries, treeEntry{Name: name, Dir: true, Hash: h})
			}
		}
		if len(entries) == 0 && !top {
			return "", nil
		}
		if len(f.subdirs) > 0 {
			slices.SortFunc(entries, byName)
		}
		// A folder whose entries are those of the last checkpoint has
		// its tree stored already: no encoding, hashing or stat.
		if old, ok := s.trees[dir]; ok && slices.Equal(old.entries, entries) && s.blobs.known(old.hash) {
			cache[dir] = old
			return old.hash, nil
		}
		h, w, err := s.blobs.putTree(&tree{Entries: entries})
		written += w
		cache[dir] = cachedTree{entries: entries, hash: h}
		return h, err
	}
	refs := make([]rootRef, 0, len(s.folders))
	for _, f := range s.folders {
		h, err := put(f, true)
		if err != nil {
			return nil, nil, written, err
		}
		refs = append(refs, rootRef{Folder: f, Tree: h})
	}
	return refs, cache, written, nil
}

// cachedTree is a folder's tree: its entries sorted by name, and the
// hash of its blob.
type cachedTree struct {
	entries []treeEntry
	hash    string
}

// readDirs loads the folders a checkpoint recorded, by absolute path.
func (s *Store) readDirs(refs []rootRef) (map[string]cachedTree, error) {
	out := make(map[string]cachedTree)
	var walk func(dir, hash string) error
	walk = func(dir, hash string) error {
		// A folder the latest checkpoint holds with this very tree is
		// in memory already; trees are named by their content.
		entries := s.trees[dir].entries
		if s.trees[dir].hash != hash {
			t, _, err := s.blobs.getTree(hash)
			if err != nil {
				return err
			}
			entries = t.Entries
		}
		out[dir] = cachedTree{entries: entries, hash: hash}
		for _, e := range entries {
			if e.Dir && e.Hash != "" {
				if err := walk(dir+string(filepath.Separator)+e.Name, e.Hash); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range refs {
		if err := walk(r.Folder, r.Tree); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// flatDirs returns the files of folders loaded by readDirs or written by
// writeTrees, by absolute path.
func flatDirs(dirs map[string]cachedTree) snapshot {
	snap := make(snapshot)
	for dir, t := range dirs {
		for _, e := range t.entries {
			// A folder not entered is named, with its note, like a file
			// not stored: a restore leaves it alone.
			if !e.Dir || e.Hash == "" {
				snap[dir+string(filepath.Separator)+e.Name] = e.state()
			}
		}
	}
	return snap
}

// readTrees loads the files a checkpoint recorded on disk.
func (s *Store) readTrees(refs []rootRef) (snapshot, error) {
	dirs, err := s.readDirs(refs)
	if err != nil {
		return nil, err
	}
	return flatDirs(dirs), nil
}

// changedOnDisk lists the files whose content, mode or note differ
// between two checkpoints' trees. Trees are named by their content, so a
// folder whose tree hash is the same on both sides is skipped unread;
// trees are taken from known (a folder's tree by path, if it has that
// hash) or else read from the store.
func (s *Store) changedOnDisk(a, b []rootRef, known func(dir, hash string) (cachedTree, bool)) ([]string, error) {
	get := func(dir, hash string) ([]treeEntry, error) {
		if hash == "" {
			return nil, nil
		}
		if t, ok := known(dir, hash); ok {
			return t.entries, nil
		}
		t, _, err := s.blobs.getTree(hash)
		if err != nil {
			return nil, err
		}
		return t.Entries, nil
	}
	var out []string
	var walk func(dir, ha, hb string) error
	walk = func(dir, ha, hb string) error {
		if ha == hb {
			return nil
		}
		ea, err := get(dir, ha)
		if err != nil {
			return err
		}
		eb, err := get(dir, hb)
		if err != nil {
			return err
		}
		// one handles an entry on one side (x) against its namesake on
		// the other (y, nil when absent).
		one := func(x, y *treeEntry) error {
			p := dir + string(filepath.Separator) + x.Name
			switch {
			case y == nil:
				if x.Dir {
					return walk(p, x.Hash, "")
				}
				out = append(out, p)
			case x.Dir && y.Dir:
				if x.Skip != y.Skip {
					out = append(out, p)
				}
				return walk(p, x.Hash, y.Hash)
			case x.Dir != y.Dir:
				if x.Dir {
					x, y = y, x
				}
				out = append(out, p)
				return walk(p, "", y.Hash)
			case x.Hash != y.Hash || x.Mode != y.Mode || x.Skip != y.Skip:
				out = append(out, p)
			}
			return nil
		}
		i, j := 0, 0
		for i < len(ea) || j < len(eb) {
			var err error
			switch {
			case j == len(eb) || i < len(ea) && ea[i].Name < eb[j].Name:
				err = one(&ea[i], nil)
				i++
			case i == len(ea) || eb[j].Name < ea[i].Name:
				err = one(&eb[j], nil)
				j++
			default:
				err = one(&ea[i], &eb[j])
				i++
				j++
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, rb := range b {
		ha := ""
		for _, ra := range a {
			if ra.Folder == rb.Folder {
				ha = ra.Tree
			}
		}
		if err := walk(rb.Folder, ha, rb.Tree); err != nil {
			return nil, err
		}
	}
	for _, ra := range a {
		if !slices.ContainsFunc(b, func(r rootRef) bool { return r.Folder == ra.Folder }) {
			if err := walk(ra.Folder, ra.Tree, ""); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
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
			case e.Dir && e.Hash != "":
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
