package lsppeer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/wire"
)

// fakeCaller records what the peer sends and answers every request with
// err.
type fakeCaller struct {
	mu    sync.Mutex
	err   error
	calls []string
	notes []wire.ProgressParams
}

func (f *fakeCaller) Call(_ context.Context, method string, params, _ any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, method)
	return f.err
}

func (f *fakeCaller) Notify(_ context.Context, method string, params any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if method == MethodProgress {
		f.notes = append(f.notes, params.(wire.ProgressParams))
	}
	return nil
}

func (f *fakeCaller) values() []wire.ProgressValue {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []wire.ProgressValue
	for _, n := range f.notes {
		out = append(out, n.Value)
	}
	return out
}

func TestTurnBeginsReportsAndEnds(t *testing.T) {
	c := &fakeCaller{}
	p := New(c, Caps{WorkDoneProgress: true}, func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") })
	end := p.BeginTurn(context.Background(), "s1", "fix the bug", func() {})
	p.Report("s1", wire.ToolCall{Title: "Read main.go"})
	p.Report("other", wire.ToolCall{Title: "not this session's"})
	end("", errors.New("key sk-secret refused"))
	p.Report("s1", wire.ToolCall{Title: "after the end"})

	if len(c.calls) != 1 || c.calls[0] != MethodProgressCreate {
		t.Fatalf("calls = %v, want one %s", c.calls, MethodProgressCreate)
	}
	got := c.values()
	if len(got) != 3 {
		t.Fatalf("progress = %#v, want begin, report, end", got)
	}
	if b, ok := got[0].(wire.ProgressBegin); !ok || b.Title != "cline: fix the bug" || !b.Cancellable {
		t.Errorf("begin = %#v", got[0])
	}
	if r, ok := got[1].(wire.ProgressReport); !ok || r.Message != "Read main.go" {
		t.Errorf("report = %#v", got[1])
	}
	if e, ok := got[2].(wire.ProgressEnd); !ok || e.Message != "failed: key [redacted] refused" {
		t.Errorf("end = %#v", got[2])
	}
}

func TestStreamedTextIsReportedByLine(t *testing.T) {
	c := &fakeCaller{}
	p := New(c, Caps{WorkDoneProgress: true}, nil)
	end := p.BeginTurn(context.Background(), "s", "t", func() {})
	defer end("done", nil)
	p.Report("s", wire.AgentMessageChunk{Content: wire.TextBlock{Text: "first line\nsecond "}})
	p.Report("s", wire.AgentMessageChunk{Content: wire.TextBlock{Text: "half"}}) // within reportEvery: held
	got := c.values()
	if len(got) != 2 {
		t.Fatalf("progress = %#v, want begin and one report", got)
	}
	if r := got[1].(wire.ProgressReport); r.Message != "second" {
		t.Errorf("report = %q, want the current line", r.Message)
	}
	long := strings.Repeat("x", 150)
	p.mu.Lock()
	p.bySession["s"].last = time.Time{}
	p.mu.Unlock()
	p.Report("s", wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n" + long}})
	got = c.values()
	if r := got[len(got)-1].(wire.ProgressReport); len([]rune(r.Message)) != 100 || !strings.HasPrefix(r.Message, "…") {
		t.Errorf("a long line is reported as %q, want its last 99 characters after an ellipsis", r.Message)
	}
}

func TestCancelButtonCancelsTheTurn(t *testing.T) {
	c := &fakeCaller{}
	p := New(c, Caps{WorkDoneProgress: true}, nil)
	cancelled := make(chan struct{})
	end := p.BeginTurn(context.Background(), "s", "t", func() { close(cancelled) })
	defer end("", nil)
	p.CancelProgress(ProgressCancelParams{Token: json.RawMessage(`7`)}) // not ours
	p.CancelProgress(ProgressCancelParams{Token: json.RawMessage(`"cline-ls/turn/1"`)})
	select {
	case <-cancelled:
	default:
		t.Fatal("the turn was not cancelled by its token")
	}
}

func TestNothingWithoutTheCapability(t *testing.T) {
	c := &fakeCaller{}
	p := New(c, Caps{}, nil)
	p.BeginTurn(context.Background(), "s", "t", func() {})("", nil)
	report, end := p.BeginWork(context.Background(), "scan")
	report("x")
	end("y")
	if len(c.calls) != 0 || len(c.notes) != 0 {
		t.Fatalf("sent %v and %v to a client without workDoneProgress", c.calls, c.notes)
	}
}

func TestTokenRefusedReportsNothing(t *testing.T) {
	c := &fakeCaller{err: errors.New("no")}
	p := New(c, Caps{WorkDoneProgress: true}, nil)
	p.BeginTurn(context.Background(), "s", "t", func() {})("", nil)
	report, end := p.BeginWork(context.Background(), "scan")
	report("x")
	end("y")
	if len(c.notes) != 0 {
		t.Fatalf("progress %v sent for a token the client refused", c.notes)
	}
}

func TestWorkEndsOnce(t *testing.T) {
	c := &fakeCaller{}
	p := New(c, Caps{WorkDoneProgress: true}, nil)
	report, end := p.BeginWork(context.Background(), "first checkpoint")
	report("half")
	end("done")
	end("again")
	got := c.values()
	if len(got) != 3 {
		t.Fatalf("progress = %#v, want begin, report and one end", got)
	}
	if b := got[0].(wire.ProgressBegin); b.Cancellable {
		t.Error("the daemon's own work is offered for cancelling")
	}
}

func TestCancelNotice(t *testing.T) {
	p := New(nil, Caps{}, nil)
	m, params := p.CancelNotice(json.RawMessage(`3`))
	b, _ := json.Marshal(params)
	if m != "$/cancelRequest" || string(b) != `{"id":3}` {
		t.Errorf("cancel notice = %s %s", m, b)
	}
	u := wire.ToolCall{Locations: []wire.Location{{Path: "a.go"}}}
	if got := p.Update(u).(wire.ToolCall); got.Locations[0].Path != "a.go" {
		t.Errorf("an LSP update changed: %+v", got)
	}
	if !p.Messages() || p.Terminal("s") != nil || p.Commands() != nil {
		t.Error("an LSP peer takes messages and has no terminal or commands")
	}
}

// A client that strands messages hears from the daemon while it waits,
// and no more once the answer is in; others hear nothing.
func TestWaitingWakesAStrandingClient(t *testing.T) {
	c := &logCaller{}
	done := New(c, Caps{StrandsMessages: true}, nil).Waiting("workspace/applyEdit")
	time.Sleep(WakeInterval*2 + WakeInterval/2)
	done()
	n := c.count()
	if n < 1 {
		t.Fatal("nothing written while waiting")
	}
	time.Sleep(WakeInterval + WakeInterval/2)
	if c.count() != n {
		t.Error("written after the wait ended")
	}
	c.mu.Lock()
	if m := c.msgs[0]; m.Type != wire.MessageLog || !strings.Contains(m.Message, "workspace/applyEdit") {
		t.Errorf("wrote %+v", m)
	}
	c.mu.Unlock()

	quiet := &logCaller{}
	New(quiet, Caps{}, nil).Waiting("x")()
	New(quiet, Caps{}, nil).Waiting("y")
	time.Sleep(WakeInterval + WakeInterval/2)
	if quiet.count() != 0 {
		t.Error("a client that does not strand was woken")
	}
}

type logCaller struct {
	mu   sync.Mutex
	msgs []wire.MessageParams
}

func (l *logCaller) Call(context.Context, string, any, any) error { return nil }

func (l *logCaller) Notify(_ context.Context, method string, params any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if method == MethodLogMessage {
		l.msgs = append(l.msgs, params.(wire.MessageParams))
	}
	return nil
}

func (l *logCaller) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}
