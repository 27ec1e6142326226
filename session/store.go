package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/workspace"
)

// Session files (docs/DESIGN.md §5) are JSON lines, one record per line, in
// <state dir>/sessions/<sessionId>.jsonl. The first line is a meta record;
// every later line records one change to the session in the order it
// happened. A record is committed once its line, newline included, is on
// disk: a crash can only leave the last line torn, and readers ignore it.

// Record types. A new kind of record adds a constant here and an omitempty
// field to Record; readers skip types they do not know, so a file written
// by a newer daemon still loads in an older one, minus what it cannot
// understand.
const (
	// RecordMeta opens every session file and carries Meta. It is written
	// by Store.Create only.
	RecordMeta = "meta"
	// RecordMessage carries one history message in Message.
	RecordMessage = "message"
	// RecordMode carries the session's new mode in Mode.
	RecordMode = "mode"
	// RecordPlan carries the whole plan in Plan, replacing the previous
	// one (an empty Plan clears it), as PROTOCOL.md §3's plan update does.
	RecordPlan = "plan"
	// RecordTitle carries the session's new title in Title.
	RecordTitle = "title"
	// RecordUsage carries the token counts of one model reply in Usage,
	// and its price in CostUSD when the model's prices are known.
	RecordUsage = "usage"
	// RecordCompaction carries a compaction in Compaction: how the
	// history the model sees was shortened. The message records before
	// it stay in the file; Resume applies it to rebuild the view.
	RecordCompaction = "compaction"
	// RecordEdited carries, in Edited, files a tool call changed for the
	// first time in the session.
	RecordEdited = "edited"
	// RecordRewind drops the conversation after its first Keep messages
	// (a checkpoint restored with its conversation); the messages stay in
	// the file before it.
	RecordRewind = "rewind"
)

// storeFormatVersion is written in every meta record. Additive changes
// (new record types, new fields) keep it; a change old readers would
// misread bumps it, and Load refuses files newer than it knows.
const storeFormatVersion = 1

// storeMaxIDLen bounds session ids, which become file names.
const storeMaxIDLen = 128

// DefaultMaxSessionBytes is the largest session file a Store reads: far
// more than any conversation a model's window holds, and far less than
// an endless file (a link to /dev/zero, a runaway writer) would take.
const DefaultMaxSessionBytes = 256 << 20

// HeldError is the error for a session whose history another daemon
// holds open (PROTOCOL.md §12): one writer per session, across
// processes, or the two histories would fork. PID is that daemon's
// process, 0 when it could not be read.
type HeldError struct {
	ID  string
	PID int
}

// Error implements error.
func (e *HeldError) Error() string {
	who := "another cline-ls"
	if e.PID > 0 {
		who = fmt.Sprintf("another cline-ls (process %d)", e.PID)
	}
	return fmt.Sprintf("session %s is open in %s; close it there, or fork it to continue it here", e.ID, who)
}

// ErrInvalidSessionID is wrapped by every error about a session id that
// cannot name a session file.
var ErrInvalidSessionID = errors.New("invalid session id")

// ErrLogClosed is returned by a Log's methods after Close.
var ErrLogClosed = errors.New("session log closed")

// Record is one line of a session file. Type says which of the payload
// fields is set; Time is when the change happened (Log.Append fills in the
// current time when it is zero). Fields are omitted from the line when
// empty, so a line holds only its own payload.
//
// Records are encoded with their fields in this order, which lets List
// read the type and time of a line from its first bytes without decoding
// a long message: keep Type and Time first.
type Record struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Meta is set on RecordMeta.
	Meta *Meta `json:"meta,omitempty"`
	// Message is set on RecordMessage.
	Message *provider.Message `json:"message,omitempty"`
	// Mode is set on RecordMode.
	Mode string `json:"mode,omitempty"`
	// Plan is set on RecordPlan (PlanEntry is declared with the plan
	// tool); nil or empty means the plan was cleared.
	Plan []PlanEntry `json:"plan,omitempty"`
	// Title is set on RecordTitle; empty means the title was cleared.
	Title string `json:"title,omitempty"`
	// Usage and CostUSD are set on RecordUsage.
	Usage   *provider.Usage `json:"usage,omitempty"`
	CostUSD float64         `json:"costUsd,omitempty"`
	// Compaction is set on RecordCompaction.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Edited is set on RecordEdited: files changed; Read, files read
	// (either may be set).
	Edited []string `json:"edited,omitempty"`
	Read   []string `json:"read,omitempty"`
	// Keep is set on RecordRewind: how many messages of the history stay.
	Keep int `json:"keep,omitempty"`
}

// Meta describes a session as it was created. Later mode and title
// records override Mode and Title; Meta itself is never rewritten, which
// keeps the file append-only.
type Meta struct {
	SessionID string    `json:"sessionId"`
	Cwd       string    `json:"cwd"`
	Mode      string    `json:"mode,omitempty"`
	Title     string    `json:"title,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// ParentID names the session that started this one as a subagent.
	ParentID string `json:"parentId,omitempty"`
	// ParentSessionID names the session this one was forked from, and
	// ForkedAtTurn the turns of it the fork began with (0: all).
	ParentSessionID string `json:"parentSessionId,omitempty"`
	ForkedAtTurn    int    `json:"forkedAtTurn,omitempty"`
	// Version is the file format version; Store.Create sets it.
	Version int `json:"version,omitempty"`
}

// Summary is what session/list reports about a session (PROTOCOL.md §3).
type Summary struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title"`
	// UpdatedAt is the time of the session's latest record, or the file's
	// modification time when no record has one.
	UpdatedAt time.Time `json:"updatedAt"`
	// ParentID is set for subagent sessions, which callers may hide.
	ParentID string `json:"parentId,omitempty"`
	// ParentSessionID is set for a fork: the session it was forked from.
	ParentSessionID string `json:"parentSessionId,omitempty"`
	// HeldBy is the process of another daemon that holds the session
	// open, 0 when none does (or this store holds it).
	HeldBy int `json:"heldBy,omitempty"`
}

// StoreOptions tune a Store.
type StoreOptions struct {
	// Redact, when set, rewrites every line before it is written, without
	// its newline: the session layer passes a function that replaces the
	// values of API keys, in case a model or a tool echoed one. It sees
	// JSON text (HTML characters are not escaped), and what it returns
	// must still be one valid JSON line or Append fails.
	Redact func(string) string
	// Logger receives what the store tolerates rather than fails on: torn
	// last lines and unreadable files skipped by List. slog.Default when
	// nil.
	Logger *slog.Logger
	// MaxFileBytes caps the session file read; 0 means
	// DefaultMaxSessionBytes.
	MaxFileBytes int64
}

// Store keeps session files under one state directory. It is safe for
// concurrent use. A session has at most one open Log: within one Store
// by a map, and across stores and processes by an flock of
// <sessionId>.lock beside the file, held while the Log is open, which
// holds the holder's process id for others to name (*HeldError).
type Store struct {
	dir  string // <state dir>/sessions
	opts StoreOptions
	log  *slog.Logger

	mu   sync.Mutex
	open map[string]bool // ids with an open Log
}

// DefaultStateDir returns cline-ls's state directory:
// $XDG_STATE_HOME/cline-ls, or $HOME/.local/state/cline-ls when
// XDG_STATE_HOME is unset or not absolute (the XDG spec says to ignore
// relative values). It returns "" when neither variable helps. getenv is
// os.Getenv outside tests.
func DefaultStateDir(getenv func(string) string) string {
	if xdg := getenv("XDG_STATE_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "cline-ls")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "cline-ls")
	}
	return ""
}

// NewStore returns a Store over dir with default options, creating
// dir/sessions (mode 0700: histories may hold private code) if needed.
func NewStore(dir string) (*Store, error) {
	return NewStoreWithOptions(dir, StoreOptions{})
}

// NewStoreWithOptions is NewStore with options.
func NewStoreWithOptions(dir string, opts StoreOptions) (*Store, error) {
	if dir == "" {
		return nil, errors.New("session store: no state directory")
	}
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxSessionBytes
	}
	return &Store{dir: sessions, opts: opts, log: logger, open: map[string]bool{}}, nil
}

// CheckSessionID reports whether id can name a session file: 1 to 128
// characters from [A-Za-z0-9._-], neither starting with a dot nor holding
// "..". Ids come back from clients on session/load, so this is what keeps
// a hostile id from reaching outside the sessions folder (no separators,
// no traversal, no hidden or special names). The error wraps
// ErrInvalidSessionID.
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidSessionID)
	case len(id) > storeMaxIDLen:
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidSessionID, storeMaxIDLen)
	case id[0] == '.' || strings.Contains(id, ".."):
		return fmt.Errorf("%w %q: starts with a dot or contains \"..\"", ErrInvalidSessionID, id)
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("%w %q: only letters, digits, '.', '-' and '_' are allowed", ErrInvalidSessionID, id)
		}
	}
	return nil
}

// path returns the file of a valid session id.
func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".jsonl") }

// lockPath returns the lock file of a valid session id.
func (s *Store) lockPath(id string) string { return filepath.Join(s.dir, id+".lock") }

// openRead opens a session file for reading by the state directory's
// rules: a regular file (a FIFO or a device cannot block or flood the
// daemon), read through a cap of MaxFileBytes.
func (s *Store) openRead(id string) (*os.File, *bufio.Reader, error) {
	f, fi, err := workspace.OpenRegular(s.path(id), os.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	r, err := workspace.CapReader(f, s.path(id), fi, s.opts.MaxFileBytes)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, bufio.NewReaderSize(r, 64<<10), nil
}

// Create starts the file of a new session with its meta record, made
// durable before Create returns, and returns the Log to append to it.
// CreatedAt defaults to now. It fails, wrapping fs.ErrExist, when the
// session already exists.
func (s *Store) Create(meta Meta) (*Log, error) {
	id := meta.SessionID
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = time.Now().UTC()
	}
	meta.Version = storeFormatVersion
	line, err := s.encode(Record{Type: RecordMeta, Time: meta.CreatedAt, Meta: &meta})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	lock, err := s.claim(id)
	if err != nil {
		return nil, err
	}
	path := s.path(id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		s.release(id, lock)
		return nil, fmt.Errorf("session %s: create: %w", id, err)
	}
	fail := func(err error) (*Log, error) {
		f.Close()
		os.Remove(path)
		s.release(id, lock)
		return nil, fmt.Errorf("session %s: create: %w", id, err)
	}
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// The new directory entry must survive a crash too, or the session
	// would vanish with its durable contents.
	if err := storeSyncDir(s.dir); err != nil {
		return fail(err)
	}
	return &Log{store: s, id: id, f: f, size: int64(len(line)), lock: lock}, nil
}

// Fork makes session dst a copy of session src up to its turn atTurn
// (1-based; 0 copies every turn), with src as its parent, and returns
// the new session's meta. It reads src's file without taking its lock:
// a session another daemon holds can be forked, and the fork is its own
// file with its own lock. The copy holds what src's file held when it
// was read (a turn in flight in another daemon is not in it yet). cwd,
// when not empty, replaces src's folder.
func (s *Store) Fork(src, dst string, atTurn int, cwd string) (Meta, error) {
	meta, recs, err := s.Load(src)
	if err != nil {
		return Meta{}, err
	}
	if err := CheckSessionID(dst); err != nil {
		return Meta{}, err
	}
	recs, err = UpToTurn(recs, atTurn)
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: %w", src, err)
	}
	fork := Meta{SessionID: dst, Cwd: meta.Cwd, Mode: meta.Mode, Title: meta.Title, ParentSessionID: src, ForkedAtTurn: atTurn}
	if cwd != "" {
		fork.Cwd = cwd
	}
	log, err := s.Create(fork)
	if err != nil {
		return Meta{}, err
	}
	err = log.Append(recs...)
	if err == nil {
		err = log.Flush()
	}
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.Remove(dst)
		return Meta{}, fmt.Errorf("session %s: fork: %w", dst, err)
	}
	return fork, nil
}

// Remove deletes a session's file (a session/new that failed after its
// file was made). An open Log of it must be closed first.
func (s *Store) Remove(id string) error {
	if err := CheckSessionID(id); err != nil {
		return err
	}
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s: remove: %w", id, err)
	}
	os.Remove(s.lockPath(id))
	return nil
}

// Open returns a Log appending to an existing session, typically after
// Load. A torn last line left by a crash is cut off first, so that new
// records start on a line of their own; Load ignores such a line anyway.
func (s *Store) Open(id string) (*Log, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	lock, err := s.claim(id)
	if err != nil {
		return nil, err
	}
	f, _, err := workspace.OpenRegular(s.path(id), os.O_RDWR|os.O_APPEND)
	if err != nil {
		s.release(id, lock)
		return nil, fmt.Errorf("session %s: open: %w", id, err)
	}
	size, err := s.repairTail(id, f)
	if err != nil {
		f.Close()
		s.release(id, lock)
		return nil, fmt.Errorf("session %s: open: %w", id, err)
	}
	return &Log{store: s, id: id, f: f, size: size, lock: lock}, nil
}

// claim records that id has an open Log and takes its lock file; two
// Logs on one file, in this daemon or another, would interleave their
// turns and defeat the repair done by Open. A session another holds is
// a *HeldError.
func (s *Store) claim(id string) (*workspace.StateLock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[id] {
		return nil, fmt.Errorf("session %s: already open", id)
	}
	lock, err := workspace.TryLockStateFile(s.lockPath(id))
	if errors.Is(err, workspace.ErrLocked) {
		return nil, &HeldError{ID: id, PID: s.holder(id)}
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	// Who holds it, for the others' errors and lists.
	f := lock.File()
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	s.open[id] = true
	return lock, nil
}

// release undoes claim: the lock file is emptied, so that a list does
// not name this process once it let go, and unlocked.
func (s *Store) release(id string, lock *workspace.StateLock) {
	if lock != nil {
		lock.File().Truncate(0)
		lock.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, id)
}

// holder reads the process id in a session's lock file: 0 when there is
// none, or the file is not one this store wrote.
func (s *Store) holder(id string) int {
	data, err := workspace.ReadRegularFile(s.lockPath(id), 32)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// heldBy reports the process of another daemon (or another Store of this
// one) that holds session id open, 0 when none does. It reads the pid a
// holder writes and checks that process lives, rather than try the lock,
// which would make a daemon opening the session at that moment fail; a
// daemon killed without releasing leaves its pid, which the check of its
// life sees through (unless the pid was reused meanwhile).
func (s *Store) heldBy(id string) int {
	s.mu.Lock()
	mine := s.open[id]
	s.mu.Unlock()
	if mine {
		return 0
	}
	pid := s.holder(id)
	if pid == 0 || !processAlive(pid) {
		return 0
	}
	return pid
}

// repairTail truncates a torn last line (no newline, or not JSON) and
// returns the resulting file size.
func (s *Store) repairTail(id string, f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	start, last, err := storeLastLine(f, size)
	if err != nil {
		return 0, err
	}
	if len(last) > 0 && last[len(last)-1] == '\n' && json.Valid(last[:len(last)-1]) {
		return size, nil
	}
	if start == 0 {
		return 0, errors.New("no complete meta record")
	}
	s.log.Warn("session file: cutting torn last line", "session", id, "offset", start, "bytes", size-start)
	if err := f.Truncate(start); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return start, nil
}

// storeLastLine returns the offset and bytes of the file's last line,
// trailing newline included when there is one. It reads backwards in
// blocks, so its cost is that of the last line, not of the file.
func storeLastLine(f *os.File, size int64) (int64, []byte, error) {
	if size == 0 {
		return 0, nil, nil
	}
	const block = 64 << 10
	end := size - 1 // a final newline belongs to the last line
	start := int64(0)
	buf := make([]byte, block)
	for pos := end; pos > 0; {
		n := min(int64(block), pos)
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, pos-n); err != nil {
			return 0, nil, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			start = pos - n + int64(i) + 1
			break
		}
		pos -= n
	}
	line := make([]byte, size-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return 0, nil, err
	}
	return start, line, nil
}

// encode turns a record into its line, newline included, with Redact
// applied.
func (s *Store) encode(rec Record) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Model text is full of <, > and &; escaping them would make files
	// harder to read and hide secrets containing them from Redact.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, fmt.Errorf("encode %s record: %w", rec.Type, err)
	}
	if s.opts.Redact == nil {
		return b.Bytes(), nil
	}
	line := s.opts.Redact(string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
	if strings.Contains(line, "\n") || !json.Valid([]byte(line)) {
		return nil, fmt.Errorf("redacting %s record: result is not one JSON line", rec.Type)
	}
	return append([]byte(line), '\n'), nil
}

// Load reads a session: its meta record and the records after it, in
// order. A torn last line (left by a crash mid-write: no newline, or not
// JSON) is ignored and logged; an unreadable line anywhere else is an
// error naming its line number. Records of types this version does not
// know are skipped. A missing session is an error wrapping
// fs.ErrNotExist.
func (s *Store) Load(id string) (Meta, []Record, error) {
	if err := CheckSessionID(id); err != nil {
		return Meta{}, nil, err
	}
	f, br, err := s.openRead(id)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("session %s: load: %w", id, err)
	}
	defer f.Close()
	lr := storeLineReader{r: br}
	var (
		meta    *Meta
		recs    []Record
		lineNo  int
		pending error // a bad line, fatal unless it turns out to be the last
	)
	for {
		line, terminated, err := lr.next(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Meta{}, nil, fmt.Errorf("session %s: load: %w", id, err)
		}
		lineNo++
		if pending != nil {
			return Meta{}, nil, pending
		}
		if !terminated {
			pending = fmt.Errorf("session %s: line %d: no newline", id, lineNo)
			break
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			pending = fmt.Errorf("session %s: line %d: %w", id, lineNo, err)
			continue
		}
		if lineNo == 1 {
			if rec.Type != RecordMeta || rec.Meta == nil {
				return Meta{}, nil, fmt.Errorf("session %s: line 1: not a meta record", id)
			}
			meta = rec.Meta
			continue
		}
		if err := storeCheckRecord(rec); err != nil {
			return Meta{}, nil, fmt.Errorf("session %s: line %d: %w", id, lineNo, err)
		}
		if !storeKnownType(rec.Type) || rec.Type == RecordMeta {
			continue
		}
		recs = append(recs, rec)
	}
	if pending != nil {
		s.log.Warn("session file: ignoring torn last line", "session", id, "line", lineNo, "error", pending)
	}
	switch {
	case meta == nil:
		return Meta{}, nil, fmt.Errorf("session %s: no complete meta record", id)
	case meta.SessionID != id:
		return Meta{}, nil, fmt.Errorf("session %s: file holds session %q", id, meta.SessionID)
	case meta.Version > storeFormatVersion:
		return Meta{}, nil, fmt.Errorf("session %s: format version %d is newer than this daemon's %d", id, meta.Version, storeFormatVersion)
	}
	return *meta, recs, nil
}

func storeKnownType(t string) bool {
	switch t {
	case RecordMeta, RecordMessage, RecordMode, RecordPlan, RecordTitle, RecordUsage, RecordCompaction, RecordEdited, RecordRewind:
		return true
	}
	return false
}

// storeCheckRecord refuses known records without their payload, which
// no writer produces: such a line is damage, not a torn write.
func storeCheckRecord(rec Record) error {
	switch {
	case rec.Type == RecordMessage && rec.Message == nil:
		return errors.New("message record without a message")
	case rec.Type == RecordUsage && rec.Usage == nil:
		return errors.New("usage record without usage")
	case rec.Type == RecordCompaction && rec.Compaction == nil:
		return errors.New("compaction record without a compaction")
	}
	return nil
}

// List returns the stored sessions, newest first (ties by id), only those
// whose cwd is cwd when it is not empty. It reads the meta line of each
// file and, of the later lines, only their first bytes (type and time)
// plus the title records, so long histories cost a scan, not a decode.
// Files it cannot read are logged and skipped.
func (s *Store) List(cwd string) ([]Summary, error) {
	d, err := workspace.OpenDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("session store: list: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("session store: list: %w", err)
	}
	if cwd != "" {
		cwd = filepath.Clean(cwd)
	}
	var out []Summary
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || CheckSessionID(id) != nil {
			continue
		}
		sum, match, err := s.summarize(id, cwd)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Deleted while listing.
		case err != nil:
			s.log.Warn("session list: skipping unreadable session", "session", id, "error", err)
		case match:
			out = append(out, sum)
		}
	}
	slices.SortFunc(out, func(a, b Summary) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return out, nil
}

// summarize reads one session's Summary; match is false when its cwd is
// not cwd, in which case it stops after the meta line.
func (s *Store) summarize(id, cwd string) (sum Summary, match bool, err error) {
	f, br, err := s.openRead(id)
	if err != nil {
		return Summary{}, false, err
	}
	defer f.Close()
	lr := storeLineReader{r: br}
	// Keep whole lines only when their head says they are needed, or
	// cannot say what they are.
	keep := func(head []byte) bool {
		typ, _, ok := storeParseHead(head)
		return !ok || typ == RecordTitle || typ == RecordMeta
	}
	var latest time.Time
	for lineNo := 1; ; lineNo++ {
		line, terminated, err := lr.next(keep)
		if err == io.EOF || err == nil && !terminated {
			break // end, or a torn last line
		}
		if err != nil {
			return Summary{}, false, err
		}
		if lineNo == 1 {
			var rec Record
			if err := json.Unmarshal(line, &rec); err != nil || rec.Type != RecordMeta || rec.Meta == nil {
				return Summary{}, false, errors.New("line 1: not a meta record")
			}
			m := rec.Meta
			if cwd != "" && filepath.Clean(m.Cwd) != cwd {
				return Summary{}, false, nil
			}
			sum = Summary{SessionID: id, Cwd: m.Cwd, Title: m.Title, ParentID: m.ParentID, ParentSessionID: m.ParentSessionID}
			latest = rec.Time
			continue
		}
		typ, t, ok := storeParseHead(line)
		if !ok || typ == RecordTitle {
			// Not the layout encode writes (or a title): decode it all.
			var rec Record
			if json.Unmarshal(line, &rec) != nil {
				continue // damage is Load's to report, not List's
			}
			typ, t = rec.Type, rec.Time
			if typ == RecordTitle {
				sum.Title = rec.Title
			}
		}
		if t.After(latest) {
			latest = t
		}
	}
	if sum.SessionID == "" {
		return Summary{}, false, errors.New("no complete meta record")
	}
	if latest.IsZero() {
		if fi, err := f.Stat(); err == nil {
			latest = fi.ModTime()
		}
	}
	sum.Title = prompt.UserWords(sum.Title) // a title stored before mentions were @name again
	sum.UpdatedAt = latest
	sum.HeldBy = s.heldBy(id)
	return sum, true, nil
}

// storeParseHead reads the type and time from the start of a line laid
// out as encode writes it: {"type":"…","time":"…",…
func storeParseHead(line []byte) (typ string, t time.Time, ok bool) {
	const typePrefix, timePrefix = `{"type":"`, `","time":"`
	rest, found := bytes.CutPrefix(line, []byte(typePrefix))
	if !found {
		return "", time.Time{}, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", time.Time{}, false
	}
	typ = string(rest[:i])
	if rest, found = bytes.CutPrefix(rest[i:], []byte(timePrefix)); !found {
		return "", time.Time{}, false
	}
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	if err != nil {
		return "", time.Time{}, false
	}
	return typ, t, true
}

// storeLineReader reads lines of any length, keeping only the first
// buffer-full of lines nobody wants whole.
type storeLineReader struct {
	r   *bufio.Reader
	buf []byte
}

// next returns the next line without its newline and whether it had one;
// io.EOF once there are no more bytes. When a line is longer than the
// reader's buffer, keep (nil: keep everything) decides from its first
// buffer-full whether the rest is read into memory or skipped; a skipped
// line comes back cut to that first part. The line is valid until the
// next call.
func (lr *storeLineReader) next(keep func(head []byte) bool) ([]byte, bool, error) {
	chunk, err := lr.r.ReadSlice('\n')
	switch {
	case err == nil:
		return chunk[:len(chunk)-1], true, nil
	case err == io.EOF && len(chunk) == 0:
		return nil, false, io.EOF
	case err == io.EOF:
		return chunk, false, nil
	case err != bufio.ErrBufferFull:
		return nil, false, err
	}
	whole := keep == nil || keep(chunk)
	lr.buf = append(lr.buf[:0], chunk...)
	for {
		chunk, err = lr.r.ReadSlice('\n')
		if whole {
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case err == nil:
			if whole {
				return lr.buf[:len(lr.buf)-1], true, nil
			}
			return lr.buf, true, nil
		case err == io.EOF:
			return lr.buf, false, nil
		case err != bufio.ErrBufferFull:
			return nil, false, err
		}
	}
}

// storeSyncDir makes a directory's entries durable.
func storeSyncDir(dir string) error {
	d, err := workspace.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Log appends records to one session file. Append only buffers; Flush
// writes everything buffered with one write and then fsyncs, so the
// session layer calls it once per turn and a crash loses at most the
// turn in progress. A Log is safe for concurrent use, and Append does not
// wait for a Flush in progress.
type Log struct {
	store *Store
	id    string

	// flushMu serialises writing: it is held across write and fsync.
	flushMu sync.Mutex
	f       *os.File
	size    int64 // file size after the last good write; guarded by flushMu

	// mu guards the fields below; it is never held during I/O.
	mu     sync.Mutex
	buf    []byte // encoded lines waiting for Flush
	spare  []byte // the other buffer, reused while buf is being written
	closed bool
	err    error // sticky: the file's state is unknown after it

	lock *workspace.StateLock // the session's lock file, held until Close
}

// ID returns the session id the Log appends to.
func (l *Log) ID() string { return l.id }

// Path returns the session file the Log appends to (a hook's
// transcript_path, the file a compaction's update names), or "" for no
// Log.
func (l *Log) Path() string {
	if l == nil {
		return ""
	}
	return l.store.path(l.id)
}

// Append encodes records into the buffer, all or none of them. Zero
// times become the current time. Meta records are refused: only Create
// writes one.
func (l *Log) Append(recs ...Record) error {
	var lines []byte
	for _, rec := range recs {
		if rec.Type == "" || rec.Type == RecordMeta {
			return fmt.Errorf("session %s: cannot append a record of type %q", l.id, rec.Type)
		}
		if rec.Time.IsZero() {
			rec.Time = time.Now().UTC()
		}
		line, err := l.store.encode(rec)
		if err != nil {
			return fmt.Errorf("session %s: %w", l.id, err)
		}
		lines = append(lines, line...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrLogClosed
	case l.err != nil:
		return l.err
	}
	l.buf = append(l.buf, lines...)
	return nil
}

// Flush writes the buffered records with a single write call and fsyncs
// the file. On a failed write the file is cut back to where it was and
// the records stay buffered for the next Flush; a failed fsync (or a
// failed cut) makes every later call fail, since what reached the disk is
// then unknown.
func (l *Log) Flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	return l.flushLocked(false)
}

// Close flushes what is buffered and closes the file. Later calls return
// nil; other methods return ErrLogClosed.
func (l *Log) Close() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil
	}
	err := l.flushLocked(true)
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("session %s: close: %w", l.id, cerr)
	}
	l.store.release(l.id, l.lock)
	return err
}

// flushLocked is Flush with flushMu held; closing also marks the Log
// closed in the same critical section that takes the buffer, so no
// Append can slip in between and be lost.
func (l *Log) flushLocked(closing bool) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrLogClosed
	}
	l.closed = closing
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return err
	}
	data := l.buf
	l.buf, l.spare = l.spare[:0], nil
	l.mu.Unlock()
	if len(data) == 0 {
		l.mu.Lock()
		l.spare = data
		l.mu.Unlock()
		return nil
	}

	sticky, err := l.write(data)

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case sticky:
		l.err = err
	case err != nil:
		// Keep the order: these records come before any appended since.
		l.buf = append(data, l.buf...)
	default:
		// Reuse the buffer unless one huge turn made it worth freeing.
		if cap(data) <= 1<<20 {
			l.spare = data[:0]
		}
	}
	return err
}

// write appends data to the file and fsyncs it. sticky reports a failure
// after which the file's contents are unknown.
func (l *Log) write(data []byte) (sticky bool, err error) {
	n, err := l.f.Write(data)
	if err != nil {
		err = fmt.Errorf("session %s: write: %w", l.id, err)
		if n > 0 {
			// Cut the partial line, or the next records would be glued
			// to it and the damage would sit in the middle of the file.
			if terr := l.f.Truncate(l.size); terr != nil {
				return true, fmt.Errorf("%w (and cutting the partial write: %v)", err, terr)
			}
		}
		return false, err
	}
	l.size += int64(n)
	if err := l.f.Sync(); err != nil {
		return true, fmt.Errorf("session %s: fsync: %w", l.id, err)
	}
	return false, nil
}
