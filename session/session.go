package session

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/cline-ls/cline-ls/wire"
)

// StopReason is why a prompt turn ended (PROTOCOL.md §3).
type StopReason string

// Stop reasons.
const (
	StopEndTurn         StopReason = "end_turn"
	StopCancelled       StopReason = "cancelled"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopMaxTokens       StopReason = "max_tokens"
	StopRefusal         StopReason = "refusal"
)

// DefaultMaxTurns bounds the model requests of one prompt turn.
const DefaultMaxTurns = 50

// Config is what a session is made from.
type Config struct {
	ID   string
	CWD  string
	Mode string
	// Provider is the model; nil means none is configured and ProviderErr
	// says why (a prompt then fails with that message).
	Provider    provider.Provider
	ProviderErr error
	// Impls are the implementations of the built-in tools bound to this
	// session's Files (edit and workspace tools); the session adds its
	// own (plan, questions, submit, subagents) and builds its registry.
	Impls map[string]tools.BuildFunc
	// Background is the set run_commands starts background commands in
	// (the impls were made with tools.BackgroundCommands of it); the
	// session owns it and kills what runs there when it closes. Nil
	// means none.
	Background *tools.Background
	// LSP is what the client answers of its editor's language servers
	// (tools.Context.LSP; the impls were made with tools.LSPTools); nil
	// offers none of their tools.
	LSP      []string
	Files    tools.Files
	Policy   *Policy
	Approver Approver
	// Log, when set, persists the history: records are buffered as the
	// turn goes and written with one fsync when it ends, so a crash loses
	// at most the turn in flight.
	Log      *Log
	MaxTurns int
	Family   toolspec.Family
	// Subagent marks a child session: the search preset, no subagents.
	Subagent bool
	// Subagents are the configured subagent_<name> tools; each runs a
	// child session through Host.Spawn with its own instructions first.
	Subagents []tools.SubagentConfig
	// ACP selects the ACP dialect's shapes: edit results carry diff
	// content, usage_update is the schema's UsageUpdate, and compactions
	// are reported as message text.
	ACP bool
	// ContextWindow, when positive, overrides the model's context window
	// (provider.WindowFor); CompactAt is the share of it past which the
	// history is compacted before a request (DefaultCompactAt when 0).
	ContextWindow int
	CompactAt     float64
	// Title and Plan are a loaded session's, kept as they were.
	Title string
	Plan  []PlanEntry
	// Host is the session's surroundings (updates, questions, secrets,
	// subagents, checkpoints); nil is NopHost.
	Host Host
	// Hooks, when set, runs the user's hooks at the session's moments
	// (tool calls, prompts, the turn's end, compaction, the session's
	// start and end).
	Hooks Hooks
}

// Session is one agent conversation.
type Session struct {
	cfg       Config
	registry  *tools.Registry
	subagents []tools.Tool

	mu      sync.Mutex
	mode    string
	history []provider.Message
	plan    []PlanEntry
	title   string
	titled  bool                          // the first prompt has set the title (a loaded session has had its first prompt)
	running context.CancelFunc            // the turn in flight, if any
	calls   map[string]context.CancelFunc // the editor's calls in flight, by id
	// idle, made by WaitIdle while work runs, is closed when the last of
	// it ends (running nil, no calls): see workEndedLocked.
	idle   chan struct{}
	shell  string // the shell commands run in, looked up once
	instr  string // the instruction text of the turn in flight
	nextID int
	// toldNotSaved is set once the user was told the history fails to save.
	toldNotSaved bool
	// lastPrompt and edited are facts every compaction keeps, and with
	// them the ledger (ledger.go): files read, the last turn's failed
	// commands, open questions.
	lastPrompt string
	edited     []string
	read       []string
	failed     []failedCommand
	questions  []openQuestion

	tokens *tokens
	meter  *meter
	// rendered is the last request's tool definitions and system prompt
	// with what they were made from (see request).
	rendered *renderedRequest
	// Checkpoint bookkeeping for the turn in flight: its index, whether
	// the checkpoint before it was taken, the mutating calls running.
	turnIndex    int
	turnTitle    string
	checkpointed bool
	mutating     map[string]string // call id → title
	// resumed: the session was made with a loaded history (SessionStart's
	// source); hooksStarted: its SessionStart hooks ran.
	resumed      bool
	hooksStarted bool
	startContext []string // what SessionStart hooks said, until a prompt is sent

	// streamHeld is, per running call, the end of its streamed output
	// held back as the possible start of a key. Guarded by streamMu.
	streamMu   sync.Mutex
	streamHeld map[string]string
	// terminals are, per running call, the client terminals it embeds
	// (showTerminal); guarded by streamMu.
	terminals map[string][]wire.ToolCallContent
}

// New makes a session; history, when given, is a loaded conversation.
func New(cfg Config, history []provider.Message) (*Session, error) {
	if cfg.Mode == "" {
		cfg.Mode = "act"
	}
	if cfg.Subagent {
		cfg.Mode = "search"
	}
	if _, ok := tools.PresetFor(cfg.Mode); !ok {
		return nil, fmt.Errorf("unknown mode %q (modes: %s)", cfg.Mode, strings.Join(tools.Modes(), ", "))
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.Host == nil {
		cfg.Host = NopHost{}
	}
	s := &Session{cfg: cfg, mode: cfg.Mode, history: repairHistory(history), registry: tools.NewRegistry(), shell: tools.ShellFor(""),
		title: cfg.Title, plan: cfg.Plan, titled: cfg.Title != "" || len(history) > 0,
		tokens: newTokens(cfg), meter: &meter{}, resumed: len(history) > 0}
	impls := make(map[string]tools.BuildFunc, len(cfg.Impls)+6)
	for name, b := range cfg.Impls {
		impls[name] = b
	}
	for name, b := range s.ownTools() {
		impls[name] = b
	}
	if err := s.registry.RegisterBuiltins(impls); err != nil {
		return nil, err
	}
	for _, sp := range tools.SubagentSpecs(cfg.Subagents, tools.Context{Subagent: cfg.Subagent}, nil) {
		t, err := tools.NewTool(sp.Spec, s.subagentBuild(sp.Config))
		if err != nil {
			return nil, err
		}
		s.subagents = append(s.subagents, t)
	}
	return s, nil
}

// Registry returns the session's tools.
func (s *Session) Registry() *tools.Registry { return s.registry }

// ID returns the session id.
func (s *Session) ID() string { return s.cfg.ID }

// Mode returns the current mode.
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// History returns a copy of the conversation so far.
func (s *Session) History() []provider.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Message(nil), s.history...)
}

// SetMode switches the mode; it takes effect at the next model request,
// even within a running turn.
func (s *Session) SetMode(mode string) error {
	if _, ok := tools.PresetFor(mode); !ok {
		return fmt.Errorf("unknown mode %q (modes: %s)", mode, strings.Join(tools.Modes(), ", "))
	}
	if s.cfg.Subagent && mode != "search" {
		return errors.New("a subagent stays in search mode")
	}
	s.mu.Lock()
	s.mode = mode
	s.mu.Unlock()
	s.persist(Record{Type: RecordMode, Mode: mode})
	s.cfg.Host.Update(modeUpdate(mode))
	return nil
}

// Cancel stops the running turn, if any, and the editor's calls in
// flight: the model stream is closed,
// running commands are killed, pending approvals resolve as cancelled.
func (s *Session) Cancel() {
	s.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(s.calls)+1)
	if s.running != nil {
		cancels = append(cancels, s.running)
	}
	for _, c := range s.calls {
		cancels = append(cancels, c)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// WaitIdle waits until no turn and no editor call of the session runs
// (after Cancel, say).
func (s *Session) WaitIdle() {
	s.mu.Lock()
	if s.running == nil && len(s.calls) == 0 {
		s.mu.Unlock()
		return
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	<-idle
}

// workEndedLocked wakes WaitIdle's callers once no turn and no editor
// call runs. Every place that ends a turn or a call calls it, with s.mu
// held.
func (s *Session) workEndedLocked() {
	if s.running == nil && len(s.calls) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// beginRun makes cancel the running work's (a turn, a compaction), or
// returns ErrBusy while other work runs; endRun ends it.
func (s *Session) beginRun(cancel context.CancelFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return ErrBusy
	}
	s.running = cancel
	return nil
}

// endRun ends the work beginRun began.
func (s *Session) endRun() {
	s.mu.Lock()
	s.running = nil
	s.workEndedLocked()
	s.mu.Unlock()
}

// Running reports whether a turn is in flight.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running != nil
}

// Busy reports whether a turn or an editor call of the session runs.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running != nil || len(s.calls) > 0
}

// TurnModel is a Provider whose model may change between turns (the
// settings changed, the user chose another): BeginTurn takes the model of
// the turn starting, with no other turn of the session running, or says
// why there is none.
type TurnModel interface {
	BeginTurn() error
}

// ErrBusy is returned by Prompt while another turn of the session runs.
var ErrBusy = errors.New("a prompt is already running in this session; cancel it or wait for it to end")

// Prompt runs one user turn to its end.
func (s *Session) Prompt(ctx context.Context, text string) (StopReason, error) {
	return s.PromptWith(ctx, text, nil)
}

// PromptWith runs one user turn whose message also shows the model
// images.
func (s *Session) PromptWith(ctx context.Context, text string, images []provider.Image) (StopReason, error) {
	if s.cfg.Provider == nil {
		err := s.cfg.ProviderErr
		if err == nil {
			err = errors.New("no model is configured")
		}
		return "", err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	user, instr := s.startTurn(ctx, text, images)
	if err := s.beginRun(cancel); err != nil {
		return "", err
	}
	defer s.endRun()
	if tm, ok := s.cfg.Provider.(TurnModel); ok {
		if err := tm.BeginTurn(); err != nil {
			return "", err
		}
		s.tokens.follow(s.cfg.Provider, s.cfg.ContextWindow)
	}
	extra, refused := s.promptHooks(ctx, text)
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	if refused != "" {
		// The prompt never reaches the model or the history.
		s.cfg.Host.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[" + s.cfg.Host.Redact(refused) + "]\n"}})
		return StopEndTurn, nil
	}
	for _, c := range extra {
		user.Parts = append(user.Parts, provider.TextPart(hookContextPrefix+c))
	}
	s.mu.Lock()
	s.instr = instr
	s.lastPrompt = text
	s.meter.startTurn()
	s.turnIndex, s.turnTitle, s.checkpointed = 0, s.promptTitle(text), false
	for _, m := range s.history {
		if m.Role == provider.RoleUser {
			s.turnIndex++
		}
	}
	s.startLedgerTurnLocked()
	s.history = append(s.history, user)
	if !s.titled {
		s.titled = true
		s.title = s.promptTitle(text)
		s.mu.Unlock()
		s.persist(Record{Type: RecordTitle, Title: s.title})
	} else {
		s.mu.Unlock()
	}
	s.persist(Record{Type: RecordMessage, Message: &user})
	stop, err := s.turn(ctx)
	s.flush()
	if ctx.Err() != nil && err == nil || errors.Is(err, context.Canceled) {
		return StopCancelled, nil
	}
	return stop, err
}

// turn is the loop of docs/DESIGN.md §5: render the prompt, stream the reply,
// run its tool calls, feed the results back, until the turn ends.
func (s *Session) turn(ctx context.Context) (StopReason, error) {
	refused := 0    // context-length refusals of the request now being made
	stopRounds := 0 // times Stop hooks sent this turn on
	for req := 0; ; req++ {
		if req >= s.cfg.MaxTurns {
			return StopMaxTurnRequests, nil
		}
		if ctx.Err() != nil {
			return StopCancelled, nil
		}
		mode := s.Mode()
		preset, _ := tools.PresetFor(mode)
		tctx, enabled, _ := s.toolsFor(mode)
		request, parser, err := s.request(tctx, enabled)
		if err != nil {
			return "", err
		}
		compacted, err := s.fit(ctx, &request)
		if err != nil {
			return "", err
		}
		if compacted {
			// The system prompt holds the instructions as read afresh.
			if request, parser, err = s.request(tctx, enabled); err != nil {
				return "", err
			}
		}
		stream, err := s.cfg.Provider.Stream(ctx, request)
		if err != nil {
			return "", err
		}
		reply, calls, err := s.consume(stream, parser)
		s.appendHistory(reply.Message)
		s.reportUsage(provider.EstimateTokens(request), reply.Usage)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			// Too long for the model after all: compact and try again,
			// for as long as compacting makes the conversation smaller.
			if s.recoverContext(ctx, err, request, refused == 0) {
				refused++
				req--
				continue
			}
			return "", err
		}
		refused = 0
		if len(calls) == 0 {
			switch {
			case reply.Stop == provider.StopMaxTokens:
				return StopMaxTokens, nil
			case reply.Stop == provider.StopRefusal:
				return StopRefusal, nil
			case preset.RequireSubmit:
				// Yolo ends only at submit_and_exit: remind, go on.
				s.appendHistory(provider.UserText(continueReminder))
				continue
			}
			if s.stopHooks(ctx, &stopRounds) {
				continue
			}
			return StopEndTurn, nil
		}
		ends, halted := s.runCalls(ctx, mode, calls)
		if ctx.Err() != nil {
			return StopCancelled, nil
		}
		if halted != "" {
			// "continue": false ends the turn; Stop hooks are not asked.
			s.cfg.Host.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[the turn was ended by a hook: " + s.cfg.Host.Redact(halted) + "]\n"}})
			return StopEndTurn, nil
		}
		if ends {
			if s.stopHooks(ctx, &stopRounds) {
				continue
			}
			return StopEndTurn, nil
		}
	}
}

// request renders the model request for the mode. The tool definitions
// and the system prompt are made again only when what they are made from
// changed since the session's last request (the mode's context, the
// enabled tools and their specs, the turn's instructions): every round of
// a turn asks for the same, and building them was a fifth of what a
// session allocates.
func (s *Session) request(tctx tools.Context, enabled []tools.Tool) (provider.Request, *prompt.Parser, error) {
	specs := make([]tools.Spec, len(enabled))
	for i, t := range enabled {
		specs[i] = t.Spec()
	}
	s.mu.Lock()
	instr, r := s.instr, s.rendered
	s.mu.Unlock()
	if !r.madeFrom(tctx, specs, instr) {
		var err error
		if r, err = renderRequest(tctx, enabled, specs, instr); err != nil {
			return provider.Request{}, nil, err
		}
		s.mu.Lock()
		s.rendered = r
		s.mu.Unlock()
	}
	req := provider.Request{Messages: repairHistory(s.History()), System: r.system}
	var parser *prompt.Parser
	if tctx.NativeTools {
		req.Tools = r.defs
	} else {
		parser = prompt.NewParser(prompt.ToolParams(specs))
	}
	return req, parser, nil
}

// renderedRequest is what request made the tool definitions and the
// system prompt from, with them. Never changed once made: requests share
// defs and system.
type renderedRequest struct {
	tctx  tools.Context
	specs []tools.Spec
	instr string

	defs   []provider.ToolDef // on the native path
	system string
}

// renderRequest makes the tool definitions and the system prompt.
func renderRequest(tctx tools.Context, enabled []tools.Tool, specs []tools.Spec, instr string) (*renderedRequest, error) {
	r := &renderedRequest{tctx: tctx, specs: specs, instr: instr}
	names := make([]string, len(specs))
	for i, sp := range specs {
		names[i] = sp.Name
	}
	in := prompt.Input{Context: tctx, Tools: names, Instructions: instr}
	if tctx.NativeTools {
		r.defs = make([]provider.ToolDef, len(specs))
		for i, sp := range specs {
			r.defs[i] = provider.ToolDef{Name: sp.Name, Description: tools.Expand(sp.Description, tctx), Parameters: sp.Parameters}
		}
	} else {
		docs, err := tools.Render(toolspec.FormatXML, enabled, tctx)
		if err != nil {
			return nil, err
		}
		in.ToolDocs = string(docs)
	}
	r.system = prompt.SystemPrompt(in)
	return r, nil
}

// madeFrom reports whether r was made from these: the same context, the
// same instructions, and tools whose specs say the same (an MCP server's
// tool may come back with another description or schema).
func (r *renderedRequest) madeFrom(tctx tools.Context, specs []tools.Spec, instr string) bool {
	if r == nil || r.instr != instr || len(r.specs) != len(specs) || !reflect.DeepEqual(r.tctx, tctx) {
		return false
	}
	for i, sp := range specs {
		// Every field but ContextRequirements, a func, which decides
		// whether a tool is enabled: the list itself says that.
		old := r.specs[i]
		if old.ID != sp.ID || old.Name != sp.Name || old.DisplayName != sp.DisplayName || old.Description != sp.Description ||
			!bytes.Equal(old.Parameters, sp.Parameters) || old.Kind != sp.Kind || old.ReadOnly != sp.ReadOnly {
			return false
		}
	}
	return true
}

// consume streams one reply to the client and collects its tool calls.
// On the XML path the text is parsed as it arrives: prose goes to the
// client, calls are collected, and a call the stream ended inside is
// reported and never run.
func (s *Session) consume(stream provider.Stream, parser *prompt.Parser) (provider.Reply, []provider.ToolCall, error) {
	var reply provider.Reply
	var xmlCalls []provider.ToolCall
	var prose strings.Builder // the XML path's text outside calls
	emitText := func(t string) {
		if t != "" {
			s.cfg.Host.Update(s.agentText(t))
		}
	}
	handleParsed := func(evs []prompt.Event) {
		for _, ev := range evs {
			if ev.Call == nil {
				prose.WriteString(ev.Text)
				emitText(ev.Text)
				continue
			}
			if ev.Call.Partial {
				emitText("\n[an unfinished call of " + ev.Call.Name + " was not run]\n")
				continue
			}
			args := ev.Call.Args(s.schemaOf(ev.Call.Name))
			xmlCalls = append(xmlCalls, provider.ToolCall{ID: s.newCallID(), Name: ev.Call.Name, Args: args})
		}
	}
	var streamErr error
	for ev, err := range stream {
		if err != nil {
			streamErr = err
			break
		}
		reply.Add(ev)
		switch ev.Kind {
		case provider.EventText:
			if parser != nil {
				handleParsed(parser.Feed(ev.Text))
			} else {
				emitText(ev.Text)
			}
		case provider.EventThinking:
			if ev.Text != "" {
				s.cfg.Host.Update(s.thought(ev.Text))
			}
		}
	}
	if parser != nil {
		handleParsed(parser.Close())
		if streamErr != nil {
			xmlCalls = nil // never run calls of a reply that broke off
		}
		// Keep one history shape on both paths: prose as text, calls as
		// call parts (providers turn them back into XML for the model).
		msg := provider.Message{Role: provider.RoleAssistant}
		for _, p := range reply.Message.Parts {
			if p.Kind == provider.PartThinking {
				msg.Parts = append(msg.Parts, p)
			}
		}
		if t := strings.TrimSpace(prose.String()); t != "" {
			msg.Parts = append(msg.Parts, provider.TextPart(t))
		}
		for _, c := range xmlCalls {
			msg.Parts = append(msg.Parts, provider.CallPart(c))
		}
		reply.Message = msg
		return reply, xmlCalls, streamErr
	}
	if streamErr != nil {
		return reply, nil, streamErr
	}
	calls := reply.Calls()
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = s.newCallID()
		}
	}
	return reply, calls, nil
}

// extraTools returns the dynamic tools now: MCP tools and configured
// subagents.
func (s *Session) extraTools() []tools.Tool {
	out := s.subagents
	if extra := s.cfg.Host.Extra(); len(extra) > 0 {
		out = append(append([]tools.Tool(nil), out...), extra...)
	}
	return out
}

func (s *Session) schemaOf(name string) json.RawMessage {
	if t, ok := tools.Pick(s.extraTools(), name); ok {
		return t.Spec().Parameters
	}
	if t, ok := s.registry.Lookup(name, s.cfg.Family); ok {
		return t.Spec().Parameters
	}
	return nil
}

func (s *Session) newCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return "call_" + strconv.Itoa(s.nextID)
}

// toolsFor returns what a mode enables now: the tool context, every
// enabled tool, and the dynamic ones among them (MCP tools and configured
// subagents, which come and go).
func (s *Session) toolsFor(mode string) (tools.Context, []tools.Tool, []tools.Tool) {
	preset, _ := tools.PresetFor(mode)
	tctx := s.toolContext(mode)
	extra := s.extraTools()
	// The generic MCP calls need a server: the subagents among the
	// dynamic tools do not count.
	tctx.HasMCP = len(extra) > len(s.subagents)
	return tctx, append(s.registry.Enabled(preset, tctx), preset.Filter(tctx, extra)...), extra
}

// EnabledTools returns the tools a mode enables in this session as a model
// would receive them, with the context to render them in.
func (s *Session) EnabledTools(mode string) (tools.Context, []tools.Tool, error) {
	if _, ok := tools.PresetFor(mode); !ok {
		return tools.Context{}, nil, fmt.Errorf("unknown mode %q (modes: %s)", mode, strings.Join(tools.Modes(), ", "))
	}
	tctx, enabled, _ := s.toolsFor(mode)
	return tctx, enabled, nil
}

// schedule runs a batch of calls through the one tool path every call
// takes, the model's and the editor's alike: resolve the tool in the
// mode's set (a tool the mode lacks is refused, naming the mode), the
// validation, the mode's guard on what the call will run (ModeRefusal:
// plan mode runs only commands that change nothing), the policy with the session's rules, the approval, the
// execution, each state reported to the client. Results come back with
// their content redacted.
func (s *Session) schedule(ctx context.Context, mode string, calls []provider.ToolCall) []CallResult {
	_, enabled, extra := s.toolsFor(mode)
	batch := make([]Call, len(calls))
	for i, c := range calls {
		batch[i] = Call{ID: c.ID, Name: c.Name, Args: c.Args}
		s.cfg.Host.Update(s.toolCallStart(c))
	}
	sched := NewScheduler(SchedulerConfig{
		Mode: mode,
		Root: s.cfg.CWD,
		Tools: func(name string) (tools.Tool, bool) {
			return tools.Pick(enabled, name)
		},
		Exists: func(name string) bool {
			if _, ok := tools.Pick(extra, name); ok {
				return true
			}
			_, ok := s.registry.Lookup(name, s.cfg.Family)
			return ok
		},
		Policy:   s.cfg.Policy,
		Approver: s.cfg.Approver,
		Hooks:    s.cfg.Hooks,
		Observer: s.observe,
	})
	results := sched.Run(ctx, batch)
	for i := range results {
		r := &results[i]
		r.Result.Content = s.cfg.Host.Redact(r.Result.Content)
		if r.State == StateCancelled && r.Result.Content == "" {
			r.Result.Content = resultCancelled
		}
	}
	return results
}

// CallTool runs one call the editor makes in this session (cline/callTool)
// through the same path as the model's calls, in the session's current
// mode, with its rules and its files view. The call and its result are
// reported to the client like the model's but do not enter the
// conversation.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage) CallResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.nextID++
	id := "editor_" + strconv.Itoa(s.nextID)
	if s.calls == nil {
		s.calls = make(map[string]context.CancelFunc)
	}
	s.calls[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, id)
		s.workEndedLocked()
		s.mu.Unlock()
	}()
	return s.schedule(ctx, s.Mode(), []provider.ToolCall{{ID: id, Name: name, Args: args}})[0]
}

// runCalls schedules one reply's calls and appends their results to the
// history. It reports whether a result ends the turn, and a hook's reason
// when one ended it ("continue": false).
func (s *Session) runCalls(ctx context.Context, mode string, calls []provider.ToolCall) (ends bool, halted string) {
	results := s.schedule(ctx, mode, calls)
	msg := provider.Message{Role: provider.RoleTool}
	for _, r := range results {
		if r.StopTurn != "" && halted == "" {
			halted = r.StopTurn
		}
		tr := provider.ToolResult{CallID: r.Call.ID, Name: r.Call.Name, Content: r.Result.Content, IsError: r.Result.IsError || r.State != StateSuccess}
		tr.Content, tr.Images = s.resultImages(tr.Content, r.Result.Images)
		msg.Parts = append(msg.Parts, provider.ResultPart(tr))
		if r.Result.EndsTurn && r.State == StateSuccess {
			ends = true
		}
	}
	s.appendHistory(msg)
	return ends, halted
}

// resultImages is how the images a call returned enter the history: as
// they are for a model that takes images, as a note in the result's text
// for one that does not.
func (s *Session) resultImages(content string, images []tools.Image) (string, []provider.Image) {
	if len(images) == 0 {
		return content, nil
	}
	if p := s.cfg.Provider; p != nil && !provider.SeesImages(p.Name(), p.Model()) {
		what := "image not shown"
		if len(images) > 1 {
			what = fmt.Sprintf("%d images not shown", len(images))
		}
		return strings.TrimSuffix(content, "\n") + fmt.Sprintf("\n[%s: the model %s does not accept images]\n", what, p.Model()), nil
	}
	out := make([]provider.Image, len(images))
	for i, im := range images {
		out[i] = provider.Image{MIMEType: im.MIMEType, Data: base64.StdEncoding.EncodeToString(im.Data)}
	}
	return content, out
}

// mayChange reports whether a call of the named tool can change files:
// the tool's ReadOnly declaration decides.
func (s *Session) mayChange(name string) bool {
	if t, ok := s.registry.Lookup(name, s.cfg.Family); ok {
		return !t.Spec().ReadOnly
	}
	return true
}

// checkpoint calls Host.Checkpoint around the calls that may change
// files: once before the first of the turn, and after each.
func (s *Session) checkpoint(u CallUpdate) {
	if !s.mayChange(u.Call.Name) {
		return
	}
	s.mu.Lock()
	turn := s.turnIndex
	var before, after bool
	var title string
	switch u.State {
	case StateExecuting:
		if u.Output != "" {
			break
		}
		if !s.checkpointed {
			s.checkpointed, before, title = true, true, "Before: "+s.turnTitle
		}
		if s.mutating == nil {
			s.mutating = make(map[string]string)
		}
		// The arguments are decoded for a title only when the
		// description has none: an edit's are megabytes.
		var t string
		if u.Description != nil && u.Description.Title != "" {
			t = u.Description.Title
		} else {
			t = s.callTitle(u.Call.Name, u.Call.Args)
		}
		s.mutating[u.Call.ID] = t
	case StateSuccess, StateError, StateCancelled:
		title, after = s.mutating[u.Call.ID]
		delete(s.mutating, u.Call.ID)
	}
	s.mu.Unlock()
	// A label is stored by the checkpoint store, which redacts nothing.
	switch {
	case before:
		s.cfg.Host.Checkpoint(turn, "", s.cfg.Host.Redact(title))
	case after:
		s.cfg.Host.Checkpoint(turn, u.Call.ID, s.cfg.Host.Redact("After: "+title))
	}
}

// shortTitle is text as a title (tools.ShortTitle), redacted before it is
// cut: a key cut in two is no longer found by the redaction of what the
// title is shown or stored in.
func (s *Session) shortTitle(text string) string {
	return tools.ShortTitle(s.cfg.Host.Redact(text))
}

// hookContextPrefix starts the text a UserPromptSubmit hook adds to a
// prompt.
const hookContextPrefix = "[context from a hook]\n"

// promptTitle is a prompt as a title: the user's words (prompt.UserWords),
// not the files its mentions sent.
func (s *Session) promptTitle(text string) string {
	return s.shortTitle(prompt.UserWords(text))
}

// streamed is a call's next chunk of streamed output as it may be shown:
// redacted, after what was held back of the chunk before, and without an
// end that could start a key (Host.KeyStart), held for the next.
func (s *Session) streamed(callID, chunk string) string {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	text := s.cfg.Host.Redact(s.streamHeld[callID] + chunk)
	n := s.cfg.Host.KeyStart(text)
	if n > 0 {
		if s.streamHeld == nil {
			s.streamHeld = map[string]string{}
		}
		s.streamHeld[callID] = text[len(text)-n:]
	} else {
		delete(s.streamHeld, callID)
	}
	return text[:len(text)-n]
}

// showTerminal notes that call runs a command in the client's terminal id
// and returns the call's content: all its terminals so far, in order,
// since each update replaces the content the card shows.
func (s *Session) showTerminal(callID, id string) []wire.ToolCallContent {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.terminals == nil {
		s.terminals = map[string][]wire.ToolCallContent{}
	}
	s.terminals[callID] = append(s.terminals[callID], wire.TerminalItem{TerminalID: id})
	return slices.Clone(s.terminals[callID])
}

// observe turns scheduler state changes into tool_call_update messages.
func (s *Session) observe(u CallUpdate) {
	up := wire.ToolCallUpdate{ToolCallID: u.Call.ID}
	var notes []wire.ToolCallContent
	for _, n := range u.HookNotes {
		notes = append(notes, wire.Text(s.cfg.Host.Redact(n)))
	}
	if len(notes) > 0 && !u.State.Final() {
		up.Content = notes
		s.cfg.Host.Update(up)
		return
	}
	s.checkpoint(u)
	describe := func() {
		if d := u.Description; d != nil {
			up.Title, up.Kind, up.Locations = d.Title, wire.ToolKind(d.Kind), Locations(d.Locations)
		}
	}
	switch u.State {
	case StateExecuting:
		up.Status = wire.StatusInProgress
		describe()
		if u.Terminal != "" {
			up.Content = s.showTerminal(u.Call.ID, u.Terminal)
			break
		}
		if u.Output != "" {
			out := s.streamed(u.Call.ID, u.Output)
			if out == "" {
				return // all held back
			}
			up.Content = []wire.ToolCallContent{wire.Text(out)}
		}
	case StateSuccess, StateError, StateCancelled:
		// The result shows the whole output, redacted whole.
		s.streamMu.Lock()
		delete(s.streamHeld, u.Call.ID)
		terminals := s.terminals[u.Call.ID]
		delete(s.terminals, u.Call.ID)
		s.streamMu.Unlock()
		if u.State == StateSuccess && (u.Result == nil || !u.Result.IsError) {
			up.Status = wire.StatusCompleted
		} else {
			up.Status = wire.StatusFailed
		}
		s.noteCall(u.Tool, u.Description, u.Result)
		if u.Result != nil && len(u.Result.Edits) > 0 {
			s.noteEdits(u.Result.Edits)
			s.cfg.Host.Edited(u.Call.ID, u.Result.Edits)
		}
		if u.Result != nil {
			end := s.toolCallEnd(u.Call.ID, u.Result.Content, u.Result.IsError, u.Result.Edits)
			up.Content, up.RawOutput = end.Content, end.RawOutput
		}
		// The card keeps its terminals: an update's content replaces
		// the card's, and the client shows a terminal's output only while
		// it is embedded.
		if len(terminals) > 0 {
			up.Content = append(terminals, up.Content...)
		}
		if len(notes) > 0 {
			up.Content = append(notes, up.Content...)
		}
	case StateAwaitingApproval:
		describe()
	default:
		return
	}
	s.cfg.Host.Update(up)
}

func (s *Session) appendHistory(m provider.Message) {
	if len(m.Parts) == 0 {
		return
	}
	s.mu.Lock()
	s.history = append(s.history, m)
	s.mu.Unlock()
	s.persist(Record{Type: RecordMessage, Message: &m})
}

func (s *Session) persist(r Record) {
	if s.cfg.Log == nil {
		return
	}
	r.Time = time.Now()
	if err := s.cfg.Log.Append(r); err != nil {
		s.notSaved(err)
	}
}

func (s *Session) flush() {
	if s.cfg.Log == nil {
		return
	}
	if err := s.cfg.Log.Flush(); err != nil {
		s.notSaved(err)
	}
}

// Close stops the session's background commands and flushes and closes
// its history; an error is told to the user as well as returned.
func (s *Session) Close() error {
	s.sessionEnd()
	s.cfg.Background.Close()
	if s.cfg.Log == nil {
		return nil
	}
	err := s.cfg.Log.Close()
	if err != nil {
		s.notSaved(err)
	}
	return err
}

// notSaved tells the user that the history is not being saved: once per
// session, since every later record fails the same way.
func (s *Session) notSaved(err error) {
	s.mu.Lock()
	told := s.toldNotSaved
	s.toldNotSaved = true
	s.mu.Unlock()
	if told {
		return
	}
	msg := "this session is not being saved: " + err.Error()
	s.cfg.Host.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[" + msg + "]\n"}})
	s.cfg.Host.Warn(msg)
}

func (s *Session) toolContext(mode string) tools.Context {
	ctx := tools.Context{
		Mode: mode, Family: s.cfg.Family, CWD: s.cfg.CWD, OS: runtime.GOOS, Shell: s.shell,
		NativeTools: s.cfg.Provider != nil && s.cfg.Provider.NativeTools(), Subagent: s.cfg.Subagent,
	}
	if s.cfg.Provider != nil {
		ctx.ApplyPatch = tools.TrainedOnApplyPatch(s.cfg.Provider.Model())
	}
	ctx.Skills = s.cfg.Host.Skills()
	ctx.Background = s.cfg.Background.Len() > 0
	ctx.LSP = s.cfg.LSP
	return ctx
}

func kindOf(r *tools.Registry, name string) tools.Kind {
	if t, ok := r.Lookup(name, toolspec.FamilyGeneric); ok {
		return t.Spec().Kind
	}
	return tools.KindOther
}

// redactValue scrubs secrets from every string inside a decoded JSON
// value (a call's arguments as the client is shown them).
func (s *Session) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.cfg.Host.Redact(x)
	case []any:
		for i := range x {
			x[i] = s.redactValue(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = s.redactValue(x[k])
		}
	}
	return v
}

// MaxShownArg is how many bytes of one string argument the client is
// shown in a call's rawInput (ClientInput).
const MaxShownArg = 8 << 10

// ClientInput is a call's arguments as the client is shown them (ACP's
// rawInput, the tool call in an approval request): the decoded JSON, with
// every string longer than MaxShownArg cut to its first MaxShownArg bytes
// and a note of its length. A client shows rawInput but never runs the
// call, and what an edit changes reaches it as diff content, so an edit's
// megabyte of old and new text is not sent again here.
func ClientInput(args json.RawMessage) any {
	var v any
	if json.Unmarshal(args, &v) != nil || v == nil {
		return map[string]any{}
	}
	return clipStrings(v)
}

func clipStrings(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > MaxShownArg {
			cut := MaxShownArg
			for cut > 0 && !utf8.RuneStart(x[cut]) {
				cut--
			}
			return x[:cut] + fmt.Sprintf("… [%d bytes in all, the rest not shown]", len(x))
		}
	case []any:
		for i := range x {
			x[i] = clipStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = clipStrings(x[k])
		}
	}
	return v
}

// Locations is a tool's locations as a tool call shows them (never nil:
// a tool call's locations are a list).
func Locations(l []tools.Location) []wire.Location {
	out := make([]wire.Location, len(l))
	for i, x := range l {
		out[i] = wire.Location{Path: x.Path, Line: x.Line}
	}
	return out
}

// diffItems is ACP's diff content for a call's applied edits, with
// absolute paths as ACP asks (DiffContent).
func (s *Session) diffItems(edits []tools.FileEdit) []wire.ToolCallContent {
	files := make([]DiffFile, len(edits))
	for i, e := range edits {
		path := e.Path
		if s.cfg.Files != nil {
			if abs, err := s.cfg.Files.Resolve(e.Path); err == nil {
				path = abs
			}
		}
		files[i] = DiffFile{Path: path, OldText: e.OldText, NewText: e.NewText, Existed: true}
	}
	return DiffContent(files)
}

// DiffFile is one file's change, for DiffContent.
type DiffFile struct {
	Path             string
	OldText, NewText string
	// Existed is false for a file the change creates.
	Existed bool
}

// DiffContent is ACP's diff content of one call's changes: each file's
// changed regions with context (diff.Regions), or the whole text of a
// file the change creates (its oldText null), within diff.MaxRegionBytes
// for the call. What the bound leaves out is said in a text item, since a
// diff item cut short would show a change that was not made. The
// approval's preview and the applied edits' update both use it.
func DiffContent(files []DiffFile) []wire.ToolCallContent {
	var items []wire.ToolCallContent
	budget := diff.MaxRegionBytes
	for _, f := range files {
		if !f.Existed {
			if len(f.NewText) > budget {
				items = append(items, wire.Text(fmt.Sprintf("%s: new file of %d bytes, too large to show as a diff.", f.Path, len(f.NewText))))
				budget = 0
				continue
			}
			budget -= len(f.NewText)
			items = append(items, wire.Diff(f.Path, "", f.NewText, false))
			continue
		}
		parts, left, used := diff.Regions(f.OldText, f.NewText, diff.RegionContext, budget)
		budget -= used
		for _, p := range parts {
			items = append(items, wire.Diff(f.Path, p.Old, p.New, true))
		}
		if left > 0 {
			budget = 0 // later files would show out of order
			items = append(items, wire.Text(fmt.Sprintf("%s: %d changed regions not shown as a diff (past %d KiB for the call).", f.Path, left, diff.MaxRegionBytes>>10)))
		}
	}
	return items
}

// callTitle is a first title for a call, before it is validated and can
// describe itself: the tool's display name and its main argument ("Edit
// main.go", "Run commands go test ./..."). The invocation's own title
// follows in the tool_call_update.
func (s *Session) callTitle(name string, args json.RawMessage) string {
	title := name
	if t, ok := s.registry.Lookup(name, s.cfg.Family); ok && t.Spec().DisplayName != "" {
		title = t.Spec().DisplayName
	}
	var a struct {
		Path     string   `json:"path"`
		Commands []string `json:"commands"`
		Queries  []string `json:"queries"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
		Requests []struct {
			URL string `json:"url"`
		} `json:"requests"`
		Skill  string `json:"skill"`
		Prompt string `json:"prompt"`
		ID     string `json:"id"` // a background command's
	}
	json.Unmarshal(args, &a)
	var arg string
	switch {
	case a.Path != "":
		arg = a.Path
	case len(a.Files) > 0:
		arg = a.Files[0].Path
		if len(a.Files) > 1 {
			arg += fmt.Sprintf(" (+%d)", len(a.Files)-1)
		}
	case len(a.Commands) > 0:
		arg = a.Commands[0]
	case len(a.Queries) > 0:
		arg = a.Queries[0]
	case len(a.Requests) > 0:
		arg = a.Requests[0].URL
	case a.Skill != "":
		arg = a.Skill
	case a.Prompt != "":
		arg = s.shortTitle(a.Prompt)
	case a.ID != "":
		arg = a.ID
	}
	if arg != "" {
		title += " " + s.shortTitle(arg)
	}
	return title
}
