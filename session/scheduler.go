package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// CallState is where a tool call is on its way through the scheduler.
type CallState string

// Call states (docs/DESIGN.md §2). A call goes validating → scheduled, waits
// there for its turn, then → awaiting_approval when the policy asks →
// executing → success | error | cancelled. A call whose validation fails
// goes straight to error; one cancelled or refused before it runs goes
// from wherever it was to cancelled or error.
const (
	StateValidating       CallState = "validating"
	StateScheduled        CallState = "scheduled"
	StateAwaitingApproval CallState = "awaiting_approval"
	StateExecuting        CallState = "executing"
	StateSuccess          CallState = "success"
	StateError            CallState = "error"
	StateCancelled        CallState = "cancelled"
)

// Final reports whether the state is one a call ends in.
func (s CallState) Final() bool {
	return s == StateSuccess || s == StateError || s == StateCancelled
}

// Call is one tool call from a model reply.
type Call struct {
	// ID is the provider's call id (or one the session made up for the
	// XML path); results are matched to calls by it.
	ID   string
	Name string
	Args json.RawMessage
}

// ApprovalChoice is the user's answer to an approval request; the values
// are PROTOCOL.md §4's option kinds plus the cancelled outcome.
type ApprovalChoice string

// Approval choices.
const (
	AllowOnce    ApprovalChoice = "allow_once"
	AllowAlways  ApprovalChoice = "allow_always"
	RejectOnce   ApprovalChoice = "reject_once"
	RejectAlways ApprovalChoice = "reject_always"
	// ApprovalCancelled means the request was dismissed or the turn
	// cancelled: the call and every call after it in the batch are
	// cancelled.
	ApprovalCancelled ApprovalChoice = "cancelled"
)

// ApprovalRequest asks the user whether a call may run.
type ApprovalRequest struct {
	CallID string
	// Tool is the resolved tool name.
	Tool string
	Args json.RawMessage
	// Description is the invocation's account of itself, with the preview
	// diff of an edit and the command of a run.
	Description tools.Description
	// Reason says why the policy asks, for a client that shows it.
	Reason string
	// Always names what an "always allow" or "always reject" answer
	// would cover (Scope.Label: "go test …", "edits of docs/a.txt"), for
	// the labels of those options.
	Always string
	// Options, when set, replace the usual answers (a question that is no
	// tool call's, such as whether to trust a folder's hooks); their ids
	// are approval choices.
	Options []wire.PermissionOption
}

// ApprovalOutcome is the user's answer.
type ApprovalOutcome struct {
	Choice ApprovalChoice
	// Feedback is what the user wrote with the answer; a rejection passes
	// it to the model.
	Feedback string
	// Kept, with AllowOnce, is the text the user kept of an edit of one
	// file (some of its hunks): that is applied instead of the proposal
	// (tools.Narrow).
	Kept *string
}

// Approver asks the user about a call and waits for the answer. The
// approvals broker implements it for each way of asking (PROTOCOL.md §4).
// An error means the question could not be asked or answered, which is a
// fault of the daemon or the connection, not a user's rejection.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)
}

// CallUpdate reports a change of one call, for tool_call and
// tool_call_update notifications.
type CallUpdate struct {
	// Index is the call's position in the batch.
	Index int
	Call  Call
	// Tool is the resolved tool name, empty while validating or when no
	// enabled tool has the call's name.
	Tool  string
	Kind  tools.Kind
	State CallState
	// Description is set from the moment the invocation has described
	// itself, just before it is asked about or run.
	Description *tools.Description
	// Output is a chunk of streamed output; updates that carry one keep
	// State executing.
	Output string
	// Terminal is the id of a client terminal the call has started a
	// command in (tools.ExecOptions.Terminal); State stays executing.
	Terminal string
	// HookNotes are what the call's hooks did ("Hook PreToolUse (name):
	// blocked: reason"), for the call's card: on an update of their own
	// as they happen (State unchanged) and again with the final state.
	HookNotes []string
	// Result is set in the final state.
	Result *tools.Result
}

// SchedulerConfig holds what stays fixed for a scheduler's batches.
type SchedulerConfig struct {
	// Mode is the session's mode, for the policy and for messages.
	Mode string
	// Root is the session's folder, to name paths in approval labels.
	Root string
	// Tools finds the tool a call names among those the mode enables, by
	// name or legacy alias (tools.Pick over Registry.Enabled does this).
	Tools func(name string) (tools.Tool, bool)
	// Exists, when set, tells a tool that exists in other modes from a
	// name the model made up, so the answer can say which it is. Without
	// it every missing tool is answered as not available in the mode.
	Exists func(name string) bool
	// Policy decides which calls run, ask or are refused; nil uses the
	// defaults.
	Policy *Policy
	// Approver asks the user; when nil, a call that needs asking is
	// refused.
	Approver Approver
	// Hooks, when set, runs the user's PreToolUse hooks after the mode's
	// guard and before the policy, PostToolUse hooks after a call
	// succeeded, and Notification hooks before the user is asked.
	Hooks Hooks
	// Observer receives every state change and output chunk. It is called
	// one update at a time, in order for each call, and should return
	// quickly: the batch waits for it.
	Observer func(CallUpdate)
}

// Scheduler runs the tool calls of a model reply. Calls are validated in
// the order the model gave them, then run in that order under one rule:
// a call that is not read-only (an edit, a command, a fetch, an MCP call)
// waits until every earlier call has finished and holds back every later
// one, while consecutive read-only calls run together. So [read, read,
// edit, read, read] runs the first two reads in parallel, then the edit
// alone, then the last two reads in parallel. Calls that fail validation
// take no part and do not split a group of reads.
//
// Each call is described, decided by the policy, asked about if the
// policy says ask, and executed. A rejection, a refusal and a failure
// become that call's result and the batch goes on; a cancellation (the
// context, or an approval answered "cancelled") cancels that call and
// every call after it, running or not, while earlier calls finish.
//
// A Scheduler is safe for concurrent use; each Run is independent.
type Scheduler struct {
	cfg SchedulerConfig
}

// NewScheduler returns a scheduler with the configuration. It is cheap:
// make a new one when the mode changes.
func NewScheduler(cfg SchedulerConfig) *Scheduler {
	if cfg.Policy == nil {
		cfg.Policy = &Policy{}
	}
	return &Scheduler{cfg: cfg}
}

// CallResult is how one call ended.
type CallResult struct {
	Call Call
	// Tool is the resolved tool name, or empty when there was none.
	Tool  string
	State CallState
	// Result is what the model is shown for the call; every call has one,
	// including those refused, rejected or cancelled.
	Result tools.Result
	// Err is a fault of the daemon behind an error result (a failed
	// approval request, a tool's Go error or panic), for the log.
	Err error
	// StopTurn, when set, is a hook's reason to end the turn after this
	// batch ("continue": false).
	StopTurn string
}

// Run takes a batch of calls through validation, approval and execution,
// and returns their results in the order of calls. It returns when every
// call has ended.
func (s *Scheduler) Run(ctx context.Context, calls []Call) []CallResult {
	b := &batch{
		s:       s,
		turn:    ctx,
		calls:   calls,
		items:   make([]*item, len(calls)),
		results: make([]CallResult, len(calls)),
		ctxs:    make([]context.Context, len(calls)),
		cancels: make([]context.CancelFunc, len(calls)),
	}
	for i := range calls {
		b.ctxs[i], b.cancels[i] = context.WithCancel(ctx)
	}
	defer func() {
		for _, cancel := range b.cancels {
			cancel()
		}
	}()

	for i := range calls {
		b.items[i] = b.validate(i)
	}
	for i := 0; i < len(calls); {
		if b.items[i] == nil {
			i++
			continue
		}
		if !b.items[i].spec.ReadOnly {
			b.run(i)
			i++
			continue
		}
		// A run of read-only calls goes in parallel, the last on this
		// goroutine: a lone call (the usual batch) starts no goroutine,
		// which under load would be one more wait for a processor.
		var group []int
		for ; i < len(calls) && (b.items[i] == nil || b.items[i].spec.ReadOnly); i++ {
			if b.items[i] != nil {
				group = append(group, i)
			}
		}
		var wg sync.WaitGroup
		for _, j := range group[:len(group)-1] {
			wg.Go(func() { b.run(j) })
		}
		b.run(group[len(group)-1])
		wg.Wait()
	}
	return b.results
}

// batch is the state of one Run.
type batch struct {
	s       *Scheduler
	turn    context.Context // Run's; each call's context derives from it
	calls   []Call
	items   []*item // nil once a call has ended in validation
	results []CallResult
	ctxs    []context.Context
	cancels []context.CancelFunc

	mu sync.Mutex // serialises the observer

	hmu   sync.Mutex
	notes map[int][]string // hook notes per call; guarded by hmu
}

// item is a validated call.
type item struct {
	tool tools.Tool
	spec tools.Spec
	inv  tools.Invocation
	args json.RawMessage // as validated and coerced
	desc *tools.Description
	// rewritten: a PreToolUse hook replaced the arguments, so the user is
	// asked about these rather than the model's.
	rewritten bool
}

func (b *batch) notify(i int, u CallUpdate) {
	if b.s.cfg.Observer == nil {
		return
	}
	u.Index, u.Call = i, b.calls[i]
	if it := b.items[i]; it != nil {
		u.Tool, u.Kind, u.Description = it.spec.Name, it.spec.Kind, it.desc
		if it.desc != nil && it.desc.Kind != "" {
			u.Kind = it.desc.Kind
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.cfg.Observer(u)
}

// finish records how call i ended and reports it.
func (b *batch) finish(i int, state CallState, res tools.Result, err error) {
	r := CallResult{Call: b.calls[i], State: state, Result: res, Err: err, StopTurn: b.results[i].StopTurn}
	if it := b.items[i]; it != nil {
		r.Tool = it.spec.Name
	}
	b.results[i] = r
	b.hmu.Lock()
	notes := b.notes[i]
	b.hmu.Unlock()
	b.notify(i, CallUpdate{State: state, Result: &res, HookNotes: notes})
}

// validate resolves and builds call i; it returns nil when the call ended
// here, with its result recorded.
func (b *batch) validate(i int) *item {
	c := b.calls[i]
	b.notify(i, CallUpdate{State: StateValidating})
	var tool tools.Tool
	ok := false
	if b.s.cfg.Tools != nil {
		tool, ok = b.s.cfg.Tools(c.Name)
	}
	if !ok {
		res := tools.NotAvailable(c.Name, b.s.cfg.Mode)
		if b.s.cfg.Exists != nil && !b.s.cfg.Exists(c.Name) {
			res = tools.Errorf("tool %s does not exist; call one of the tools you were given", c.Name)
		}
		b.finish(i, StateError, res, nil)
		return nil
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	inv, checked, err := b.buildGuarded(tool, args)
	if err != nil {
		// A *tools.ValidationError is worded for the model; any other
		// Build error is shown as it is, since nothing ran.
		b.finish(i, StateError, tools.Result{Content: err.Error(), IsError: true}, nil)
		return nil
	}
	it := &item{tool: tool, spec: tool.Spec(), inv: inv, args: checked}
	b.items[i] = it
	b.notify(i, CallUpdate{State: StateScheduled})
	return it
}

// buildGuarded builds the call and puts it to the mode's guard, which
// judges the call as it will run: the commands the invocation holds,
// whatever shape the arguments had. The model's call and the input a
// PreToolUse hook gives it pass the same guard.
func (b *batch) buildGuarded(tool tools.Tool, raw json.RawMessage) (tools.Invocation, json.RawMessage, error) {
	inv, checked, err := build(tool, raw)
	if err == nil {
		err = ModeRefusal(NewPolicyCall(tool.Spec(), inv, checked, b.s.cfg.Mode, nil))
	}
	return inv, checked, err
}

func build(tool tools.Tool, raw json.RawMessage) (inv tools.Invocation, args json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error validating the call: %v", p)
		}
	}()
	return tools.BuildChecked(tool, raw)
}

// cancelFrom cancels call i and every call after it.
func (b *batch) cancelFrom(i int) {
	for _, cancel := range b.cancels[i:] {
		cancel()
	}
}

// stopped reports whether call i may no longer start: it or the turn was
// cancelled. The turn is asked too because its cancel reaches the calls'
// own contexts one after another, so a call's may not show it yet.
func (b *batch) stopped(i int) bool {
	return b.turn.Err() != nil || b.ctxs[i].Err() != nil
}

// run decides, asks about and executes call i.
func (b *batch) run(i int) {
	it, ctx, name := b.items[i], b.ctxs[i], b.items[i].spec.Name
	if b.stopped(i) {
		b.finish(i, StateCancelled, notRun(name), nil)
		return
	}
	desc, err := describe(ctx, it.inv)
	if err != nil {
		b.finish(i, StateError, tools.Errorf("%s failed: %v", name, err), err)
		return
	}
	it.desc = &desc
	if desc.Refusal != "" {
		// Fail before asking: an approval of a call that cannot succeed
		// would show nothing to approve.
		b.finish(i, StateError, tools.Result{Content: desc.Refusal, IsError: true}, nil)
		return
	}

	hook, ok := b.preToolUse(i)
	if !ok {
		return
	}
	desc = *it.desc
	pc := NewPolicyCall(it.spec, it.inv, it.args, b.s.cfg.Mode, &desc)
	pc.Root, pc.Hook = b.s.cfg.Root, hook
	v := b.s.cfg.Policy.Explain(pc)
	switch v.Decision {
	case Deny:
		b.finish(i, StateError, tools.Errorf("%s was not run: the approval policy denies it (%s).", name, v.Reason), nil)
		return
	case Ask:
		if !b.approve(i, pc, v) {
			return
		}
	}

	if b.stopped(i) {
		b.finish(i, StateCancelled, notRun(name), nil)
		return
	}
	b.notify(i, CallUpdate{State: StateExecuting})
	res, err := execute(ctx, it.inv, tools.ExecOptions{Sandboxed: v.Sandboxed, Output: func(chunk string) {
		b.notify(i, CallUpdate{State: StateExecuting, Output: chunk})
	}, Terminal: func(id string) {
		b.notify(i, CallUpdate{State: StateExecuting, Terminal: id})
	}})
	switch {
	case ctx.Err() != nil:
		if res.Content == "" {
			res = tools.Result{Content: fmt.Sprintf("%s was cancelled while running.", name), IsError: true}
		}
		b.finish(i, StateCancelled, res, nil)
	case err != nil:
		b.finish(i, StateError, tools.Errorf("%s failed: %v", name, err), err)
	case res.IsError:
		b.finish(i, StateError, res, nil)
	default:
		res = b.postToolUse(i, res)
		b.finish(i, StateSuccess, res, nil)
	}
}

// approve asks the user about call i and reports whether it may run; when
// not, the call's result is recorded.
func (b *batch) approve(i int, pc PolicyCall, v Verdict) bool {
	it, ctx, name := b.items[i], b.ctxs[i], pc.Tool
	if b.s.cfg.Approver == nil {
		b.finish(i, StateError, tools.Errorf("%s was not run: it needs the user's approval and no client can give it.", name), nil)
		return false
	}
	b.notify(i, CallUpdate{State: StateAwaitingApproval})
	b.notification(i, name)
	args := b.calls[i].Args
	if it.rewritten {
		args = it.args
	}
	out, err := b.s.cfg.Approver.Approve(ctx, ApprovalRequest{
		CallID: b.calls[i].ID, Tool: name, Args: args, Description: *it.desc, Reason: v.Reason,
		Always: ScopeFor(pc).Label,
	})
	switch {
	case b.stopped(i) || (err == nil && out.Choice == ApprovalCancelled):
		b.cancelFrom(i)
		b.finish(i, StateCancelled, notRun(name), nil)
		return false
	case err != nil:
		b.finish(i, StateError, tools.Errorf("%s was not run: asking the user for approval failed.", name), fmt.Errorf("approval of %s: %w", name, err))
		return false
	}
	switch out.Choice {
	case AllowOnce:
		if out.Kept != nil {
			inv, err := tools.Narrow(ctx, it.inv, *out.Kept)
			if err != nil {
				b.finish(i, StateError, tools.Errorf("%s was not run: the user approved part of it, which cannot be applied: %v", name, err), nil)
				return false
			}
			it.inv = inv
		}
		return true
	case AllowAlways:
		if err := b.s.cfg.Policy.Remember(pc, Allow); err != nil {
			b.finish(i, StateError, tools.Errorf("%s failed: %v", name, err), err)
			return false
		}
		return true
	case RejectAlways:
		if err := b.s.cfg.Policy.Remember(pc, Deny); err != nil {
			b.finish(i, StateError, tools.Errorf("%s failed: %v", name, err), err)
			return false
		}
	}
	// reject_once, reject_always, and any answer not understood.
	msg := name + deniedSuffix
	if out.Feedback != "" {
		msg += feedbackPrefix + out.Feedback
	}
	b.finish(i, StateError, tools.Result{Content: msg, IsError: true}, nil)
	return false
}

func notRun(name string) tools.Result {
	return tools.Errorf("%s", name+cancelledSuffix)
}

// describe and execute turn a tool's panic into an error, so one broken
// tool fails its call instead of the daemon.
func describe(ctx context.Context, inv tools.Invocation) (d tools.Description, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic describing the call: %v", p)
		}
	}()
	return inv.Describe(ctx), nil
}

func execute(ctx context.Context, inv tools.Invocation, opts tools.ExecOptions) (res tools.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return inv.Execute(ctx, opts)
}
