package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/provider"
)

// testLive is a host's live session: a Session with what the host keeps
// (here a flag standing for a background command, and a gate its Close
// waits on).
type testLive struct {
	*Session
	spec      Spec
	bgRunning atomic.Bool
	gate      chan struct{} // when set, Close waits for it
	closing   chan struct{} // closed when Close starts
	closed    atomic.Bool
	once      sync.Once
}

func (l *testLive) InUse() bool { return l.Busy() || l.bgRunning.Load() }

func (l *testLive) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closing)
		if l.gate != nil {
			<-l.gate
		}
		err = l.Session.Close()
		l.closed.Store(true)
	})
	return err
}

// testOpener opens testLives over one model and records what the
// Manager asks of it.
type testOpener struct {
	model provider.Provider

	mu        sync.Mutex
	opened    []*testLive
	started   int
	stopped   []any
	cancelled []string
	notSaved  []error
	gate      chan struct{} // given to every session opened from now on
	// refuseSubagents fails the opening of every subagent.
	refuseSubagents bool
}

func (o *testOpener) Start(sp Spec) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(sp.Servers) == 0 {
		return nil, nil
	}
	o.started++
	return o.started, nil
}

func (o *testOpener) Open(sp Spec) (*testLive, error) {
	o.mu.Lock()
	refuse := o.refuseSubagents && sp.Subagent
	o.mu.Unlock()
	if refuse {
		return nil, errors.New("no subagent today")
	}
	cfg := Config{ID: sp.ID, CWD: sp.CWD, Mode: sp.Mode, Provider: o.model, Log: sp.Log, Subagent: sp.Subagent, Title: sp.Title, Plan: sp.Plan}
	if sp.Provider != nil {
		cfg.Provider = sp.Provider
	}
	if sp.Spawn != nil {
		prov := cfg.Provider
		cfg.Host = testHost{spawn: func(ctx context.Context, prompt string) (string, error) { return sp.Spawn(ctx, prov, prompt) }}
	}
	s, err := New(cfg, sp.History)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	l := &testLive{Session: s, spec: sp, gate: o.gate, closing: make(chan struct{})}
	o.opened = append(o.opened, l)
	return l, nil
}

func (o *testOpener) Stop(own any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = append(o.stopped, own)
}

func (o *testOpener) Cancelled(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelled = append(o.cancelled, id)
}

func (o *testOpener) NotSaved(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.notSaved = append(o.notSaved, err)
}

func (o *testOpener) specs() []Spec {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Spec
	for _, l := range o.opened {
		out = append(out, l.spec)
	}
	return out
}

// answering is a model that answers every request with text.
func answering(text string) *scriptModel {
	return &scriptModel{reply: func(int, provider.Request) ([]provider.Event, error) { return textEvents(text), nil }}
}

func newTestManager(t *testing.T, model provider.Provider) (*Manager[*testLive], *testOpener) {
	t.Helper()
	dir := t.TempDir()
	o := &testOpener{model: model}
	m := NewManager(o, ManagerOptions{Store: func() (*Store, error) { return NewStore(dir) }})
	t.Cleanup(m.Shutdown)
	return m, o
}

// waitFor fails the test unless ch is closed soon.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestManagerNewLoadClose(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	if got, ok := m.Lookup(id); !ok || got != l {
		t.Fatalf("Lookup(%s) = %v, %v; want the new session", id, got, ok)
	}
	if _, err := l.Prompt(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	release, err := m.Close(id)
	if err != nil || release == nil {
		t.Fatalf("Close: release %t, err %v; want a release", release != nil, err)
	}
	if _, ok := m.Lookup(id); ok {
		t.Fatal("a closed session is still live")
	}
	release()
	if !l.closed.Load() {
		t.Fatal("the release did not close the session")
	}
	if _, err := m.Get(id); !errors.Is(err, ErrClosedByClient) {
		t.Fatalf("Get after Close = %v, want ErrClosedByClient", err)
	}
	mode, err := m.Load(id, "", nil, false)
	if err != nil || mode != "act" {
		t.Fatalf("Load = %q, %v", mode, err)
	}
	again, err := m.Get(id)
	if err != nil || again == l {
		t.Fatalf("Get after Load = %v, %v; want a new copy", again, err)
	}
	if n := len(again.History()); n != 2 {
		t.Fatalf("the reloaded session holds %d messages, want 2", n)
	}
	if specs := o.specs(); specs[len(specs)-1].CWD != "/w" {
		t.Fatalf("reloaded in %q, want the saved /w", specs[len(specs)-1].CWD)
	}
	if _, err := m.Close("s-nosuchsession"); err == nil {
		t.Fatal("Close of an unknown session succeeded")
	}
	var missing *NotFoundError
	if _, err := m.Get("s-nosuchsession"); !errors.As(err, &missing) {
		t.Fatalf("Get of an unknown session = %v, want a *NotFoundError", err)
	}
}

func TestManagerStartsAndStopsWhatASessionOwns(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	l, err := m.New("/w", "act", []json.RawMessage{json.RawMessage(`{"name":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	own := o.specs()[0].Own
	if own == nil {
		t.Fatal("the session's MCP servers were not started")
	}
	release, err := m.Close(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !slices.Contains(o.stopped, own) {
		t.Fatalf("the release stopped %v, not the session's %v", o.stopped, own)
	}
}

func TestManagerNewThatFailsLeavesNothing(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	if _, err := m.New("/w", "no-such-mode", []json.RawMessage{json.RawMessage(`{}`)}); err == nil {
		t.Fatal("New in an unknown mode succeeded")
	} else if open := (*OpenError)(nil); !errors.As(err, &open) {
		t.Fatalf("New's error is %T, want an *OpenError", err)
	}
	if len(o.stopped) != 1 {
		t.Fatalf("stopped %v, want the one thing Start made", o.stopped)
	}
	if list, err := m.List(""); err != nil || len(list) != 0 {
		t.Fatalf("List = %v, %v; want no session left behind", list, err)
	}
}

func TestManagerIdleReleaseSkipsWorkingSessions(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	idle, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	busy.bgRunning.Store(true) // a dev server it started still runs
	m.ReleaseIdle(0)
	if _, ok := m.Lookup(idle.ID()); ok {
		t.Fatal("the idle session was not released")
	}
	if !idle.closed.Load() {
		t.Fatal("the released session was not closed")
	}
	if _, ok := m.Lookup(busy.ID()); !ok {
		t.Fatal("a session whose command runs was released")
	}
	if !slices.Contains(o.cancelled, idle.ID()) {
		t.Fatalf("the release withdrew nothing of %s: %v", idle.ID(), o.cancelled)
	}
	// A call naming it reopens it quietly.
	back, err := m.Get(idle.ID())
	if err != nil || back == idle {
		t.Fatalf("Get of a released session = %v, %v; want a reopened copy", back, err)
	}
}

func TestManagerIdleReleaseSkipsARunningTurn(t *testing.T) {
	started := make(chan struct{})
	model := &scriptModel{reply: func(int, provider.Request) ([]provider.Event, error) {
		close(started)
		time.Sleep(200 * time.Millisecond)
		return textEvents("done"), nil
	}}
	m, _ := newTestManager(t, model)
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	done, ok := m.BeginTurn(l)
	if !ok {
		t.Fatal("BeginTurn refused")
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer done()
		l.Prompt(context.Background(), "work")
	}()
	waitFor(t, started, "the turn")
	m.ReleaseIdle(0)
	if _, ok := m.Lookup(l.ID()); !ok {
		t.Fatal("a session whose turn runs was released")
	}
	waitFor(t, ended, "the turn's end")
}

func TestManagerReopenWaitsForReleaseUnderWay(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	gate := make(chan struct{})
	o.gate = gate
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	o.gate = nil
	if _, err := l.Prompt(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	go m.ReleaseIdle(0)
	waitFor(t, l.closing, "the release")
	got := make(chan *testLive)
	go func() {
		back, err := m.Get(l.ID())
		if err != nil {
			t.Error(err)
		}
		got <- back
	}()
	select {
	case <-got:
		t.Fatal("the session reopened before its release closed its history")
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	var back *testLive
	select {
	case back = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the reopen did not follow the release")
	}
	if n := len(back.History()); n != 2 {
		t.Fatalf("the reopened session holds %d messages, want the 2 its release wrote", n)
	}
}

func TestManagerCloseWhileTurnRuns(t *testing.T) {
	block := blockingModel{make(chan struct{})}
	m, _ := newTestManager(t, block)
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	done, ok := m.BeginTurn(l)
	if !ok {
		t.Fatal("BeginTurn refused")
	}
	var returned atomic.Bool
	go func() {
		l.Prompt(context.Background(), "work")
		returned.Store(true)
		done()
	}()
	waitFor(t, block.entered, "the turn")
	release, err := m.Close(l.ID())
	if err != nil || release == nil {
		t.Fatalf("Close: release %t, err %v", release != nil, err)
	}
	release()
	if !returned.Load() {
		t.Fatal("the release returned before the turn ended")
	}
	if !l.closed.Load() {
		t.Fatal("the session was not closed")
	}
}

func TestManagerFork(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if _, err := l.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	id, err := m.Fork(l.ID(), 1, "/other")
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List("")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(s Summary) bool { return s.SessionID == id && s.ParentSessionID == l.ID() }) {
		t.Fatalf("the fork %s of %s is not listed: %+v", id, l.ID(), list)
	}
	if _, err := m.Load(id, "", nil, false); err != nil {
		t.Fatal(err)
	}
	specs := o.specs()
	sp := specs[len(specs)-1]
	if sp.ID != id || sp.CWD != "/other" || len(sp.History) != 2 {
		t.Fatalf("the fork opened as %s in %q with %d messages; want %s in /other with the first turn's 2", sp.ID, sp.CWD, len(sp.History), id)
	}
	if _, err := m.Fork("s-nosuchsession", 0, ""); err == nil {
		t.Fatal("a fork of an unknown session succeeded")
	}
}

func TestManagerSpawnsSubagents(t *testing.T) {
	m, o := newTestManager(t, answering("the answer"))
	l, err := m.New("/w", "act", []json.RawMessage{json.RawMessage(`{"name":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	parent := o.specs()[0]
	if parent.Spawn == nil {
		t.Fatal("a session opens with no way to spawn subagents")
	}
	got, err := parent.Spawn(context.Background(), o.model, "look it up")
	if err != nil || got != "the answer" {
		t.Fatalf("Spawn = %q, %v", got, err)
	}
	specs := o.specs()
	child := specs[len(specs)-1]
	if !child.Subagent || child.Parent != parent.ID || child.Mode != "search" || child.CWD != "/w" || child.Own != parent.Own || child.Spawn != nil || child.Log != nil {
		t.Fatalf("the subagent opened as %+v", child)
	}
	if _, ok := m.Lookup(child.ID); ok {
		t.Fatal("a subagent is among the client's sessions")
	}
	_ = l
}

// A subagent shares its parent's MCP servers and owns none: when it
// cannot open, the parent's servers keep running (its turn is still
// using them).
func TestManagerSubagentThatFailsStopsNothingOfItsParent(t *testing.T) {
	m, o := newTestManager(t, answering("the answer"))
	if _, err := m.New("/w", "act", []json.RawMessage{json.RawMessage(`{"name":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	parent := o.specs()[0]
	if parent.Own == nil {
		t.Fatal("the parent owns no servers; the test would prove nothing")
	}
	o.mu.Lock()
	o.refuseSubagents = true
	o.mu.Unlock()
	if _, err := parent.Spawn(context.Background(), o.model, "look it up"); err == nil {
		t.Fatal("a subagent that could not open ran")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if slices.Contains(o.stopped, parent.Own) {
		t.Fatalf("the subagent's failure stopped its parent's servers (stopped %v)", o.stopped)
	}
}

func TestManagerShutdown(t *testing.T) {
	m, _ := newTestManager(t, answering("hi"))
	l, err := m.New("/w", "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := m.Editor("act", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m.Editor("act", "/w"); again != ed {
		t.Fatal("a second editor session was opened for one mode")
	}
	m.Shutdown()
	if !l.closed.Load() || !ed.closed.Load() {
		t.Fatal("Shutdown left a session open")
	}
	if _, ok := m.BeginTurn(l); ok {
		t.Fatal("a turn began after Shutdown")
	}
}

// TestManagerLoadOfALiveSessionReplaysIt: loading a session that is live
// shows the live copy again instead of opening a second writer of its
// history.
func TestManagerLoadOfALiveSessionReplaysIt(t *testing.T) {
	m, o := newTestManager(t, answering("hi"))
	l, err := m.New("/w", "plan", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Prompt(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	opened := len(o.specs())
	mode, err := m.Load(l.ID(), "", nil, false)
	if err != nil || mode != "plan" {
		t.Fatalf("Load = %q, %v", mode, err)
	}
	if n := len(o.specs()); n != opened {
		t.Fatalf("Load of a live session opened %d more", n-opened)
	}
	if got, _ := m.Lookup(l.ID()); got != l {
		t.Fatal("Load replaced the live copy")
	}
	// Read-only, a saved session is shown and not kept.
	release, _ := m.Close(l.ID())
	release()
	if _, err := m.Load(l.ID(), "", nil, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Lookup(l.ID()); ok {
		t.Fatal("a read-only load left the session live")
	}
	shown := o.opened[len(o.opened)-1]
	if !shown.closed.Load() || shown.spec.Log != nil {
		t.Fatalf("the shown copy is closed %t, with a log %v; want closed and not writing", shown.closed.Load(), shown.spec.Log)
	}
}
