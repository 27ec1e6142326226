package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// scriptModel is a provider whose replies a function writes from the
// request; requests with the summary prompt go to summary instead.
type scriptModel struct {
	reply   func(n int, req provider.Request) ([]provider.Event, error)
	summary func(req provider.Request) (string, error)

	mu        sync.Mutex
	reqs      []provider.Request // the turn's requests
	summaries int
}

func (m *scriptModel) Name() string      { return "openai" }
func (m *scriptModel) Model() string     { return "gpt-4o" }
func (m *scriptModel) NativeTools() bool { return true }

func (m *scriptModel) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	return func(yield func(provider.Event, error) bool) {
		var evs []provider.Event
		var err error
		if req.System == summaryPrompt {
			m.mu.Lock()
			m.summaries++
			m.mu.Unlock()
			var text string
			if text, err = m.summary(req); err == nil {
				evs = []provider.Event{{Kind: provider.EventText, Text: text}, {Kind: provider.EventDone, Stop: provider.StopEndTurn}}
			}
		} else {
			m.mu.Lock()
			n := len(m.reqs)
			m.reqs = append(m.reqs, req)
			m.mu.Unlock()
			evs, err = m.reply(n, req)
		}
		if err != nil {
			yield(provider.Event{}, err)
			return
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}, nil
}

func (m *scriptModel) requests() []provider.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]provider.Request(nil), m.reqs...)
}

func callEvents(id, name string, args any) []provider.Event {
	b, _ := json.Marshal(args)
	return []provider.Event{
		{Kind: provider.EventToolCall, Call: &provider.ToolCall{ID: id, Name: name, Args: b}},
		{Kind: provider.EventDone, Stop: provider.StopToolUse},
	}
}

func textEvents(t string) []provider.Event {
	return []provider.Event{{Kind: provider.EventText, Text: t}, {Kind: provider.EventDone, Stop: provider.StopEndTurn}}
}

var errTooLong = &provider.Error{Provider: "openai", Status: 400, Attempts: 1, ContextLength: true, ContextWindow: 30000,
	Message: "This model's maximum context length is 30000 tokens. However, your messages resulted in 9000 tokens."}

// testSession makes a session over m whose read_files returns size
// bytes per call and whose editor "changes" the path it is given.
func testSession(t testing.TB, m *scriptModel, window, size int) (*Session, *Log, *Store, *[]wire.SessionUpdate) {
	t.Helper()
	return testSessionWith(t, m, window, size)
}

// testSessionWith is testSession over any provider.
func testSessionWith(t testing.TB, m provider.Provider, window, size int) (*Session, *Log, *Store, *[]wire.SessionUpdate) {
	t.Helper()
	st, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(Meta{SessionID: "s1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	var mu sync.Mutex
	var updates []wire.SessionUpdate
	policy, err := NewPolicy(PolicyConfig{Approvals: Approvals{Edit: Allow, Read: Allow}})
	if err != nil {
		t.Fatal(err)
	}
	impls := map[string]tools.BuildFunc{
		tools.NameReadFiles: func(json.RawMessage) (tools.Invocation, error) {
			return funcInvocation{desc: tools.Description{Title: "Read", Kind: tools.KindRead}, run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
				return tools.Result{Content: strings.Repeat("x", size)}, nil
			}}, nil
		},
		tools.NameEditor: tools.Typed(func(a struct {
			Path string `json:"path"`
		}) (tools.Invocation, error) {
			return funcInvocation{desc: tools.Description{Title: "Edit", Kind: tools.KindEdit}, run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
				return tools.Result{Content: "Edited " + a.Path, Edits: []tools.FileEdit{{Path: a.Path}}}, nil
			}}, nil
		}),
	}
	s, err := New(Config{ID: "s1", Mode: "act", Provider: m, Impls: impls, Policy: policy, Log: log, MaxTurns: 200, ContextWindow: window,
		Host: testHost{update: func(u wire.SessionUpdate) { mu.Lock(); updates = append(updates, u); mu.Unlock() }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, log, st, &updates
}

// work is a model that reads a big file at each step, edits one file
// every fifth step, sets a plan at step 3, and ends at step steps.
func work(steps int) func(n int, req provider.Request) ([]provider.Event, error) {
	return func(n int, req provider.Request) ([]provider.Event, error) {
		id := fmt.Sprintf("c%d", n)
		switch {
		case n == steps:
			return textEvents("All done."), nil
		case n == 3:
			return callEvents(id, tools.NameUpdatePlan, map[string]any{"entries": []any{
				map[string]any{"content": "rewrite the parser", "status": "in_progress"},
				map[string]any{"content": "run the tests", "status": "pending"}}}), nil
		case n%5 == 0:
			return callEvents(id, tools.NameEditor, map[string]any{"path": fmt.Sprintf("pkg/file%d.go", n), "old_text": "a", "new_text": "b"}), nil
		}
		return callEvents(id, tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "big.txt"}}}), nil
	}
}

func TestOverheadSize(t *testing.T) {
	s, _, _, _ := testSession(t, &scriptModel{}, 10000, 0)
	t.Logf("system prompt and tools: %d tokens estimated", s.overhead())
}

func TestSplitKeptNeverSeparatesCallsFromResults(t *testing.T) {
	s, _, _, _ := testSession(t, &scriptModel{}, 10000, 0)
	var view []provider.Message
	view = append(view, provider.UserText("start"))
	for i := range 12 {
		calls := provider.Message{Role: provider.RoleAssistant}
		results := provider.Message{Role: provider.RoleTool}
		for j := range i%3 + 1 {
			id := fmt.Sprintf("%d-%d", i, j)
			calls.Parts = append(calls.Parts, provider.CallPart(provider.ToolCall{ID: id, Name: "read_files", Args: json.RawMessage(`{}`)}))
			results.Parts = append(results.Parts, provider.ResultPart(provider.ToolResult{CallID: id, Content: strings.Repeat("y", 100*i)}))
		}
		view = append(view, calls, results)
		if i%4 == 3 {
			view = append(view, provider.UserText("more"), provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.TextPart("ok")}})
		}
	}
	for budget := 0; budget < 4000; budget += 50 {
		split := s.splitKept(view, budget)
		if split == 0 {
			t.Fatalf("budget %d: nothing compacted", budget)
		}
		if view[split].Role == provider.RoleTool {
			t.Fatalf("budget %d: the kept part starts with tool results, cut from their calls", budget)
		}
		if kept := s.estimateMessages(view[split:]); kept > budget && s.splitKept(view[split:], 0) != 0 {
			t.Fatalf("budget %d: kept %d tokens in more than one turn", budget, kept)
		}
	}
}

func TestAutoCompactionKeepsFactsAndResumes(t *testing.T) {
	m := &scriptModel{reply: work(40), summary: func(provider.Request) (string, error) {
		return "## Task\nRewrite the parser.\n## Decisions\nNone.", nil
	}}
	s, log, st, updates := testSession(t, m, 6000, 4000) // each read is a sixth of the window
	stop, err := s.Prompt(t.Context(), "Please rewrite the parser in pkg/")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	if m.summaries == 0 {
		t.Fatal("a 40-step session over a small window was never compacted")
	}
	var edited []string
	for n := 0; n < 40; n += 5 {
		edited = append(edited, fmt.Sprintf("pkg/file%d.go", n))
	}
	for i, req := range m.requests() {
		if est := provider.EstimateTokens(req); est > 6000 {
			t.Errorf("request %d was sent with %d estimated tokens, over the window", i, est)
		}
	}
	last := m.requests()[len(m.requests())-1]
	text := transcriptOf(last.Messages)
	for _, want := range append([]string{"Please rewrite the parser in pkg/", "rewrite the parser", "run the tests"}, edited...) {
		if !strings.Contains(text, want) {
			t.Errorf("the last request lost %q", want)
		}
	}
	var compactions int
	for _, u := range *updates {
		if c, ok := u.(wire.Compaction); ok {
			compactions++
			if c.Before <= c.After {
				t.Errorf("compaction from %v to %v tokens", c.Before, c.After)
			}
		}
	}
	if compactions != m.summaries {
		t.Errorf("%d compaction updates for %d summaries", compactions, m.summaries)
	}

	// The store resumes the view the model saw, with its facts.
	log.Flush()
	meta, recs, err := st.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	r := Resume(meta, recs)
	if got, want := transcriptOf(r.History), transcriptOf(s.History()); got != want {
		t.Errorf("resumed view differs from the live one:\n%s\n---\n%s", got, want)
	}
	if r.Messages <= len(r.History) {
		t.Errorf("the full history (%d messages) is not longer than the view (%d)", r.Messages, len(r.History))
	}
	if len(r.Plan) != 2 || r.LastPrompt != "Please rewrite the parser in pkg/" || len(r.Edited) != len(edited) {
		t.Errorf("resumed plan %v, latest request %q, edited %v", r.Plan, r.LastPrompt, r.Edited)
	}
}

func TestCompactionWithoutSummaryElides(t *testing.T) {
	m := &scriptModel{reply: work(30), summary: func(provider.Request) (string, error) {
		return "", errors.New("summaries are broken")
	}}
	s, _, _, updates := testSession(t, m, 6000, 4000)
	if stop, err := s.Prompt(t.Context(), "go"); err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	last := m.requests()[len(m.requests())-1]
	text := transcriptOf(last.Messages)
	if !strings.Contains(text, "output elided (4000 bytes)") && !strings.Contains(text, "dropped") {
		t.Errorf("no elided output in the last request:\n%.2000s", text)
	}
	for i, msg := range last.Messages {
		for _, p := range msg.Parts {
			if p.Result != nil && (i == 0 || !hasCall(last.Messages[i-1], p.Result.CallID)) && msg.Role == provider.RoleTool {
				t.Errorf("result %s has no call before it", p.Result.CallID)
			}
		}
	}
	found := false
	for _, u := range *updates {
		if c, ok := u.(wire.Compaction); ok && strings.Contains(c.Summary, "summaries are broken") {
			found = true
		}
	}
	if !found {
		t.Error("no compaction update says the summary failed")
	}
}

func hasCall(m provider.Message, id string) bool {
	for _, p := range m.Parts {
		if p.Call != nil && p.Call.ID == id {
			return true
		}
	}
	return false
}

func TestContextLengthErrorRecoveredOnce(t *testing.T) {
	// The model refuses request 6 once, then accepts it.
	refused := 0
	m := &scriptModel{summary: func(provider.Request) (string, error) { return "summary", nil }}
	m.reply = func(n int, req provider.Request) ([]provider.Event, error) {
		if n == 6 && refused == 0 {
			refused++
			return nil, errTooLong
		}
		return work(10)(n-refused, req)
	}
	s, _, _, _ := testSession(t, m, 100000, 2000)
	if stop, err := s.Prompt(t.Context(), "go"); err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	if m.summaries != 1 {
		t.Errorf("%d summaries, want the one after the refusal", m.summaries)
	}
	if w := s.tokens.size(); w != 30000 {
		t.Errorf("window after the error = %d, want the 30000 it named", w)
	}

	// Refused twice in a row: the turn fails, with the provider's error.
	m2 := &scriptModel{summary: func(provider.Request) (string, error) { return "summary", nil }}
	m2.reply = func(n int, req provider.Request) ([]provider.Event, error) {
		if n >= 4 {
			return nil, errTooLong
		}
		return work(10)(n, req)
	}
	s2, _, _, _ := testSession(t, m2, 100000, 2000)
	_, err := s2.Prompt(t.Context(), "go")
	if !errors.Is(err, provider.ErrContextLength) {
		t.Fatalf("Prompt err = %v, want the context-length error", err)
	}
	if n := len(m2.requests()); n != 6 {
		t.Errorf("%d requests, want 4 good ones, the refused one and one retry", n)
	}
	// The session is usable afterwards.
	m2.reply = func(n int, req provider.Request) ([]provider.Event, error) { return textEvents("fine"), nil }
	if stop, err := s2.Prompt(t.Context(), "again"); err != nil || stop != StopEndTurn {
		t.Fatalf("next Prompt = %v, %v", stop, err)
	}
}

func TestManualCompactAndUsage(t *testing.T) {
	m := &scriptModel{summary: func(provider.Request) (string, error) { return "the summary", nil }}
	m.reply = func(n int, req provider.Request) ([]provider.Event, error) {
		evs, _ := work(4)(n, req)
		u := &provider.Usage{InputTokens: 1000, OutputTokens: 10, CacheReadTokens: 500}
		return append(evs[:len(evs)-1:len(evs)-1], provider.Event{Kind: provider.EventUsage, Usage: u}, evs[len(evs)-1]), nil
	}
	s, _, _, updates := testSession(t, m, 100000, 3000)
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	before, after, err := s.Compact(t.Context())
	if err != nil || after >= before {
		t.Fatalf("Compact = %d, %d, %v", before, after, err)
	}
	var last *wire.ClineUsageUpdate
	for _, u := range *updates {
		if u, ok := u.(wire.ClineUsageUpdate); ok {
			last = &u
		}
	}
	if last == nil {
		t.Fatal("no usage_update")
	}
	sess, ctxInfo := last.Session, last.Context
	// gpt-4o: 2.50 in, 10 out, 1.25 cached per million.
	wantCost := 5 * (1000*2.5 + 10*10 + 500*1.25) / 1e6
	// The context in use is never less than the daemon's own estimate of
	// the last request, here above the 1500 the server counted.
	reqs := m.requests()
	wantUsed := max(1500, provider.EstimateTokens(reqs[len(reqs)-1])) + 10
	if sess.InputTokens != 5000 || sess.CostUSD == nil || math.Abs(*sess.CostUSD-wantCost) > 1e-9 || ctxInfo.Size != 100000 || ctxInfo.Used != wantUsed || wantUsed == 1510 {
		t.Errorf("usage_update = %+v", *last)
	}
}

func transcriptOf(msgs []provider.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(renderMessage(m, summaryResultChars))
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkCompact measures compacting a 32k-token window's history of
// 30 KB tool outputs (the daemon's side only: the summary comes back at
// once, and the elided variant makes no model request).
func BenchmarkCompact(b *testing.B) {
	for _, bc := range []struct {
		name    string
		summary func(provider.Request) (string, error)
	}{
		{"summary", func(provider.Request) (string, error) { return "## Task\nthe task", nil }},
		{"elided", func(provider.Request) (string, error) { return "", errors.New("no summary") }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := &scriptModel{summary: bc.summary}
			s, err := New(Config{ID: "b", Mode: "act", Provider: m, ContextWindow: 32768}, nil)
			if err != nil {
				b.Fatal(err)
			}
			view := []provider.Message{provider.UserText("port the store")}
			for i := 0; s.estimateMessages(view) < 24000; i++ {
				id := fmt.Sprint(i)
				view = append(view,
					provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.CallPart(provider.ToolCall{ID: id, Name: "read_files", Args: json.RawMessage(`{"files":[{"path":"big.txt"}]}`)})}},
					provider.Message{Role: provider.RoleTool, Parts: []provider.Part{provider.ResultPart(provider.ToolResult{CallID: id, Name: "read_files", Content: strings.Repeat("func f() {}\n", 2500)})}})
			}
			b.ResetTimer()
			for b.Loop() {
				s.mu.Lock()
				s.history = view
				s.mu.Unlock()
				if _, err := s.compact(b.Context(), ReasonAuto, 2000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCompactElidesAnOversizedKeptPart: when the system prompt leaves too
// little room for the newest turns, their outputs are elided too, all but
// the newest turn's.
func TestCompactElidesAnOversizedKeptPart(t *testing.T) {
	m := &scriptModel{summary: func(provider.Request) (string, error) { return "s", nil }}
	s, err := New(Config{ID: "b", Mode: "act", Provider: m, ContextWindow: 4000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	view := []provider.Message{provider.UserText("start")}
	for i := range 6 {
		id := fmt.Sprint(i)
		view = append(view,
			provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.CallPart(provider.ToolCall{ID: id, Name: "read_files", Args: json.RawMessage(`{}`)})}},
			provider.Message{Role: provider.RoleTool, Parts: []provider.Part{provider.ResultPart(provider.ToolResult{CallID: id, Content: strings.Repeat("z", 1000)})}})
	}
	s.history = view
	c, err := s.compact(t.Context(), ReasonAuto, 3000)
	if err != nil {
		t.Fatal(err)
	}
	got := s.History()
	if c.Kept != 2 || !strings.Contains(transcriptOf(got), "output elided (1000 bytes)") {
		t.Fatalf("kept %d messages; view:\n%s", c.Kept, transcriptOf(got))
	}
	if last := got[len(got)-1].Parts[0].Result; last == nil || len(last.Content) != 1000 {
		t.Errorf("the newest result was not kept verbatim: %+v", last)
	}
	if 3000+c.After > 3800 {
		t.Errorf("after compaction: %d tokens with the overhead", 3000+c.After)
	}
}
