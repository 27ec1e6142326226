package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/tools"
)

// guard bounds every wait in these tests, so that a scheduler that fails
// to overlap or to cancel makes a test fail instead of hang. No test
// measures time.
const guard = 10 * time.Second

// execFunc is what a fake invocation does; id is its "id" argument.
type execFunc func(ctx context.Context, id string, opts tools.ExecOptions) (tools.Result, error)

// harness builds fake tools on the real tools.NewTool, so validation is
// the real one, and records what runs.
type harness struct {
	t        *testing.T
	tools    map[string]tools.Tool
	mu       sync.Mutex
	log      []string // "start <id>" and "end <id>", in the order they happened
	executed map[string]int
	updates  []CallUpdate
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, tools: map[string]tools.Tool{}, executed: map[string]int{}}
}

// add registers a tool taking {"id": string} whose calls run exec.
func (h *harness) add(name string, kind tools.Kind, readOnly bool, exec execFunc) {
	h.t.Helper()
	spec := tools.Spec{
		ID: name, Name: name, Kind: kind, ReadOnly: readOnly, Description: "test tool",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"commands":{"type":"array","items":{"type":"string"}}},"required":["id"]}`),
	}
	tool, err := tools.NewTool(spec, func(args json.RawMessage) (tools.Invocation, error) {
		var a struct {
			ID       string   `json:"id"`
			Commands []string `json:"commands"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		inv := &fakeInvocation{h: h, name: name, kind: kind, id: a.ID, exec: exec}
		if kind == tools.KindExecute {
			return &fakeRunner{inv, append([]string{}, a.Commands...)}, nil
		}
		return inv, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.tools[name] = tool
}

func (h *harness) record(event string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, event)
}

func (h *harness) config(mode string) SchedulerConfig {
	return SchedulerConfig{
		Mode: mode,
		Tools: func(name string) (tools.Tool, bool) {
			t, ok := h.tools[name]
			return t, ok
		},
		Observer: func(u CallUpdate) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.updates = append(h.updates, u)
		},
	}
}

type fakeInvocation struct {
	h    *harness
	name string
	kind tools.Kind
	id   string
	exec execFunc
}

func (f *fakeInvocation) Describe(context.Context) tools.Description {
	return tools.Description{Title: f.name + " " + f.id, Kind: f.kind, Locations: []tools.Location{{Path: f.id}}}
}

func (f *fakeInvocation) Execute(ctx context.Context, opts tools.ExecOptions) (tools.Result, error) {
	f.h.mu.Lock()
	f.h.executed[f.id]++
	f.h.mu.Unlock()
	f.h.record("start " + f.id)
	defer f.h.record("end " + f.id)
	if f.exec == nil {
		return tools.Result{Content: "ran " + f.id}, nil
	}
	return f.exec(ctx, f.id, opts)
}

// fakeRunner is a fake invocation that runs commands, as run_commands'
// does (tools.CommandRunner).
type fakeRunner struct {
	*fakeInvocation
	commands []string
}

func (f *fakeRunner) Commands() []string { return f.commands }

func call(name, id string) Call {
	return Call{ID: "call-" + id, Name: name, Args: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))}
}

// approverFunc adapts a function to Approver.
type approverFunc func(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)

func (f approverFunc) Approve(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
	return f(ctx, req)
}

func states(results []CallResult) []CallState {
	out := make([]CallState, len(results))
	for i, r := range results {
		out[i] = r.State
	}
	return out
}

func TestSchedulerReadOnlyCallsOverlap(t *testing.T) {
	// Each call waits for the other to have started; they can both end
	// only if they run at the same time.
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	other := map[string]string{"a": "b", "b": "a"}
	h := newHarness(t)
	h.add("read", tools.KindRead, true, func(ctx context.Context, id string, _ tools.ExecOptions) (tools.Result, error) {
		close(started[id])
		select {
		case <-started[other[id]]:
			return tools.Result{Content: "overlapped"}, nil
		case <-time.After(guard):
			return tools.Errorf("%s ran while %s did not", id, other[id]), nil
		}
	})
	results := NewScheduler(h.config(tools.ModeAct)).Run(context.Background(), []Call{call("read", "a"), call("read", "b")})
	for _, r := range results {
		if r.State != StateSuccess {
			t.Errorf("%s: %s %q", r.Call.ID, r.State, r.Result.Content)
		}
	}
}

func TestSchedulerMutatingCallsRunAloneInOrder(t *testing.T) {
	var inFlight, mutating atomic.Int32
	var violations atomic.Int32
	busy := func() {
		for range 50 {
			runtime.Gosched() // widen the window in which an overlap would show
		}
	}
	h := newHarness(t)
	h.add("edit", tools.KindEdit, false, func(context.Context, string, tools.ExecOptions) (tools.Result, error) {
		if inFlight.Add(1) != 1 || mutating.Add(1) != 1 {
			violations.Add(1)
		}
		busy()
		mutating.Add(-1)
		inFlight.Add(-1)
		return tools.Result{Content: "edited"}, nil
	})
	h.add("read", tools.KindRead, true, func(context.Context, string, tools.ExecOptions) (tools.Result, error) {
		inFlight.Add(1)
		if mutating.Load() != 0 {
			violations.Add(1)
		}
		busy()
		if mutating.Load() != 0 {
			violations.Add(1)
		}
		inFlight.Add(-1)
		return tools.Result{Content: "read"}, nil
	})
	kinds := "rmrrmmrrrmr" // r: read-only, m: mutating
	var calls []Call
	for i, k := range kinds {
		name := "read"
		if k == 'm' {
			name = "edit"
		}
		calls = append(calls, call(name, fmt.Sprint(i)))
	}
	cfg := h.config(tools.ModeAct)
	cfg.Policy = mustPolicy(t, PolicyConfig{Approvals: Approvals{Edit: Allow}})
	for round := range 20 {
		h.log = nil
		results := NewScheduler(cfg).Run(context.Background(), calls)
		for i, r := range results {
			if r.State != StateSuccess || r.Call.ID != calls[i].ID {
				t.Fatalf("round %d result %d: %s %s %q", round, i, r.Call.ID, r.State, r.Result.Content)
			}
		}
		if n := violations.Load(); n > 0 {
			t.Fatalf("round %d: a mutating call overlapped another call %d times", round, n)
		}
		// Every mutating call starts after all earlier calls ended and
		// ends before any later call starts.
		pos := func(event string) int { return slices.Index(h.log, event) }
		for k, kind := range kinds {
			if kind != 'm' {
				continue
			}
			start, end := pos(fmt.Sprint("start ", k)), pos(fmt.Sprint("end ", k))
			for j := range kinds {
				switch {
				case j < k && pos(fmt.Sprint("end ", j)) > start:
					t.Fatalf("round %d: call %d started before earlier call %d ended: %v", round, k, j, h.log)
				case j > k && pos(fmt.Sprint("start ", j)) < end:
					t.Fatalf("round %d: call %d started before mutating call %d ended: %v", round, j, k, h.log)
				}
			}
		}
	}
}

// holdCall2 is a command whose call "2" closes running and then waits for
// its context to end (up to guard); the other calls succeed at once.
func holdCall2(running chan struct{}) func(context.Context, string, tools.ExecOptions) (tools.Result, error) {
	return func(ctx context.Context, id string, _ tools.ExecOptions) (tools.Result, error) {
		if id != "2" {
			return tools.Result{Content: "ok"}, nil
		}
		close(running)
		select {
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		case <-time.After(guard):
			return tools.Errorf("never cancelled"), nil
		}
	}
}

func TestSchedulerCancelMidBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := make(chan struct{})
	h := newHarness(t)
	h.add("cmd", tools.KindExecute, false, holdCall2(running))
	h.add("read", tools.KindRead, true, nil)
	go func() {
		select {
		case <-running:
			cancel()
		case <-time.After(guard):
		}
	}()
	cfg := h.config(tools.ModeAct)
	cfg.Policy = mustPolicy(t, PolicyConfig{Approvals: Approvals{Execute: Allow}})
	results := NewScheduler(cfg).Run(ctx, []Call{call("cmd", "1"), call("cmd", "2"), call("cmd", "3"), call("read", "4")})
	if got, want := states(results), []CallState{StateSuccess, StateCancelled, StateCancelled, StateCancelled}; !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v (%+v)", got, want, results)
	}
	if h.executed["3"] != 0 || h.executed["4"] != 0 {
		t.Errorf("calls after the cancelled one ran: %v", h.executed)
	}
	for _, r := range results[1:] {
		if !r.Result.IsError || r.Result.Content == "" {
			t.Errorf("%s: cancelled call needs an error result for the model, got %+v", r.Call.ID, r.Result)
		}
	}
}

// lagCtx is a turn's context whose cancellation reaches the contexts
// derived from it only when the test says (through AfterFunc, which
// context.WithCancel uses for a parent that has it). It holds open the
// window a plain context's cancel leaves too, while it cancels its
// children one by one, in no set order: the turn is cancelled, some of
// its calls' contexts are, others not yet. (TestSchedulerCancelMidBatch
// failed now and then under -race on a loaded machine for that reason.)
type lagCtx struct {
	context.Context // Background: no deadline, no values
	mu              sync.Mutex
	done            chan struct{}
	err             error
	funcs           []func() // registered by the derived contexts, in order
}

func newLagCtx() *lagCtx {
	return &lagCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *lagCtx) Done() <-chan struct{} { return c.done }

func (c *lagCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *lagCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.funcs = append(c.funcs, f)
	return func() bool { return false }
}

// cancel cancels c; of the contexts derived from it, it reaches only the
// ones with the given indexes (in the order they were derived).
func (c *lagCtx) cancel(reach ...int) {
	c.mu.Lock()
	c.err = context.Canceled
	close(c.done)
	funcs := slices.Clone(c.funcs)
	c.mu.Unlock()
	for _, i := range reach {
		funcs[i]()
	}
}

// reachAll lets the cancellation reach every derived context.
func (c *lagCtx) reachAll() {
	c.mu.Lock()
	funcs := slices.Clone(c.funcs)
	c.mu.Unlock()
	for _, f := range funcs {
		f()
	}
}

// TestSchedulerCancelledTurnRunsNoMoreCalls: once the turn's context is
// cancelled, no further call starts, even while the cancellation has not
// yet reached the later calls' own contexts.
func TestSchedulerCancelledTurnRunsNoMoreCalls(t *testing.T) {
	ctx := newLagCtx()
	defer ctx.reachAll()
	running := make(chan struct{})
	h := newHarness(t)
	h.add("cmd", tools.KindExecute, false, holdCall2(running))
	h.add("read", tools.KindRead, true, nil)
	go func() {
		<-running
		ctx.cancel(1) // the turn, and call 2's own context; not yet those of 3 and 4
	}()
	cfg := h.config(tools.ModeAct)
	cfg.Policy = mustPolicy(t, PolicyConfig{Approvals: Approvals{Execute: Allow}})
	results := NewScheduler(cfg).Run(ctx, []Call{call("cmd", "1"), call("cmd", "2"), call("cmd", "3"), call("read", "4")})
	if got, want := states(results), []CallState{StateSuccess, StateCancelled, StateCancelled, StateCancelled}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if h.executed["3"] != 0 || h.executed["4"] != 0 {
		t.Errorf("calls after the cancel ran: %v", h.executed)
	}
}

func TestSchedulerApprovalCancelledCancelsTheRest(t *testing.T) {
	h := newHarness(t)
	h.add("edit", tools.KindEdit, false, nil)
	h.add("read", tools.KindRead, true, nil)
	var asked []string
	cfg := h.config(tools.ModeAct)
	cfg.Approver = approverFunc(func(_ context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
		asked = append(asked, req.CallID)
		if req.CallID == "call-2" {
			return ApprovalOutcome{Choice: ApprovalCancelled}, nil
		}
		return ApprovalOutcome{Choice: AllowOnce}, nil
	})
	results := NewScheduler(cfg).Run(context.Background(),
		[]Call{call("read", "0"), call("edit", "1"), call("edit", "2"), call("edit", "3"), call("read", "4")})
	if got, want := states(results), []CallState{StateSuccess, StateSuccess, StateCancelled, StateCancelled, StateCancelled}; !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	if want := []string{"call-1", "call-2"}; !slices.Equal(asked, want) {
		t.Errorf("asked about %v, want %v", asked, want)
	}
	if h.executed["2"]+h.executed["3"]+h.executed["4"] != 0 {
		t.Errorf("cancelled calls ran: %v", h.executed)
	}
}

func TestSchedulerRejection(t *testing.T) {
	h := newHarness(t)
	h.add("edit", tools.KindEdit, false, nil)
	h.add("cmd", tools.KindExecute, false, nil)
	answers := map[string]ApprovalOutcome{
		"call-1": {Choice: RejectOnce, Feedback: "use the other file"},
		"call-2": {Choice: AllowOnce},
		"call-3": {Choice: RejectAlways},
		"call-5": {Choice: AllowAlways},
		"call-7": {Choice: "maybe"}, // not understood: treated as a rejection
	}
	var asked []string
	var requests []ApprovalRequest
	cfg := h.config(tools.ModeAct)
	cfg.Policy = mustPolicy(t, PolicyConfig{})
	cfg.Approver = approverFunc(func(_ context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
		asked = append(asked, req.CallID)
		requests = append(requests, req)
		return answers[req.CallID], nil
	})
	cmd := func(id, command string) Call {
		return Call{ID: "call-" + id, Name: "cmd", Args: json.RawMessage(fmt.Sprintf(`{"id":%q,"commands":[%q]}`, id, command))}
	}
	results := NewScheduler(cfg).Run(context.Background(), []Call{
		call("edit", "1"), call("edit", "2"),
		cmd("3", "rm -rf build"), cmd("4", "rm -rf build"), // always reject: the second is not asked
		cmd("5", "go test"), cmd("6", "go test"), // always allow: the second is not asked
		call("edit", "7"),
	})
	want := []CallState{StateError, StateSuccess, StateError, StateError, StateSuccess, StateSuccess, StateError}
	if got := states(results); !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	if want := []string{"call-1", "call-2", "call-3", "call-5", "call-7"}; !slices.Equal(asked, want) {
		t.Errorf("asked about %v, want %v", asked, want)
	}
	if c := results[0].Result.Content; !strings.Contains(c, "denied by the user") || !strings.Contains(c, "use the other file") {
		t.Errorf("rejection result %q lacks the denial or the feedback", c)
	}
	if c := results[3].Result.Content; !strings.Contains(c, "policy") || !strings.Contains(c, "session rule") {
		t.Errorf("call after always reject: %q, want a policy refusal citing the session rule", c)
	}
	for _, id := range []string{"1", "3", "4", "7"} {
		if h.executed[id] != 0 {
			t.Errorf("refused call %s ran", id)
		}
	}
	if r := requests[0]; r.Tool != "edit" || r.Description.Title != "edit 1" || string(r.Args) != `{"id":"1"}` || r.Reason == "" {
		t.Errorf("approval request %+v lacks the call's description, arguments or reason", r)
	}
}

func TestSchedulerPolicyDecisions(t *testing.T) {
	h := newHarness(t)
	h.add("edit", tools.KindEdit, false, nil)
	h.add("read", tools.KindRead, true, nil)
	asked := 0
	approver := approverFunc(func(context.Context, ApprovalRequest) (ApprovalOutcome, error) {
		asked++
		return ApprovalOutcome{Choice: AllowOnce}, nil
	})
	calls := []Call{call("read", "1"), call("edit", "2")}

	t.Run("deny refuses without asking", func(t *testing.T) {
		asked = 0
		cfg := h.config(tools.ModeAct)
		cfg.Approver = approver
		cfg.Policy = mustPolicy(t, PolicyConfig{Rules: []Rule{{Tool: "ed*", Decision: Deny}}})
		results := NewScheduler(cfg).Run(context.Background(), calls)
		if got := states(results); !slices.Equal(got, []CallState{StateSuccess, StateError}) || asked != 0 {
			t.Errorf("states %v, asked %d times; want [success error], never asked", got, asked)
		}
		if !strings.Contains(results[1].Result.Content, `rules[0]`) {
			t.Errorf("refusal %q does not say which rule", results[1].Result.Content)
		}
	})
	t.Run("ask without an approver refuses", func(t *testing.T) {
		results := NewScheduler(h.config(tools.ModeAct)).Run(context.Background(), calls)
		if got := states(results); !slices.Equal(got, []CallState{StateSuccess, StateError}) {
			t.Errorf("states %v, want [success error]", got)
		}
	})
	t.Run("yolo runs everything without asking", func(t *testing.T) {
		asked = 0
		cfg := h.config(tools.ModeYolo)
		cfg.Approver = approver
		results := NewScheduler(cfg).Run(context.Background(), calls)
		if got := states(results); !slices.Equal(got, []CallState{StateSuccess, StateSuccess}) || asked != 0 {
			t.Errorf("states %v, asked %d times; want all success, never asked", got, asked)
		}
	})
	t.Run("approver failure is an error result", func(t *testing.T) {
		cfg := h.config(tools.ModeAct)
		cfg.Approver = approverFunc(func(context.Context, ApprovalRequest) (ApprovalOutcome, error) {
			return ApprovalOutcome{}, errors.New("connection closed")
		})
		results := NewScheduler(cfg).Run(context.Background(), calls)
		if r := results[1]; r.State != StateError || r.Err == nil || !strings.Contains(r.Err.Error(), "connection closed") {
			t.Errorf("got %+v, want an error result carrying the fault", r)
		}
	})
}

func TestSchedulerValidationAndUnknownTools(t *testing.T) {
	h := newHarness(t)
	h.add("read", tools.KindRead, true, nil)
	h.add("edit", tools.KindEdit, false, nil)
	cfg := h.config(tools.ModeAct)
	cfg.Policy = mustPolicy(t, PolicyConfig{Approvals: Approvals{Edit: Allow}})
	cfg.Exists = func(name string) bool { return name == "run_commands" }
	results := NewScheduler(cfg).Run(context.Background(), []Call{
		{ID: "bad", Name: "read", Args: json.RawMessage(`{"id":7}`)},
		{ID: "missing", Name: "edit", Args: json.RawMessage(`{}`)},
		{ID: "empty", Name: "edit"},
		{ID: "mode", Name: "run_commands", Args: json.RawMessage(`{}`)},
		{ID: "made-up", Name: "teleport", Args: json.RawMessage(`{}`)},
		call("read", "ok"),
	})
	want := []struct {
		state CallState
		text  string
	}{
		{StateError, "id"},
		{StateError, "id"},
		{StateError, "id"},
		{StateError, "tool run_commands is not available in act mode"},
		{StateError, "tool teleport does not exist"},
		{StateSuccess, "ran ok"},
	}
	for i, w := range want {
		r := results[i]
		if r.State != w.state || !strings.Contains(r.Result.Content, w.text) || r.Result.IsError != (w.state == StateError) {
			t.Errorf("%s: %s %q, want %s with %q", r.Call.ID, r.State, r.Result.Content, w.state, w.text)
		}
	}
	var vErr *tools.ValidationError
	if errors.As(results[0].Err, &vErr) {
		t.Errorf("a validation error is the model's to fix, not a daemon fault: %v", results[0].Err)
	}
	if len(h.executed) != 1 {
		t.Errorf("ran %v, want only the valid call", h.executed)
	}
}

func TestSchedulerFaults(t *testing.T) {
	h := newHarness(t)
	h.add("read", tools.KindRead, true, func(_ context.Context, id string, _ tools.ExecOptions) (tools.Result, error) {
		switch id {
		case "err":
			return tools.Result{}, errors.New("disk on fire")
		case "panic":
			panic("bug")
		case "modelerr":
			return tools.Errorf("no such file"), nil
		}
		return tools.Result{Content: "fine"}, nil
	})
	results := NewScheduler(h.config(tools.ModeAct)).Run(context.Background(),
		[]Call{call("read", "err"), call("read", "panic"), call("read", "modelerr"), call("read", "fine")})
	if got, want := states(results), []CallState{StateError, StateError, StateError, StateSuccess}; !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	if results[0].Err == nil || results[1].Err == nil || results[2].Err != nil {
		t.Errorf("daemon faults must carry Err and model-fixable errors must not: %v / %v / %v",
			results[0].Err, results[1].Err, results[2].Err)
	}
	if !strings.Contains(results[0].Result.Content, "disk on fire") || results[2].Result.Content != "no such file" {
		t.Errorf("results %q, %q", results[0].Result.Content, results[2].Result.Content)
	}
}

func TestSchedulerUpdates(t *testing.T) {
	h := newHarness(t)
	h.add("cmd", tools.KindExecute, false, func(_ context.Context, _ string, opts tools.ExecOptions) (tools.Result, error) {
		opts.Output("line 1\n")
		opts.Output("line 2\n")
		return tools.Result{Content: "done"}, nil
	})
	cfg := h.config(tools.ModeAct)
	cfg.Approver = approverFunc(func(context.Context, ApprovalRequest) (ApprovalOutcome, error) {
		return ApprovalOutcome{Choice: AllowOnce}, nil
	})
	NewScheduler(cfg).Run(context.Background(), []Call{call("nope", "0"), call("cmd", "1")})

	var got []string
	for _, u := range h.updates {
		s := fmt.Sprintf("%d %s", u.Index, u.State)
		if u.Output != "" {
			s += " " + strings.TrimSpace(u.Output)
		}
		if u.Result != nil {
			s += " result"
		}
		if u.Description != nil {
			s += " described"
		}
		got = append(got, s)
		if u.Index == 1 && u.State != StateValidating && (u.Tool != "cmd" || u.Kind != tools.KindExecute || u.Call.ID != "call-1") {
			t.Errorf("update %+v lacks the call's tool, kind or id", u)
		}
	}
	want := []string{
		"0 validating",
		"0 error result",
		"1 validating",
		"1 scheduled",
		"1 awaiting_approval described",
		"1 executing described",
		"1 executing line 1 described",
		"1 executing line 2 described",
		"1 success result described",
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
