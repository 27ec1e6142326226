package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/tools"
)

// MaxOutput bounds what is kept of each of a hook's streams; the rest is
// read and dropped, with a note saying how much.
const MaxOutput = 64 << 10

// waitDelay bounds how long a hook's pipes are drained once it has
// exited or been killed: a process that escaped its group and holds them
// open cannot hold the call.
const waitDelay = 2 * time.Second

// Source is one place hooks are configured: "user" (the config file),
// "client" (the editor's settings) or "project" (the folder's
// .cline/settings.json).
type Source struct {
	Name   string
	Config Config
	// Trusted, when set, is asked before the first of the source's hooks
	// runs and then at every run until it says yes; mayAsk false means
	// the user must not be asked now (the session is ending). commands
	// are what the source would run, for the question. Nil means the
	// source is trusted.
	Trusted func(ctx context.Context, commands []string, mayAsk bool) bool
}

// Options are what stays fixed for a session's hooks.
type Options struct {
	SessionID      string
	TranscriptPath string
	// CWD is the workspace folder: the hooks' working directory and
	// CLAUDE_PROJECT_DIR / CLINE_LS_PROJECT_DIR.
	CWD string
	// Hidden names the variables kept from the hooks' environment besides
	// the keys internal/proc always keeps out.
	Hidden []string
	// Redact scrubs secrets from what a hook printed before it is shown,
	// logged or given to the model.
	Redact func(string) string
	Log    *slog.Logger
	// Shell runs each command ("shell -c command"); empty means /bin/sh.
	Shell string
	// Confine, when set, rewrites each hook's command, not yet started,
	// to run confined (the sandbox's Confine, with the session's policy:
	// the setting sandbox.hooks); release runs once the hook and all it
	// started are gone. A hook that cannot be confined is not run.
	Confine func(cmd *exec.Cmd) (release func(), err error)
}

// Runner runs a session's hooks. It is safe for concurrent use.
type Runner struct {
	opts    Options
	sources []compiledSource
}

type compiledSource struct {
	Source
	groups map[Event][]compiledGroup
}

type compiledGroup struct {
	re    *regexp.Regexp // nil matches all
	hooks []Command
}

// New compiles the sources' hooks; an invalid configuration is an error
// naming the source and the field.
func New(opts Options, sources ...Source) (*Runner, error) {
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Shell == "" {
		opts.Shell = "/bin/sh"
	}
	r := &Runner{opts: opts}
	for _, src := range sources {
		if len(src.Config) == 0 {
			continue
		}
		if err := src.Config.Validate("hooks."); err != nil {
			return nil, fmt.Errorf("%s hooks: %v", src.Name, err)
		}
		cs := compiledSource{Source: src, groups: map[Event][]compiledGroup{}}
		for ev, groups := range src.Config {
			for _, g := range groups {
				re, _ := compileMatcher(g.Matcher)
				cs.groups[Event(ev)] = append(cs.groups[Event(ev)], compiledGroup{re: re, hooks: g.Hooks})
			}
		}
		r.sources = append(r.sources, cs)
	}
	return r, nil
}

// Input is what a moment tells its hooks, beyond what every hook gets
// (session_id, transcript_path, cwd, hook_event_name).
type Input struct {
	Event Event
	// Tool is the resolved tool name of a tool event; Args its checked
	// arguments; Commands, for a call that runs commands, what it runs.
	Tool     string
	Args     json.RawMessage
	Commands []string
	// Result is what the call returned, for PostToolUse's tool_response.
	Result string
	// ResultIsError says the call failed.
	ResultIsError bool
	// Prompt is UserPromptSubmit's prompt.
	Prompt string
	// StopHookActive tells a Stop hook that the turn goes on because a
	// Stop hook said so before.
	StopHookActive bool
	// Trigger is PreCompact's (manual, auto), Source SessionStart's
	// (startup, resume), Reason SessionEnd's, Message Notification's.
	Trigger, Source, Reason, Message string
}

// matchKey is what a matcher is matched against for the event.
func (in Input) matchKeys() []string {
	switch in.Event {
	case PreToolUse, PostToolUse:
		return Names(in.Tool, in.Args)
	case PreCompact:
		return []string{in.Trigger}
	case SessionStart:
		return []string{in.Source}
	case SessionEnd:
		return []string{in.Reason}
	}
	return nil
}

// hookInput is the JSON object a hook reads on its standard input,
// Claude Code's hook input. Every hook gets the four plain members; a
// pointer is an event's own member, left out for the other events and
// sent even when empty for its own (stop_hook_active false,
// custom_instructions "", tool_input null), as Claude Code sends them.
// Members are declared in sorted order, the order of the map this type
// replaced, so that a hook reads the same bytes.
type hookInput struct {
	ClineToolName      *string          `json:"cline_tool_name,omitempty"`
	CustomInstructions *string          `json:"custom_instructions,omitempty"`
	CWD                string           `json:"cwd"`
	HookEventName      string           `json:"hook_event_name"`
	Message            *string          `json:"message,omitempty"`
	Prompt             *string          `json:"prompt,omitempty"`
	Reason             *string          `json:"reason,omitempty"`
	SessionID          string           `json:"session_id"`
	Source             *string          `json:"source,omitempty"`
	StopHookActive     *bool            `json:"stop_hook_active,omitempty"`
	ToolInput          *json.RawMessage `json:"tool_input,omitempty"`
	ToolName           *string          `json:"tool_name,omitempty"`
	ToolResponse       *toolResponse    `json:"tool_response,omitempty"`
	TranscriptPath     string           `json:"transcript_path"`
	Trigger            *string          `json:"trigger,omitempty"`
}

// payload is the JSON object a hook reads on its standard input, and the
// tool_input it was sent (to map an updatedInput back to our names).
func (r *Runner) payload(in Input) ([]byte, json.RawMessage) {
	p := hookInput{
		SessionID:      r.opts.SessionID,
		TranscriptPath: r.opts.TranscriptPath,
		CWD:            r.opts.CWD,
		HookEventName:  string(in.Event),
	}
	var sent json.RawMessage
	switch in.Event {
	case PreToolUse, PostToolUse:
		names := Names(in.Tool, in.Args)
		p.ToolName = new(names[0])
		p.ClineToolName = new(in.Tool)
		sent = ToolInput(in.Tool, in.Args, in.Commands, r.opts.CWD)
		p.ToolInput = &sent
		if in.Event == PostToolUse {
			p.ToolResponse = responseOf(in, sent)
		}
	case UserPromptSubmit:
		p.Prompt = new(in.Prompt)
	case Stop, SubagentStop:
		p.StopHookActive = new(in.StopHookActive)
	case PreCompact:
		p.Trigger = new(in.Trigger)
		p.CustomInstructions = new("")
	case SessionStart:
		p.Source = new(in.Source)
	case SessionEnd:
		p.Reason = new(in.Reason)
	case Notification:
		p.Message = new(in.Message)
	}
	b, _ := json.Marshal(p)
	return b, sent
}

// selected is one hook chosen to run.
type selected struct {
	src *compiledSource
	cmd Command
}

// Run runs the hooks in that match the moment, all at once, and returns
// what they said together. A source not trusted runs none of its hooks.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	if r == nil {
		return Outcome{}
	}
	keys := in.matchKeys()
	var chosen []selected
	for i := range r.sources {
		s := &r.sources[i]
		var mine []selected
		for _, g := range s.groups[in.Event] {
			if !matches(g.re, keys) {
				continue
			}
			for _, h := range g.hooks {
				if !containsCmd(chosen, h) && !containsCmd(mine, h) {
					mine = append(mine, selected{src: s, cmd: h})
				}
			}
		}
		if len(mine) == 0 {
			continue
		}
		if s.Trusted != nil && !s.Trusted(ctx, s.Config.Commands(), in.Event != SessionEnd) {
			r.opts.Log.Info("hooks not run: their folder is not trusted", "source", s.Name, "event", in.Event)
			continue
		}
		chosen = append(chosen, mine...)
	}
	if len(chosen) == 0 {
		return Outcome{}
	}
	stdin, sent := r.payload(in)
	results := make([]result, len(chosen))
	var wg sync.WaitGroup
	for i, c := range chosen {
		wg.Go(func() { results[i] = r.runOne(ctx, c.cmd, stdin) })
	}
	wg.Wait()
	var out Outcome
	for i, res := range results {
		out.add(in.Event, chosen[i].cmd, res, r.opts.Redact)
	}
	if out.UpdatedInput != nil {
		out.UpdatedInput = OurInput(in.Tool, sent, out.UpdatedInput)
	}
	for _, n := range out.Notes {
		r.opts.Log.Info("hook", "event", in.Event, "outcome", n)
	}
	return out
}

func matches(re *regexp.Regexp, keys []string) bool {
	if re == nil || keys == nil {
		return true
	}
	for _, k := range keys {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

func containsCmd(list []selected, c Command) bool {
	for _, s := range list {
		if s.cmd.Command == c.Command {
			return true
		}
	}
	return false
}

// result is how one hook ended.
type result struct {
	code           int // -1 when it did not exit by itself
	stdout, stderr string
	timedOut       bool
	cancelled      bool
	err            error // it could not start
}

// runOne runs one hook in the workspace folder, in a process group of its
// own, with no API keys in its environment; a timeout or a cancel kills
// it and everything it started.
func (r *Runner) runOne(ctx context.Context, h Command, stdin []byte) result {
	cmd := exec.Command(r.opts.Shell, "-c", h.Command)
	cmd.Dir = r.opts.CWD
	cmd.Env = proc.Env(nil, r.opts.Hidden, []string{
		"CLAUDE_PROJECT_DIR=" + r.opts.CWD,
		"CLINE_LS_PROJECT_DIR=" + r.opts.CWD,
	})
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &capped{max: MaxOutput}, &capped{max: MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	if r.opts.Confine != nil {
		release, err := r.opts.Confine(cmd)
		if err != nil {
			return result{code: -1, err: fmt.Errorf("not confined, so not run: %w", err)}
		}
		defer release()
	}
	group, err := proc.Start(cmd, true, nil)
	if err != nil {
		return result{code: -1, err: err}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(h.timeout())
	defer timer.Stop()
	res := result{code: -1}
	select {
	case <-exited:
	case <-timer.C:
		res.timedOut = true
		group.Kill()
		<-exited
	case <-ctx.Done():
		res.cancelled = true
		group.Kill()
		<-exited
	}
	group.Cleanup()
	if !res.timedOut && !res.cancelled {
		res.code = cmd.ProcessState.ExitCode()
	}
	res.stdout, res.stderr = stdout.text(), stderr.text()
	return res
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (c *capped) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(string(c.buf), "")
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[%d more bytes not kept]", c.dropped)
	}
	return s
}

// toolResponse is PostToolUse's tool_response: the result's text and
// whether it failed, under the names Claude Code's scripts read for the
// tool's equivalent (stdout for Bash, filePath for an edit or a write).
// Like hookInput, its members are sorted and a pointer is sent only for
// the tools that have it.
type toolResponse struct {
	Content     string  `json:"content"`
	FilePath    *string `json:"filePath,omitempty"`
	Interrupted *bool   `json:"interrupted,omitempty"`
	IsError     bool    `json:"is_error"`
	Stderr      *string `json:"stderr,omitempty"`
	Stdout      *string `json:"stdout,omitempty"`
	Success     bool    `json:"success"`
}

// responseOf is in's tool_response, for the tool_input sent with it.
func responseOf(in Input, sent json.RawMessage) *toolResponse {
	r := &toolResponse{Content: in.Result, Success: !in.ResultIsError, IsError: in.ResultIsError}
	if in.Tool == tools.NameRunCommands {
		r.Stdout, r.Stderr, r.Interrupted = new(in.Result), new(""), new(false)
	}
	// By its exact key, as a struct's case-blind match would not read it.
	var ti map[string]json.RawMessage
	if json.Unmarshal(sent, &ti) == nil {
		var p *string
		if json.Unmarshal(ti["file_path"], &p) == nil {
			r.FilePath = p
		}
	}
	return r
}
