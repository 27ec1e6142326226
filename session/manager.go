package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/provider"
)

// Live is a session as the Manager keeps it: the host's value around a
// *Session (which has every method but InUse). The Manager keys its
// bookkeeping by it, so it is comparable (a pointer).
type Live interface {
	comparable
	ID() string
	Mode() string
	// InUse reports work an idle release must not cut: a turn, an
	// editor call, or a background command the session started.
	InUse() bool
	Cancel()
	WaitIdle()
	Close() error
	Replay(recs []Record)
	Restore(r Resumed)
	Prompt(ctx context.Context, text string) (StopReason, error)
	History() []provider.Message
}

// Opener is what the Manager needs of its host to make a session live.
type Opener[L Live] interface {
	// Start starts what the session needs besides its history (the MCP
	// servers sp.Servers names) and returns it; the Manager keeps it in
	// Spec.Own and hands it to Stop. It runs before a new session's
	// history is made, so that a refusal leaves no file behind, and after
	// a saved one's is claimed, so that one another daemon holds starts
	// nothing.
	Start(sp Spec) (own any, err error)
	// Open makes the live session sp describes.
	Open(sp Spec) (L, error)
	// Stop ends what Start started, once its session is released or has
	// failed to open.
	Stop(own any)
	// Cancelled withdraws what session id asked the client and no longer
	// waits for (its approvals); it follows the session's Cancel.
	Cancelled(id string)
	// NotSaved tells the user that a session's history cannot be saved;
	// the session opens all the same.
	NotSaved(err error)
}

// Spec says what session Opener.Open makes.
type Spec struct {
	ID, CWD, Mode string
	// Provider is the parent's model for a subagent (it talks to the
	// same model); nil means the host's settings name the model.
	Provider provider.Provider
	History  []provider.Message
	Log      *Log
	Subagent bool
	// Parent is a subagent's parent session: the one the client knows,
	// in whose name the subagent reads through the client.
	Parent string
	// Servers are the MCP servers the client named for the session, as
	// it sent them; Own is what Start made of them (a subagent shares its
	// parent's).
	Servers []json.RawMessage
	Own     any
	// Title and Plan are a loaded session's.
	Title string
	Plan  []PlanEntry
	// Spawn runs a subagent of this session with model prov (Config's
	// Spawn); nil for a subagent, which spawns none.
	Spawn func(ctx context.Context, prov provider.Provider, prompt string) (string, error)
}

// ManagerOptions configures a Manager.
type ManagerOptions struct {
	// Store opens the store sessions persist in. It is called on first
	// use, not before: the settings may name its folder until then.
	Store func() (*Store, error)
	// IdleRelease is how long a session may sit unused before it is
	// released; zero means DefaultIdleRelease.
	IdleRelease time.Duration
	// Go runs the idle loop for as long as the host lives, or reports
	// false when it is ending; nil runs none.
	Go func(f func()) bool
	// Done ends the idle loop.
	Done   <-chan struct{}
	Logger *slog.Logger
}

// DefaultIdleRelease is how long a session may sit unused before it is
// released (history closed, MCP servers stopped) unless ManagerOptions
// says otherwise; it reopens on demand. ACP clients open a session per
// thread, each with its MCP servers: without this they would pile up for
// as long as the connection lives.
const DefaultIdleRelease = 30 * time.Minute

// ErrClosedByClient is Get's error for a session the client closed: unlike
// one released for being idle, only Load reopens it.
var ErrClosedByClient = errors.New("session closed by the client")

// NotFoundError says there is no such session, live or saved; Err says
// why when the store was asked.
type NotFoundError struct{ Err error }

func (e *NotFoundError) Error() string {
	if e.Err == nil {
		return "no such session"
	}
	return e.Err.Error()
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// StoreError is a failure of the session store itself (its folder cannot
// be made or read), not of one session.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// OpenError is Opener.Open's failure to make a session live.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// NewID returns a fresh session id.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// entry is what the Manager keeps for a session it opened.
type entry struct {
	own      any
	used     time.Time      // last looked up; guarded by Manager.mu
	detached bool           // taken out of byID by detachLocked; guarded by Manager.mu
	turns    sync.WaitGroup // its running turns, for a release to wait on
}

// Manager owns a connection's live sessions: it opens, loads, reopens,
// forks, releases and closes them, and spawns subagents. A session's
// history has one writer: the one live copy the Manager keeps.
type Manager[L Live] struct {
	o    Opener[L]
	opts ManagerOptions

	mu      sync.Mutex
	byID    map[string]L // the sessions the client made or loaded
	editor  map[string]L // by mode: the editor's own, for calls without a session
	entries map[L]*entry // every session opened and not yet released
	store   *Store
	// releasing has a channel per session being released, closed once
	// its history is closed: reading its file before that could miss (or
	// race) the last records.
	releasing map[string]chan struct{}
	// closedByClient holds the sessions the client closed.
	closedByClient map[string]bool
	closed         bool           // the host is ending: no new turns
	wg             sync.WaitGroup // running turns
	// idleLoop starts the idle loop with the first session: a host that
	// opens none has nothing to release.
	idleLoop sync.Once
}

// NewManager returns a Manager that opens sessions through o.
func NewManager[L Live](o Opener[L], opts ManagerOptions) *Manager[L] {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.IdleRelease <= 0 {
		opts.IdleRelease = DefaultIdleRelease
	}
	return &Manager[L]{o: o, opts: opts,
		byID: map[string]L{}, editor: map[string]L{}, entries: map[L]*entry{},
		releasing: map[string]chan struct{}{}, closedByClient: map[string]bool{}}
}

// Store returns the store sessions persist in, opening it on first use.
func (m *Manager[L]) Store() (*Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		if m.opts.Store == nil {
			return nil, &StoreError{errors.New("no session store")}
		}
		st, err := m.opts.Store()
		if err != nil {
			return nil, &StoreError{err}
		}
		m.store = st
	}
	return m.store, nil
}

// Lookup returns session id if it is live, without reopening it.
func (m *Manager[L]) Lookup(id string) (L, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.byID[id]
	return l, ok
}

// All returns every live session, the editor's own ones last.
func (m *Manager[L]) All() []L {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]L, 0, len(m.byID)+len(m.editor))
	for _, l := range m.byID {
		out = append(out, l)
	}
	for _, l := range m.editor {
		out = append(out, l)
	}
	return out
}

// Sessions returns the live sessions the client made or loaded.
func (m *Manager[L]) Sessions() []L {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]L, 0, len(m.byID))
	for _, l := range m.byID {
		out = append(out, l)
	}
	return out
}

// Get returns live session id. One released for being idle, or saved by
// an earlier host, is reopened quietly (no replay). Its errors are a
// *NotFoundError, ErrClosedByClient, a *HeldError, an *OpenError, or
// Start's.
func (m *Manager[L]) Get(id string) (L, error) {
	var zero L
	m.mu.Lock()
	l, ok := m.byID[id]
	if ok {
		m.entries[l].touch()
	}
	closed := m.closedByClient[id]
	m.mu.Unlock()
	if ok {
		return l, nil
	}
	if err := CheckSessionID(id); err != nil {
		return zero, &NotFoundError{}
	}
	if closed {
		return zero, ErrClosedByClient
	}
	m.awaitRelease(id)
	st, err := m.Store()
	if err != nil {
		return zero, &NotFoundError{err}
	}
	meta, recs, err := st.Load(id)
	if err != nil {
		return zero, &NotFoundError{err}
	}
	l, _, err = m.reopen(id, meta.Cwd, nil, meta, recs)
	if err != nil {
		return zero, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.byID[id]; ok {
		go m.release(l) // another call reopened it first
		return prev, nil
	}
	if m.closedByClient[id] {
		// Another call reopened it while this one did, and the client
		// closed that copy since: this one must not bring it back.
		go m.release(l)
		return zero, ErrClosedByClient
	}
	m.addLocked(id, l)
	return l, nil
}

func (e *entry) touch() {
	if e != nil {
		e.used = time.Now()
	}
}

// addLocked makes l the live session id; m.mu is held.
func (m *Manager[L]) addLocked(id string, l L) {
	delete(m.closedByClient, id)
	m.entries[l].touch()
	m.byID[id] = l
}

// New makes a session in cwd and mode, with the MCP servers the client
// named, and its history in the store; a store that cannot save it is
// told to the user (NotSaved), and the session opens unsaved. Its errors
// are Start's and an *OpenError.
func (m *Manager[L]) New(cwd, mode string, servers []json.RawMessage) (L, error) {
	var zero L
	sp := Spec{ID: NewID(), CWD: cwd, Mode: mode, Servers: servers}
	own, err := m.o.Start(sp)
	if err != nil {
		return zero, err
	}
	sp.Own = own
	st, err := m.Store()
	if err != nil {
		m.o.NotSaved(errors.Unwrap(err))
	} else if sp.Log, err = st.Create(Meta{SessionID: sp.ID, Cwd: cwd, Mode: mode}); err != nil {
		m.o.NotSaved(err)
		sp.Log = nil
	}
	l, err := m.open(sp)
	if err != nil {
		if sp.Log != nil {
			sp.Log.Close()
			st.Remove(sp.ID)
		}
		return zero, err
	}
	m.mu.Lock()
	m.addLocked(sp.ID, l)
	m.mu.Unlock()
	return l, nil
}

// open makes sp's session live and keeps it; on failure it stops what
// Start made for it (a subagent owns nothing: what it has is its
// parent's, still in use). Its error is an *OpenError.
func (m *Manager[L]) open(sp Spec) (L, error) {
	m.startIdleLoop()
	var zero L
	if !sp.Subagent {
		parent := sp
		sp.Spawn = func(ctx context.Context, prov provider.Provider, prompt string) (string, error) {
			return m.spawn(ctx, parent, prov, prompt)
		}
	}
	l, err := m.o.Open(sp)
	if err != nil {
		if !sp.Subagent {
			m.o.Stop(sp.Own)
		}
		return zero, &OpenError{err}
	}
	if !sp.Subagent {
		m.mu.Lock()
		m.entries[l] = &entry{own: sp.Own}
		m.mu.Unlock()
	}
	return l, nil
}

// spawn runs prompt in a subagent of the session parent describes: a
// search-mode child in its folder, on its model and MCP servers, that
// the client never sees and that keeps no history.
func (m *Manager[L]) spawn(ctx context.Context, parent Spec, prov provider.Provider, prompt string) (string, error) {
	child, err := m.open(Spec{ID: NewID(), CWD: parent.CWD, Mode: "search", Provider: prov, Subagent: true, Parent: parent.ID, Own: parent.Own})
	if err != nil {
		return "", errors.Unwrap(err)
	}
	return RunSubagent(ctx, child, prompt)
}

// Editor returns the editor's own session for mode (for a call that names
// none), opening it in cwd on first use. Its error is an *OpenError.
func (m *Manager[L]) Editor(mode, cwd string) (L, error) {
	m.mu.Lock()
	l, ok := m.editor[mode]
	m.mu.Unlock()
	if ok {
		return l, nil
	}
	l, err := m.open(Spec{ID: "editor-" + mode, CWD: cwd, Mode: mode})
	if err != nil {
		return l, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.editor[mode]; ok {
		return prev, nil
	}
	m.editor[mode] = l
	return l, nil
}

// Load reopens saved session id and replays its history (Session.Replay)
// in cwd (the saved one when empty), with the MCP servers the client
// named, and returns its mode. One live already is replayed as it is:
// a second copy would be a second writer of its history. With readOnly
// the history is read, not claimed (a session another host holds can be
// shown) and the session is released once replayed. Its errors are a
// *StoreError, a *NotFoundError, a *HeldError, an *OpenError, or Start's.
func (m *Manager[L]) Load(id, cwd string, servers []json.RawMessage, readOnly bool) (string, error) {
	m.awaitRelease(id)
	st, err := m.Store()
	if err != nil {
		return "", err
	}
	meta, recs, err := st.Load(id)
	if err != nil {
		return "", &NotFoundError{err}
	}
	if live, ok := m.Lookup(id); ok {
		live.Replay(recs)
		return live.Mode(), nil
	}
	if cwd == "" {
		cwd = meta.Cwd
	}
	if readOnly {
		return m.show(id, cwd, meta, recs)
	}
	l, mode, err := m.reopen(id, cwd, servers, meta, recs)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	prev, ok := m.byID[id]
	if !ok {
		m.addLocked(id, l)
	}
	m.mu.Unlock()
	if ok {
		// A call that names it off the read loop reopened it meanwhile:
		// that copy stays, the one writer of the history.
		go m.release(l)
		l, mode = prev, prev.Mode()
	}
	l.Replay(recs)
	return mode, nil
}

// reopen makes a live session of a saved one: its history, mode, title
// and plan as they were, appending to the same file.
func (m *Manager[L]) reopen(id, cwd string, servers []json.RawMessage, meta Meta, recs []Record) (L, string, error) {
	var zero L
	st, err := m.Store()
	if err != nil {
		return zero, "", err
	}
	r := Resume(meta, recs)
	// The history first: one another host holds is refused before any
	// MCP server starts for it.
	log, err := st.Open(id)
	if err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			return zero, "", held
		}
		m.o.NotSaved(err)
		log = nil
	}
	sp := Spec{ID: id, CWD: cwd, Mode: r.Mode, History: r.History, Log: log, Servers: servers, Title: r.Title, Plan: r.Plan}
	own, err := m.o.Start(sp)
	if err != nil {
		if log != nil {
			log.Close()
		}
		return zero, "", err
	}
	sp.Own = own
	l, err := m.open(sp)
	if err != nil {
		if log != nil {
			log.Close()
		}
		return zero, "", err
	}
	l.Restore(r)
	return l, r.Mode, nil
}

// show replays a saved session without keeping it open. It is not live
// afterwards: a prompt to it reopens it, which another host's hold
// refuses until it lets go; a fork continues it.
func (m *Manager[L]) show(id, cwd string, meta Meta, recs []Record) (string, error) {
	r := Resume(meta, recs)
	l, err := m.open(Spec{ID: id, CWD: cwd, Mode: r.Mode, History: r.History, Title: r.Title, Plan: r.Plan})
	if err != nil {
		return "", err
	}
	l.Replay(recs)
	m.release(l)
	return r.Mode, nil
}

// Fork saves a new session of saved session parent, up to turn atTurn
// (1-based; 0 is all of them), in cwd (the parent's when empty), and
// returns its id. The parent's file is read, not claimed: a session
// another host holds can be forked. A session writes a turn's records
// when the turn ends, so a turn in flight is not in the fork. Its errors
// are a *StoreError or Store.Fork's.
func (m *Manager[L]) Fork(parent string, atTurn int, cwd string) (string, error) {
	st, err := m.Store()
	if err != nil {
		return "", err
	}
	id := NewID()
	if _, err := st.Fork(parent, id, atTurn, cwd); err != nil {
		return "", err
	}
	return id, nil
}

// List lists the saved sessions in cwd (all of them when empty). Its
// errors are a *StoreError or Store.List's.
func (m *Manager[L]) List(cwd string) ([]Summary, error) {
	st, err := m.Store()
	if err != nil {
		return nil, err
	}
	return st.List(cwd)
}

// Close closes session id for the client: only Load reopens it. A live
// one is taken out at once, and the returned release (nil when nothing
// of it runs) cancels its turn, waits for it, closes its history and
// stops its MCP servers: the caller runs it off its read loop, since the
// turn may wait on the client while it ends. A session neither live nor
// saved is a *NotFoundError.
func (m *Manager[L]) Close(id string) (release func(), err error) {
	m.mu.Lock()
	l, ok := m.detachLocked(id)
	if ok {
		m.closedByClient[id] = true
	}
	m.mu.Unlock()
	if ok {
		return func() { m.release(l) }, nil
	}
	// Released for being idle (or saved by an earlier host): nothing of
	// it runs, but the close holds all the same.
	if !m.saved(id) {
		return nil, &NotFoundError{}
	}
	m.mu.Lock()
	m.closedByClient[id] = true
	m.mu.Unlock()
	return nil, nil
}

// saved reports whether session id has a history in the store.
func (m *Manager[L]) saved(id string) bool {
	if CheckSessionID(id) != nil {
		return false
	}
	m.awaitRelease(id)
	st, err := m.Store()
	if err != nil {
		return false
	}
	_, _, err = st.Load(id)
	return err == nil
}

// BeginTurn counts a turn of l in, or reports false once the host is
// ending (Shutdown waits for the turns it counted); done counts it out.
func (m *Manager[L]) BeginTurn(l L) (done func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false
	}
	m.wg.Add(1)
	e := m.entries[l]
	if e != nil {
		e.turns.Add(1)
	}
	return func() {
		if e != nil {
			e.turns.Done()
		}
		m.wg.Done()
	}, true
}

// Shutdown cancels every running turn and waits for them to end, then
// closes every session, the editor's own ones too (their background
// commands end with them). No turn begins after it.
func (m *Manager[L]) Shutdown() {
	m.mu.Lock()
	m.closed = true
	list := make([]L, 0, len(m.byID)+len(m.editor))
	for id, l := range m.byID {
		list = append(list, l)
		m.o.Cancelled(id)
	}
	for _, l := range m.editor {
		list = append(list, l)
		m.o.Cancelled(l.ID())
	}
	m.mu.Unlock()
	for _, l := range list {
		l.Cancel()
	}
	m.wg.Wait()
	for _, l := range list {
		l.Close()
	}
}

// ReleaseIdle releases the sessions unused for longer than maxIdle whose
// work has ended (Live.InUse).
func (m *Manager[L]) ReleaseIdle(maxIdle time.Duration) {
	now := time.Now()
	var idle []L
	m.mu.Lock()
	for id, l := range m.byID {
		if e := m.entries[l]; e != nil && now.Sub(e.used) > maxIdle && !l.InUse() {
			idle = append(idle, l)
			m.detachLocked(id)
		}
	}
	m.mu.Unlock()
	for _, l := range idle {
		m.opts.Logger.Info("releasing idle session", "session", l.ID())
		m.release(l)
	}
}

func (m *Manager[L]) startIdleLoop() {
	if m.opts.Go == nil {
		return
	}
	m.idleLoop.Do(func() { m.opts.Go(m.idle) })
}

// idle runs ReleaseIdle now and then until opts.Done.
func (m *Manager[L]) idle() {
	maxIdle := m.opts.IdleRelease
	t := time.NewTicker(maxIdle / 10)
	defer t.Stop()
	for {
		select {
		case <-m.opts.Done:
			return
		case <-t.C:
			m.ReleaseIdle(maxIdle)
		}
	}
}

// release ends a session no longer in byID: its turn and calls are
// cancelled and waited for, its history closed, what Start made stopped.
func (m *Manager[L]) release(l L) {
	l.Cancel()
	m.o.Cancelled(l.ID())
	m.mu.Lock()
	e := m.entries[l]
	m.mu.Unlock()
	if e != nil {
		e.turns.Wait()
	}
	l.WaitIdle()
	l.Close()
	if e != nil {
		m.o.Stop(e.own)
	}
	m.mu.Lock()
	delete(m.entries, l)
	if ch := m.releasing[l.ID()]; ch != nil && e != nil && e.detached {
		close(ch)
		delete(m.releasing, l.ID())
	}
	m.mu.Unlock()
}

// detachLocked takes session id out of byID for release, which must
// follow, and marks it as being released until then (awaitRelease).
// m.mu is held.
func (m *Manager[L]) detachLocked(id string) (L, bool) {
	l, ok := m.byID[id]
	if !ok {
		return l, false
	}
	delete(m.byID, id)
	if m.releasing[id] == nil {
		m.releasing[id] = make(chan struct{})
	}
	if e := m.entries[l]; e != nil {
		e.detached = true
	}
	return l, true
}

// awaitRelease waits until a release of session id under way has closed
// its history, so that reopening it reads every record.
func (m *Manager[L]) awaitRelease(id string) {
	m.mu.Lock()
	ch := m.releasing[id]
	m.mu.Unlock()
	if ch != nil {
		<-ch
	}
}
