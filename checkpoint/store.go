package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cline-ls/cline-ls/workspace"
)

// Defaults for Options.
const (
	DefaultMaxFileBytes       = 10 << 20
	DefaultMaxCheckpointBytes = 256 << 20
	DefaultMaxAge             = 7 * 24 * time.Hour
	DefaultMaxStoreBytes      = 500 << 20
	DefaultWorkers            = 2
	DefaultBlobGrace          = 10 * time.Minute
	DefaultLockWait           = time.Minute
	// maxIndexBytes caps the index read: a few hundred bytes per
	// checkpoint, so a larger one is not an index.
	maxIndexBytes = 64 << 20
	// maxListedFiles caps Info.Files; FilesMore counts the rest.
	maxListedFiles = 500
)

// DefaultExclude holds the patterns a checkpoint leaves out on top of
// the workspace's own ignore files: installed dependencies are rebuilt
// by their tools, not restored.
var DefaultExclude = []string{"node_modules/"}

// Options configure a Store.
type Options struct {
	// StateDir is the daemon's state directory; checkpoints go to
	// StateDir/checkpoints/<hash of the folders>/.
	StateDir string
	// Folders are the workspace folders (absolute). A folder inside
	// another is covered by the outer one.
	Folders []string
	// Exclude holds gitignore-syntax patterns applied below every folder
	// with the lowest priority; nil means DefaultExclude.
	Exclude []string
	// MaxFileBytes: a larger file is listed with a note, its content not
	// stored, and a restore leaves it alone. MaxCheckpointBytes caps the
	// content one checkpoint covers the same way (at most MaxStoreBytes);
	// which files pass the cap then depends on the walk's order.
	MaxFileBytes, MaxCheckpointBytes int64
	// MaxAge and MaxStoreBytes drive pruning: older checkpoints go, then
	// the oldest ones until the blobs fit. The newest checkpoint is kept.
	MaxAge        time.Duration
	MaxStoreBytes int64
	// Workers bounds the goroutines that walk and hash.
	Workers int
	// BlobGrace is how long a blob no checkpoint names is kept after it
	// was written: another daemon on the same store may have stored it
	// for a checkpoint it has not saved yet (Prime's blobs wait for the
	// first checkpoint). Zero means DefaultBlobGrace; negative, none.
	BlobGrace time.Duration
	// LockWait bounds the wait for another daemon's operation on the
	// same store (a first checkpoint of a large tree takes seconds);
	// zero means DefaultLockWait.
	LockWait time.Duration
	// PrimeShare is the share of one core Prime's walk may take (it
	// also waits while a tool call runs, Store.Busy): zero means
	// DefaultPrimeShare; 1 or more, no limit.
	PrimeShare float64
	// Own are the daemon's own folders, never checkpointed or restored
	// though they lie in a workspace folder; nil means StateDir's.
	Own *workspace.OwnPaths
	// Now is time.Now outside tests.
	Now func() time.Time
}

func (o *Options) fill() {
	if o.Exclude == nil {
		o.Exclude = DefaultExclude
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxCheckpointBytes <= 0 {
		o.MaxCheckpointBytes = DefaultMaxCheckpointBytes
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.MaxStoreBytes <= 0 {
		o.MaxStoreBytes = DefaultMaxStoreBytes
	}
	// One checkpoint must fit in the store, or pruning could not keep
	// even the newest.
	o.MaxCheckpointBytes = min(o.MaxCheckpointBytes, o.MaxStoreBytes)
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BlobGrace == 0 {
		o.BlobGrace = DefaultBlobGrace
	}
	if o.LockWait <= 0 {
		o.LockWait = DefaultLockWait
	}
	if o.PrimeShare <= 0 {
		o.PrimeShare = DefaultPrimeShare
	}
}

// Info describes a checkpoint.
type Info struct {
	ID         string    `json:"checkpointId"`
	SessionID  string    `json:"sessionId"`
	Turn       int       `json:"turn"`
	ToolCallID string    `json:"toolCallId,omitempty"`
	Time       time.Time `json:"time"`
	Title      string    `json:"title"`
	// Files are the paths whose content or mode changed since the
	// session's previous checkpoint (or the workspace's latest one, for a
	// session's first), sorted; FilesMore counts those left out past 500.
	Files     []string `json:"files"`
	FilesMore int      `json:"filesMore,omitempty"`
	// Notes says what the store repaired on the way to this checkpoint
	// (an index moved aside, a blobs folder made again), for the user:
	// older checkpoints may be gone. Not stored.
	Notes []string `json:"-"`
}

// record is a checkpoint as the index file holds it.
type record struct {
	Info
	Scan     int64        `json:"scan"` // when its walk started, ns since the epoch
	Roots    []rootRef    `json:"roots"`
	Overlays []overlayRef `json:"overlays,omitempty"`
}

// rootRef is the tree of one workspace folder.
type rootRef struct {
	Folder string `json:"folder"`
	Tree   string `json:"tree"`
}

// overlayRef is the text of an open buffer that differed from disk.
type overlayRef struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// indexFile is the store's metadata, replaced atomically on every change,
// under the store's lock file, by whichever daemon changes it: each
// re-reads it under the lock first, so none writes back what it alone
// remembers. GC is drawn afresh by every collection that removes blobs
// (random, so that no writer can bring back a value another daemon last
// saw): a daemon that sees it change drops what it knew of stored blobs.
type indexFile struct {
	Version     int       `json:"version"`
	Folders     []string  `json:"folders"`
	Checkpoints []*record `json:"checkpoints"`
	GC          string    `json:"gc,omitempty"`
}

const indexVersion = 1

// Store holds the checkpoints of one workspace. Its methods are safe for
// concurrent use and run one at a time; between processes (two editor
// windows on one workspace, each with its daemon), every change of the
// index, every collection of blobs and every restore runs under the
// store's lock file with the index read afresh (withLock).
type Store struct {
	opts    Options // guarded by mu where applyLimits changes it (MaxAge, MaxStoreBytes, MaxCheckpointBytes)
	asked   Options // guarded by mu; as the caller gave them, before defaults
	limMu   sync.Mutex
	limits  *[2]int64 // guarded by limMu; max age (ns) and store bytes from SetLimits, until applied
	dir     string
	folders []string         // cleaned, outer ones only, in the caller's order
	roots   []*os.Root       // one per folder: file reads cannot leave it; nil once closed (guarded by mu)
	paths   *workspace.Roots // confines restore writes
	own     *workspace.OwnPaths
	blobs   *blobs
	// ign is kept across scans so that ignore files are read once, not
	// on every checkpoint; checkIgnoreFiles invalidates what changed.
	ign     *workspace.IgnoreMatcher
	ignMu   sync.Mutex
	ignStat map[string]ignoreStat // guarded by ignMu; by folder, and by .git/info/exclude path
	// ignAnswers caches the matcher's answers by folder, sorted by entry name.
	ignAnswers map[string][]ignoreAnswer // guarded by ignMu

	mu      sync.Mutex
	records []*record // guarded by mu; oldest first
	// trees is the folders of records[len-1] (or of Prime's scan) by
	// path, the base for stat-based change detection and the trees a new
	// checkpoint reuses; nil until first needed after Open. latestScan is
	// when the scan behind it started.
	trees      map[string]cachedTree // guarded by mu
	latestScan int64                 // guarded by mu
	sinceGC    int64                 // guarded by mu; blob bytes written since the last Prune
	gcDone     bool                  // guarded by mu; Prune ran in this process
	// treesOf is the id of the record trees belongs to, "" for Prime's
	// scan: another daemon's newer checkpoint makes trees stale.
	treesOf string // guarded by mu
	// seen is the index file as last read or written (its identity and
	// GC mark), so that an unchanged one is not decoded again.
	seen  indexSeen // guarded by mu
	notes []string  // guarded by mu; repairs not yet reported (Info.Notes)
	// partial is what a Prime stopped half-way read and stored, by
	// folder, and partialScan when its walk started: the next
	// checkpoint's base while there is no checkpoint yet.
	partial     map[string]cachedTree // guarded by mu
	partialScan int64                 // guarded by mu
	toldDeep    bool                  // guarded by mu; a note said that a walk stopped at MaxWalkDepth

	busy *busyGate
	// testPace and testScanned let tests stop Prime at a chosen point
	// and see what each scan read; nil outside tests.
	testPace    func()
	testScanned func(prime bool, sc *scanner)
	primeMu     sync.Mutex
	priming     *priming // guarded by primeMu; the Prime running, if any
}

// priming is a Prime under way, which a checkpoint or Close stops.
type priming struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// indexSeen identifies a version of the index file.
type indexSeen struct {
	exists           bool
	ino, size, mtime int64
	gc               string
	blobsIno         int64 // the blobs folder's, which removing it changes
}

// Open opens (creating if need be) the store for opts.Folders.
func Open(opts Options) (*Store, error) {
	asked := opts
	opts.fill()
	if opts.StateDir == "" {
		return nil, errors.New("checkpoint: no state directory")
	}
	folders, err := outerFolders(opts.Folders)
	if err != nil {
		return nil, err
	}
	paths, err := workspace.NewRoots(folders...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	dir := filepath.Join(opts.StateDir, "checkpoints", workspaceKey(folders))
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	own := opts.Own
	if own == nil {
		own = workspace.NewOwnPaths(opts.StateDir) // made: its real path is known
	}
	paths.SetOwn(own)
	s := &Store{
		opts: opts, asked: asked, dir: dir, folders: folders, paths: paths, own: own,
		blobs:   newBlobs(filepath.Join(dir, "blobs"), max(opts.MaxFileBytes, opts.MaxCheckpointBytes)),
		ign:     workspace.NewIgnoreMatcher(folders, opts.Exclude...),
		ignStat: make(map[string]ignoreStat),

		ignAnswers: make(map[string][]ignoreAnswer),
		busy:       newBusyGate(),
	}
	for _, f := range folders {
		r, err := os.OpenRoot(f)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		s.roots = append(s.roots, r)
	}
	// A damaged index does not fail the open: the first checkpoint,
	// under the lock, moves it aside (syncIndex).
	if err := s.syncIndex(false); err != nil && !errors.Is(err, errDamagedIndex) {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SetLimits changes the pruning limits of an open store (zero takes the
// default, as in Options); the next checkpoint prunes by them. It does
// not wait for an operation under way (a first checkpoint takes seconds).
func (s *Store) SetLimits(maxAge time.Duration, maxStoreBytes int64) {
	s.limMu.Lock()
	s.limits = &[2]int64{int64(maxAge), maxStoreBytes}
	s.limMu.Unlock()
}

// applyLimits takes the limits SetLimits left, if any; s.mu is held.
func (s *Store) applyLimits() {
	s.limMu.Lock()
	l := s.limits
	s.limits = nil
	s.limMu.Unlock()
	if l == nil {
		return
	}
	s.asked.MaxAge, s.asked.MaxStoreBytes = time.Duration(l[0]), l[1]
	o := s.asked
	o.fill()
	s.opts.MaxAge, s.opts.MaxStoreBytes, s.opts.MaxCheckpointBytes = o.MaxAge, o.MaxStoreBytes, o.MaxCheckpointBytes
	s.gcDone = false
}

var errClosed = errors.New("checkpoint: the store is closed")

// ErrNotFound is wrapped by the errors for a checkpoint id the session
// does not have.
var ErrNotFound = errors.New("no such checkpoint")

// Close releases the folder handles, once the operation under way ends.
func (s *Store) Close() error {
	s.stopPrime()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.roots {
		r.Close()
	}
	s.roots = nil
	return nil
}

// outerFolders cleans the folders and drops those inside another, whose
// files the outer one already covers.
func outerFolders(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, errors.New("checkpoint: no workspace folder")
	}
	var out []string
	for _, f := range in {
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("checkpoint: workspace folder %q is not absolute", f)
		}
		if real, err := filepath.EvalSymlinks(f); err == nil {
			f = real
		}
		out = append(out, filepath.Clean(f))
	}
	keep := out[:0:0]
	for i, f := range out {
		inner := false
		for j, g := range out {
			if i != j && (g != f && strings.HasPrefix(f, g+string(filepath.Separator)) || g == f && j < i) {
				inner = true
				break
			}
		}
		if !inner {
			keep = append(keep, f)
		}
	}
	return keep, nil
}

// workspaceKey names a workspace's folder under the state directory.
func workspaceKey(folders []string) string {
	sorted := slices.Sorted(slices.Values(folders))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\x00")))
	return hex.EncodeToString(sum[:8])
}

func (s *Store) indexPath() string { return filepath.Join(s.dir, "index.json") }

func (s *Store) lockPath() string  { return filepath.Join(s.dir, "lock") }
func (s *Store) blobsPath() string { return filepath.Join(s.dir, "blobs") }

// errDamagedIndex is wrapped by readIndex's error for an index file that
// cannot be one of ours: not a regular file, too large, not JSON.
var errDamagedIndex = errors.New("damaged")

// withLock runs fn with s.mu held, under the store's lock file (waiting
// for another daemon's operation up to LockWait) and with the index read
// afresh: what another daemon saved is in s.records before fn looks.
// The lock file comes first, so that a wait for another daemon does not
// hold s.mu, which List (on the connection's read loop) takes.
func (s *Store) withLock(ctx context.Context, fn func() error) error {
	wait, cancel := context.WithTimeout(ctx, s.opts.LockWait)
	defer cancel()
	// A store folder removed whole is made again (syncIndex says so, as
	// its blobs folder is then missing too).
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	l, err := workspace.LockStateFile(wait, s.lockPath())
	if err != nil {
		return fmt.Errorf("checkpoint: the store is busy or unusable: %w", err)
	}
	defer l.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.roots == nil {
		return errClosed
	}
	if err := s.syncIndex(true); err != nil {
		return err
	}
	return fn()
}

// syncIndex brings s.records to the index file if it changed since it
// was last read or written. With the lock held (locked) it also repairs
// what it can: a damaged index is moved aside to index.json.bad-<time>
// and the store starts afresh; a removed blobs folder is made again.
// Either way, and when another daemon's collection removed blobs, what
// this one knew of stored blobs and trees is dropped.
func (s *Store) syncIndex(locked bool) error {
	seen, idx, err := s.readIndex()
	if err != nil {
		if !locked || !errors.Is(err, errDamagedIndex) {
			return err
		}
		aside := s.indexPath() + ".bad-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(s.indexPath(), aside); rerr != nil {
			return fmt.Errorf("%w (and moving it aside failed: %v)", err, rerr)
		}
		s.notes = append(s.notes, fmt.Sprintf("%v; it was moved to %s and a new index started: earlier checkpoints cannot be restored", err, aside))
		s.records, seen, idx = nil, indexSeen{gc: newGC()}, nil
		s.forgetBlobs()
	}
	if bi, err := os.Lstat(s.blobsPath()); locked && (err != nil || !bi.IsDir()) {
		if err == nil {
			return fmt.Errorf("checkpoint: %s is %s, not a folder", s.blobsPath(), workspace.FileKind(bi.Mode()))
		}
		if err := os.MkdirAll(s.blobsPath(), 0o700); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		s.notes = append(s.notes, fmt.Sprintf("the checkpoint store's blobs folder %s was missing; it was made again: earlier checkpoints cannot be restored", s.blobsPath()))
		s.forgetBlobs()
	}
	if bi, err := os.Lstat(s.blobsPath()); err == nil {
		seen.blobsIno = int64(inode(bi))
	}
	if seen == s.seen {
		return nil
	}
	if seen.gc != s.seen.gc || seen.blobsIno != s.seen.blobsIno {
		s.forgetBlobs()
	}
	if idx != nil {
		s.records = idx.Checkpoints
	} else if !seen.exists {
		s.records = nil // no index (yet, or removed)
	}
	if n := len(s.records); s.trees != nil && (n > 0 && s.records[n-1].ID != s.treesOf || n == 0 && s.treesOf != "") {
		s.trees, s.latestScan = nil, 0 // another daemon's checkpoint is the newest now
	}
	s.seen = seen
	return nil
}

// forgetBlobs drops what this process knew to be stored: another
// daemon's collection (or the user) may have removed any of it.
func (s *Store) forgetBlobs() {
	s.blobs.forget()
	s.trees, s.latestScan, s.treesOf = nil, 0, ""
}

// readIndex reads the index file with the state directory's rules: a
// regular file, opened without blocking, read with a cap. A missing one
// is an empty store (a zero indexSeen and a nil index); an index this
// build cannot read is an error naming the file.
func (s *Store) readIndex() (indexSeen, *indexFile, error) {
	p := s.indexPath()
	f, fi, err := workspace.OpenRegular(p, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return indexSeen{gc: s.seen.gc}, nil, nil
	}
	var nr *workspace.NotRegularFileError
	if errors.As(err, &nr) {
		return indexSeen{}, nil, fmt.Errorf("checkpoint: index %s is %w: %v", p, errDamagedIndex, err)
	}
	if err != nil {
		return indexSeen{}, nil, fmt.Errorf("checkpoint: read index: %w", err)
	}
	defer f.Close()
	seen := indexSeen{exists: true, ino: int64(inode(fi)), size: fi.Size(), mtime: fi.ModTime().UnixNano(), gc: s.seen.gc}
	if s.seen.exists && seen.ino == s.seen.ino && seen.size == s.seen.size && seen.mtime == s.seen.mtime {
		return s.seen, nil, nil
	}
	r, err := workspace.CapReader(f, p, fi, maxIndexBytes)
	if err != nil {
		return indexSeen{}, nil, fmt.Errorf("checkpoint: index %s is %w: %v", p, errDamagedIndex, err)
	}
	var idx indexFile
	if err := json.NewDecoder(r).Decode(&idx); err != nil {
		return indexSeen{}, nil, fmt.Errorf("checkpoint: index %s is %w: %v", p, errDamagedIndex, err)
	}
	if idx.Version != indexVersion {
		return indexSeen{}, nil, fmt.Errorf("checkpoint: index %s has version %d, this build reads %d", p, idx.Version, indexVersion)
	}
	seen.gc = idx.GC
	return seen, &idx, nil
}

// saveIndex writes s.records; the lock is held (withLock). gcRan says
// blobs were removed since the index was read, which a new GC mark tells
// other daemons.
func (s *Store) saveIndex(gcRan bool) error {
	gc := s.seen.gc
	if gcRan {
		gc = newGC()
	}
	data, err := json.Marshal(indexFile{Version: indexVersion, Folders: s.folders, Checkpoints: s.records, GC: gc})
	if err != nil {
		return err
	}
	if err := workspace.WriteFileAtomic(s.indexPath(), data, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	seen := indexSeen{gc: gc, blobsIno: s.seen.blobsIno}
	if fi, err := os.Stat(s.indexPath()); err == nil {
		seen.exists, seen.ino, seen.size, seen.mtime = true, int64(inode(fi)), fi.Size(), fi.ModTime().UnixNano()
	}
	s.seen = seen
	return nil
}

// newGC draws the mark of a collection (indexFile.GC).
func newGC() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// takeNotes returns the repairs not yet reported.
func (s *Store) takeNotes() []string {
	n := s.notes
	s.notes = nil
	return n
}

// Request says who makes a checkpoint.
type Request struct {
	SessionID  string
	Turn       int
	ToolCallID string // empty for the checkpoint before a turn
	Title      string
	// Overlay holds the text of open buffers by absolute path; those whose
	// text equals the file on disk are not stored twice.
	Overlay map[string]string
}

// Checkpoint records the workspace now. Only files whose stat differs
// from the latest checkpoint are read.
func (s *Store) Checkpoint(ctx context.Context, req Request) (Info, error) {
	s.stopPrime()
	var info Info
	err := s.withLock(ctx, func() error {
		var err error
		info, err = s.checkpoint(ctx, req)
		return err
	})
	s.mu.Lock()
	info.Notes = s.takeNotes()
	s.mu.Unlock()
	return info, err
}

func (s *Store) checkpoint(ctx context.Context, req Request) (Info, error) {
	s.applyLimits()
	base, err := s.latestDirs()
	if err != nil {
		// The newest checkpoint's trees are gone (blobs removed by hand,
		// say): this checkpoint reads every file rather than none being
		// taken at all.
		base, s.trees, s.latestScan = nil, nil, 0
	}
	trust := s.latestScan
	if base == nil && s.partial != nil {
		base, trust = s.partial, s.partialScan
	}
	// The scan start is compared with file mtimes, so it is the real
	// clock's; opts.Now dates the checkpoint.
	scanStart := time.Now()
	start := s.opts.Now()
	sd, sc, err := s.scan(ctx, true, base, trust)
	if err != nil {
		return Info{}, err
	}
	s.noteDepth(sc)
	if s.testScanned != nil {
		s.testScanned(false, sc)
	}
	written := sc.written.Load()
	roots, dirs, n, err := s.writeTrees(sd)
	written += n
	if err != nil {
		return Info{}, err
	}
	overlays, n, err := s.storeOverlays(sd, req.Overlay)
	written += n
	if err != nil {
		return Info{}, err
	}
	rec := &record{
		Info: Info{
			ID: newID(start), SessionID: req.SessionID, Turn: req.Turn,
			ToolCallID: req.ToolCallID, Time: start.UTC(), Title: req.Title,
		},
		Scan: scanStart.UnixNano(), Roots: roots, Overlays: overlays,
	}
	if prev := s.previous(req.SessionID); prev != nil {
		disk, err := s.changedOnDisk(prev.Roots, roots, mergedTrees(base, dirs))
		if err != nil {
			return Info{}, err
		}
		files := changedPaths(disk, prev.Overlays, overlays)
		if len(files) > maxListedFiles {
			rec.FilesMore = len(files) - maxListedFiles
			files = files[:maxListedFiles]
		}
		rec.Files = files
	}
	if rec.Files == nil {
		rec.Files = []string{}
	}
	s.records = append(s.records, rec)
	if err := s.saveIndex(false); err != nil {
		s.records = s.records[:len(s.records)-1]
		return Info{}, err
	}
	s.trees, s.latestScan, s.treesOf = dirs, rec.Scan, rec.ID
	s.partial = nil
	s.sinceGC += written
	if !s.gcDone || s.sinceGC > s.opts.MaxStoreBytes/10 || s.expired() {
		if err := s.prune(); err != nil {
			return rec.Info, fmt.Errorf("checkpoint %s saved, but pruning failed: %w", rec.ID, err)
		}
	}
	return rec.Info, nil
}

// mergedTrees returns a lookup of folders by path that holds both a's
// and b's (b's where both have one): a tree is taken from it only when
// its hash is the one asked for.
func mergedTrees(a, b map[string]cachedTree) func(dir, hash string) (cachedTree, bool) {
	return func(dir, hash string) (cachedTree, bool) {
		if t, ok := b[dir]; ok && t.hash == hash {
			return t, true
		}
		t, ok := a[dir]
		return t, ok && t.hash == hash
	}
}

// newID returns a checkpoint id that sorts by time.
func newID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return "ck-" + strconv.FormatInt(t.UnixNano(), 36) + "-" + hex.EncodeToString(b[:])
}

// latestDirs returns the folders of the newest checkpoint, reading its
// trees after a restart.
func (s *Store) latestDirs() (map[string]cachedTree, error) {
	if s.trees != nil || len(s.records) == 0 {
		return s.trees, nil
	}
	last := s.records[len(s.records)-1]
	dirs, err := s.readDirs(last.Roots)
	if err != nil {
		return nil, err
	}
	s.trees, s.latestScan, s.treesOf = dirs, last.Scan, last.ID
	return dirs, nil
}

// Prime prepares the first checkpoint of a workspace that has none: it
// reads and stores every file and folder tree now, so that the
// checkpoint a turn takes before its first change only reads what
// changed since. The blobs it stores are referenced by that checkpoint;
// Prune, which runs only after a checkpoint, keeps them, and another
// daemon's leaves them for BlobGrace (should it remove them later, the
// mark of collections in the index makes this store forget them). With
// checkpoints on disk it only loads the newest one's folders.
//
// Prime runs in the background of the user's work, so it is kept
// small: one walker, held to Options.PrimeShare of a core, paused while
// a tool call runs (Busy), and without the store's lock, which a
// checkpoint wanting the store does not wait for: the checkpoint stops
// Prime and reads only what Prime had not read yet. progress, if not
// nil, is called now and then with the files read so far.
func (s *Store) Prime(ctx context.Context, progress func(files int64)) error {
	s.mu.Lock()
	// Another daemon's checkpoints since Open count as this one's would.
	_ = s.syncIndex(false)
	if len(s.records) > 0 || s.trees != nil {
		_, err := s.latestDirs()
		s.mu.Unlock()
		return err
	}
	s.primeMu.Lock()
	if s.priming != nil {
		s.primeMu.Unlock()
		s.mu.Unlock()
		return nil // one is under way
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &priming{cancel: cancel, done: make(chan struct{})}
	s.priming = p
	s.primeMu.Unlock()
	cfg := s.scanConfig()
	cfg.workers = 1
	cfg.pace = newPacer(pctx, s.opts.PrimeShare, s.busy).pace
	if hook, pace := s.testPace, cfg.pace; hook != nil {
		cfg.pace = func() { hook(); pace() }
	}
	cfg.files = new(atomic.Int64)
	prev, trust := s.partial, s.partialScan
	s.mu.Unlock()
	defer func() {
		s.primeMu.Lock()
		s.priming = nil
		s.primeMu.Unlock()
		cancel()
		close(p.done)
	}()
	if progress != nil {
		stop, stopped := make(chan struct{}), make(chan struct{})
		// No call of progress after Prime returns.
		defer func() { close(stop); <-stopped }()
		go func() {
			defer close(stopped)
			t := time.NewTicker(primeReportEvery)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					progress(cfg.files.Load())
				case <-stop:
					return
				}
			}
		}()
	}
	start := time.Now()
	sd, sc, err := s.scanWith(pctx, cfg, true, prev, trust)
	if s.testScanned != nil && sc != nil {
		s.testScanned(true, sc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees != nil || len(s.records) > 0 {
		return nil // a checkpoint came first
	}
	if err != nil {
		if sc != nil && pctx.Err() != nil {
			// Stopped: what was read is stored, and the checkpoint
			// that stopped it starts from there. A file whose mtime is
			// not before the start of the walk that read it is read
			// again; the entries reused from an earlier stop keep that
			// walk's, earlier, start.
			if prev == nil {
				trust = start.UnixNano()
			}
			s.partial, s.partialScan = sc.partial(), trust
		}
		return err
	}
	s.noteDepth(sc)
	_, dirs, _, err := s.writeTrees(sd)
	if err != nil {
		return err
	}
	s.trees, s.latestScan, s.treesOf = dirs, start.UnixNano(), ""
	s.partial = nil
	return nil
}

// primeReportEvery is how often Prime reports its progress.
var primeReportEvery = time.Second

// stopPrime stops the Prime under way, if any, and waits for it to
// leave what it read (s.partial). s.mu is not held.
func (s *Store) stopPrime() {
	s.primeMu.Lock()
	p := s.priming
	s.primeMu.Unlock()
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// Busy tells the store that a tool call runs, until done is called:
// Prime waits meanwhile, so that the user's call has the machine.
func (s *Store) Busy() (done func()) { return s.busy.enter() }

// noteDepth leaves a note, once per store, when the walk met folders
// it does not enter; s.mu is held.
func (s *Store) noteDepth(sc *scanner) {
	sc.mu.Lock()
	n := sc.tooDeep
	sc.mu.Unlock()
	if n == 0 || s.toldDeep {
		return
	}
	s.toldDeep = true
	s.notes = append(s.notes, fmt.Sprintf("%d folder(s) %d levels below a workspace folder are not entered: nothing in them is in the checkpoint, and a restore leaves them as they are", n, workspace.MaxWalkDepth))
}

// previous returns the session's newest checkpoint, else the
// workspace's, else nil.
func (s *Store) previous(session string) *record {
	for i := len(s.records) - 1; i >= 0; i-- {
		if s.records[i].SessionID == session {
			return s.records[i]
		}
	}
	if n := len(s.records); n > 0 {
		return s.records[n-1]
	}
	return nil
}

// storeOverlays stores the open buffers whose text differs from disk.
func (s *Store) storeOverlays(sd scanned, overlay map[string]string) ([]overlayRef, int64, error) {
	var refs []overlayRef
	var written int64
	for p, text := range overlay {
		p = filepath.Clean(p)
		if s.folderOf(p) == "" || s.own.Holds(p) || s.ign.Ignored(p, false) {
			continue
		}
		if int64(len(text)) > s.blobs.limit {
			continue // a restore could not read it back
		}
		h := hashOf([]byte(text))
		if st, ok := sd.lookup(p); ok && st.Hash == h {
			continue
		}
		n, err := s.blobs.put(h, []byte(text))
		if err != nil {
			return nil, written, err
		}
		written += n
		refs = append(refs, overlayRef{Path: p, Hash: h, Size: int64(len(text))})
	}
	slices.SortFunc(refs, func(a, b overlayRef) int { return strings.Compare(a.Path, b.Path) })
	return refs, written, nil
}

// changedPaths lists the paths whose content or mode differ between two
// checkpoints' views, given the files that differ on disk: the buffer's
// text where one was open and differed from disk, else the file on disk.
func changedPaths(disk []string, ao, bo []overlayRef) []string {
	aov, bov := overlayMap(ao), overlayMap(bo)
	out := slices.Clone(disk)
	for p := range aov {
		out = append(out, p)
	}
	for p := range bov {
		out = append(out, p)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(p string) bool {
		ha, oka := aov[p]
		hb, okb := bov[p]
		return (oka || okb) && oka == okb && ha == hb
	})
}

// List returns a session's checkpoints, oldest first.
func (s *Store) List(session string) []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The index is replaced by a rename, so reading it needs no lock:
	// another daemon's checkpoints are listed as soon as it saved them.
	// One that cannot be read leaves the list as it was last read.
	// The next checkpoint, under the lock, repairs a damaged one and
	// says so.
	_ = s.syncIndex(false)
	var out []Info
	for _, r := range s.records {
		if r.SessionID == session {
			info := r.Info
			info.Files = slices.Clone(r.Files)
			out = append(out, info)
		}
	}
	return out
}

// find returns a session's checkpoint and the session's newest one.
func (s *Store) find(session, id string) (ck, latest *record, err error) {
	for _, r := range s.records {
		if r.SessionID != session {
			continue
		}
		if r.ID == id {
			ck = r
		}
		latest = r
	}
	if ck == nil {
		return nil, nil, fmt.Errorf("checkpoint: session %s has no checkpoint %q: %w", session, id, ErrNotFound)
	}
	return ck, latest, nil
}

func (s *Store) expired() bool {
	return len(s.records) > 1 && s.records[0].Time.Before(s.opts.Now().Add(-s.opts.MaxAge))
}

// PruneStats reports what Prune did.
type PruneStats struct {
	Removed      int   // checkpoints removed
	KeptBytes    int64 // blob bytes still stored
	RemovedBytes int64 // blob bytes removed
}

// Prune removes checkpoints older than MaxAge, then the oldest ones
// while the blobs the rest reach exceed MaxStoreBytes (the newest
// checkpoint always stays), and deletes the blobs no checkpoint reaches.
// Checkpoint calls it when enough was written since the last run.
func (s *Store) Prune() (PruneStats, error) {
	var st PruneStats
	err := s.withLock(context.Background(), func() error {
		s.applyLimits()
		var err error
		st, err = s.pruneStats()
		return err
	})
	return st, err
}

func (s *Store) prune() error {
	_, err := s.pruneStats()
	return err
}

func (s *Store) pruneStats() (PruneStats, error) {
	var st PruneStats
	cutoff := s.opts.Now().Add(-s.opts.MaxAge)
	keep := make(map[string]bool)
	var total int64
	first := 0 // records[first:] stay
	for i := len(s.records) - 1; i >= 0; i-- {
		r := s.records[i]
		newest := i == len(s.records)-1
		if !newest && r.Time.Before(cutoff) {
			first = i + 1
			break
		}
		// A checkpoint that would pass the cap must leave no marks, so
		// its blobs are gathered apart first.
		fresh := make(map[string]bool)
		added, err := s.markTrees(r.Roots, keep, fresh)
		if err != nil {
			return st, err
		}
		for _, o := range r.Overlays {
			if !keep[o.Hash] && !fresh[o.Hash] {
				fresh[o.Hash] = true
				added += o.Size
			}
		}
		if !newest && total+added > s.opts.MaxStoreBytes {
			first = i + 1
			break
		}
		for h := range fresh {
			keep[h] = true
		}
		total += added
	}
	// Every checkpoint of the store is in s.records, re-read under the
	// lock (withLock), so keep holds every blob any daemon's index names.
	garbage, kept, err := s.blobs.unreferenced(keep, s.opts.BlobGrace)
	st.KeptBytes = kept
	if err != nil {
		return st, err
	}
	if first > 0 || len(garbage) > 0 {
		st.Removed = first
		old := s.records
		s.records = slices.Clone(s.records[first:])
		// The index goes first: a crash between the two steps leaves
		// unreferenced blobs, never a checkpoint missing its blobs. Its
		// new GC mark tells other daemons to forget the blobs they knew.
		if err := s.saveIndex(len(garbage) > 0); err != nil {
			s.records = old
			return st, err
		}
	}
	removed, err := s.blobs.remove(garbage)
	st.RemovedBytes = removed
	if err != nil {
		return st, err
	}
	s.sinceGC = 0
	s.gcDone = true
	return st, nil
}
