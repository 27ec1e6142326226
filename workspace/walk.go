package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// MaxWalkDepth is how many folder levels below its start any walk of the
// workspace goes (listings, searches, the watcher, the cleaning of
// leftovers). Real projects stay far above it; a tree deeper than that is
// an accident or an attack, its paths pass PATH_MAX long before the
// bottom, and a walker that follows it does nothing useful for a long
// time. A walk that stops there says so.
const MaxWalkDepth = 256

// MaxWalkEntries bounds the entries one walk visits, files and folders
// together, for the walkers that have no tighter bound of their own.
const MaxWalkEntries = 200_000

// WalkDepth returns how many levels path lies below start (0 for start
// itself), or -1 when it is not inside it. Both must be clean.
func WalkDepth(start, path string) int {
	if path == start {
		return 0
	}
	if !pathWithin(start, path) {
		return -1
	}
	rel := strings.TrimPrefix(path[len(start):], string(filepath.Separator))
	return strings.Count(rel, string(filepath.Separator)) + 1
}

// dirHandlesKeep is how many folder handles a walk keeps open: enough
// for the parent of the next folder to be open in a deep chain or a
// narrow breadth-first level, few enough for any file descriptor limit
// (a kept folder holds two descriptors on Linux: its os.Root and the
// folder opened for AtParent).
const dirHandlesKeep = 32

// DirHandles reads the folders of one walk under base. A folder whose
// parent the walk read recently is opened through the parent's handle,
// one openat, instead of component by component from base: that made
// reading every folder of a chain d deep cost d²/2 opens. Everything
// stays confined to base as with base.Open. Safe for concurrent use;
// Close releases the handles. Keep one for the length of a walk only: a
// handle follows its folder if it is renamed.
type DirHandles struct {
	base *os.Root

	mu    sync.Mutex
	open  map[string]*dirHandle // by path relative to base
	order []string              // oldest first
}

type dirHandle struct {
	root *os.Root
	// dir is the folder opened for its listing, kept for its descriptor
	// (AtParent) where listRoot keeps it; else nil.
	dir  *os.File
	refs int // uses in progress, plus one while in open
}

func (d *dirHandle) close() {
	if d.dir != nil {
		d.dir.Close()
	}
	d.root.Close()
}

// NewDirHandles returns a DirHandles under base, which it does not close.
func NewDirHandles(base *os.Root) *DirHandles {
	return &DirHandles{base: base, open: make(map[string]*dirHandle)}
}

// ReadDir lists the folder rel (relative to base, "." for base) sorted by
// name, like os.ReadDir, returning what was read even on error.
func (h *DirHandles) ReadDir(rel string) ([]fs.DirEntry, error) {
	rel = filepath.Clean(rel)
	var dir *os.Root
	var err error
	parent, name := filepath.Split(rel)
	parent = filepath.Clean(parent)
	if p := h.acquire(parent); p != nil && rel != "." && name != "" {
		dir, err = p.root.OpenRoot(name)
		h.release(p)
	} else {
		if p != nil {
			h.release(p)
		}
		if rel == "." {
			dir, err = h.base.OpenRoot(".")
		} else {
			dir, err = h.base.OpenRoot(rel)
		}
	}
	if err != nil {
		return nil, err
	}
	entries, f, err := listRoot(dir)
	if err != nil && entries == nil {
		if f != nil {
			f.Close()
		}
		dir.Close()
		return nil, err
	}
	sortDirEntries(entries)
	h.keep(rel, &dirHandle{root: dir, dir: f, refs: 1})
	return entries, err
}

// AtParent calls at with the descriptor of the folder holding rel and
// rel's last name, when the handles keep that folder open from its
// listing (Linux), and reports whether it did. A walk opens a file of a
// folder it just listed this way with one openat of one name instead of
// resolving the whole path from base again (openat2's RESOLVE_BENEATH
// walk of every component was a fifth of a search's time). The
// descriptor is valid during the call only.
func (h *DirHandles) AtParent(rel string, at func(dirfd uintptr, name string)) bool {
	parent, name := filepath.Split(filepath.Clean(rel))
	if name == "" || name == "." || name == ".." {
		return false
	}
	d := h.acquire(filepath.Clean(parent))
	if d == nil {
		return false
	}
	defer h.release(d)
	if d.dir == nil {
		return false
	}
	rc, err := d.dir.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Control(func(fd uintptr) { at(fd, name) }) == nil
}

func (h *DirHandles) acquire(rel string) *dirHandle {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.open[rel]
	if !ok {
		return nil
	}
	d.refs++
	return d
}

func (h *DirHandles) release(d *dirHandle) {
	h.mu.Lock()
	d.refs--
	closeIt := d.refs == 0
	h.mu.Unlock()
	if closeIt {
		d.close()
	}
}

// keep adds a handle, evicting the oldest past dirHandlesKeep.
func (h *DirHandles) keep(rel string, d *dirHandle) {
	h.mu.Lock()
	var gone []*dirHandle
	if old, ok := h.open[rel]; ok { // read twice: the newer handle wins
		gone = append(gone, old)
		h.order = slices.DeleteFunc(h.order, func(s string) bool { return s == rel })
	}
	h.open[rel] = d
	h.order = append(h.order, rel)
	for len(h.order) > dirHandlesKeep {
		gone = append(gone, h.open[h.order[0]])
		delete(h.open, h.order[0])
		h.order = h.order[1:]
	}
	var closeNow []*dirHandle
	for _, d := range gone {
		if d.refs--; d.refs == 0 {
			closeNow = append(closeNow, d)
		}
	}
	h.mu.Unlock()
	for _, d := range closeNow {
		d.close()
	}
}

// Close releases every handle once the uses in progress end.
func (h *DirHandles) Close() {
	h.mu.Lock()
	var closeNow []*dirHandle
	for _, d := range h.open {
		if d.refs--; d.refs == 0 {
			closeNow = append(closeNow, d)
		}
	}
	clear(h.open)
	h.order = nil
	h.mu.Unlock()
	for _, d := range closeNow {
		d.close()
	}
}

// DirReader reads the folders of one walk of the workspace, through a
// DirHandles per workspace folder. Close it when the walk ends.
type DirReader struct {
	r       *Roots
	handles map[*os.Root]*DirHandles
}

// DirReader returns a reader for one walk.
func (r *Roots) DirReader() *DirReader {
	return &DirReader{r: r, handles: make(map[*os.Root]*DirHandles)}
}

// ReadDir is Roots.ReadDir, cheaper for a folder whose parent was read.
func (d *DirReader) ReadDir(abs string) ([]fs.DirEntry, error) {
	root, rel, err := d.r.locate(abs)
	if err != nil {
		return nil, err
	}
	h, ok := d.handles[root]
	if !ok {
		h = NewDirHandles(root)
		d.handles[root] = h
	}
	entries, err := h.ReadDir(rel)
	return entries, rootErr(abs, err)
}

// Close releases the reader's handles.
func (d *DirReader) Close() {
	for _, h := range d.handles {
		h.Close()
	}
}

// rootEntry is an entry listRoot read: its type from the listing, its
// stat made through the folder's handle on first ask. Info is valid
// while the DirHandles that listed it keeps the folder's handle: until
// Close, or dirHandlesKeep folders later; after that it returns an
// error.
type rootEntry struct {
	name string
	mode fs.FileMode // type bits only
	dir  *os.Root

	once sync.Once
	info fs.FileInfo
	err  error
}

func (e *rootEntry) Name() string      { return e.name }
func (e *rootEntry) IsDir() bool       { return e.mode.IsDir() }
func (e *rootEntry) Type() fs.FileMode { return e.mode }
func (e *rootEntry) String() string    { return fs.FormatDirEntry(e) }

// Info stats the entry without following a link, through the folder's
// handle.
func (e *rootEntry) Info() (fs.FileInfo, error) {
	e.once.Do(func() {
		if e.info == nil {
			e.info, e.err = e.dir.Lstat(e.name)
		}
	})
	return e.info, e.err
}
