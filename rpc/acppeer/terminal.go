package acppeer

import (
	"context"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/cline-ls/cline-ls/tools"
)

// Commands in the ACP client's terminal (clientCapabilities.terminal):
// run_commands' foreground commands go through terminal/create and the
// requests after it (tools.ClientTerminals decides when), so the user
// watches them in the editor and the editor holds their processes.

const (
	MethodTerminalCreate  = "terminal/create"
	MethodTerminalOutput  = "terminal/output"
	MethodTerminalWait    = "terminal/wait_for_exit"
	MethodTerminalKill    = "terminal/kill"
	MethodTerminalRelease = "terminal/release"
)

// AnswerWait bounds the requests sent once a command is over or stopped
// (output, kill, release): a client that never answers them must not
// hold the call, nor the daemon's exit.
const AnswerWait = 10 * time.Second

type terminalCreateParams struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args"`
	Env             []terminalEnv `json:"env"`
	CWD             string        `json:"cwd"`
	OutputByteLimit int           `json:"outputByteLimit"`
}

type terminalEnv struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TerminalParams name one terminal of a session: the params of
// terminal/output, wait_for_exit, kill and release.
type TerminalParams struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

// The client's answers, in the SDK's shapes (generated from the ACP
// schema).
type (
	createResult = acp.CreateTerminalResponse
	waitResult   = acp.WaitForTerminalExitResponse
	outputResult = acp.TerminalOutputResponse
)

func exitOf(code *int, signal *string) tools.TerminalExit {
	x := tools.TerminalExit{ExitCode: code}
	if signal != nil {
		x.Signal = *signal
	}
	return x
}

// terminal is a session's tools.ClientTerminal.
type terminal struct {
	p         *Peer
	sessionID string
}

// Terminal is the session's terminal when the client offers one, else
// nil (commands run as the daemon's children).
func (p *Peer) Terminal(sessionID string) tools.ClientTerminal {
	if !p.caps.Terminal || sessionID == "" {
		return nil
	}
	return terminal{p: p, sessionID: sessionID}
}

func (t terminal) Create(ctx context.Context, spec tools.TerminalSpec) (string, error) {
	p := terminalCreateParams{SessionID: t.sessionID, Command: spec.Command, Args: spec.Args, CWD: spec.CWD,
		OutputByteLimit: spec.OutputByteLimit, Env: []terminalEnv{}}
	for _, kv := range spec.Env {
		name, value, _ := strings.Cut(kv, "=")
		p.Env = append(p.Env, terminalEnv{Name: name, Value: value})
	}
	var res createResult
	if err := t.p.c.Call(ctx, MethodTerminalCreate, p, &res); err != nil {
		return "", t.p.clientErr(err)
	}
	if res.TerminalId == "" {
		return "", errorString("the editor gave no terminalId")
	}
	t.p.terms.add(t.sessionID, res.TerminalId)
	return res.TerminalId, nil
}

func (t terminal) WaitForExit(ctx context.Context, id string) (tools.TerminalExit, error) {
	var res waitResult
	if err := t.p.c.Call(ctx, MethodTerminalWait, TerminalParams{t.sessionID, id}, &res); err != nil {
		return tools.TerminalExit{}, t.p.clientErr(err)
	}
	return exitOf(res.ExitCode, res.Signal), nil
}

func (t terminal) Output(ctx context.Context, id string) (tools.TerminalOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, AnswerWait)
	defer cancel()
	var res outputResult
	if err := t.p.c.Call(ctx, MethodTerminalOutput, TerminalParams{t.sessionID, id}, &res); err != nil {
		return tools.TerminalOutput{}, t.p.clientErr(err)
	}
	out := tools.TerminalOutput{Output: res.Output, Truncated: res.Truncated}
	if res.ExitStatus != nil {
		x := exitOf(res.ExitStatus.ExitCode, res.ExitStatus.Signal)
		out.Exit = &x
	}
	return out, nil
}

func (t terminal) Kill(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, AnswerWait)
	defer cancel()
	return t.p.clientErr(t.p.c.Call(ctx, MethodTerminalKill, TerminalParams{t.sessionID, id}, nil))
}

func (t terminal) Release(ctx context.Context, id string) error {
	if !t.p.terms.remove(t.sessionID, id) {
		return nil // released at the daemon's exit already
	}
	ctx, cancel := context.WithTimeout(ctx, AnswerWait)
	defer cancel()
	return t.p.clientErr(t.p.c.Call(ctx, MethodTerminalRelease, TerminalParams{t.sessionID, id}, nil))
}

// ReleaseTerminals releases every terminal still open, each request
// bounded by AnswerWait, while the connection is still up: at the
// daemon's exit, before turns are cancelled. Releasing one also kills
// its command.
func (p *Peer) ReleaseTerminals(ctx context.Context) {
	for tp := range p.terms.take() {
		cctx, cancel := context.WithTimeout(ctx, AnswerWait)
		if err := p.c.Call(cctx, MethodTerminalRelease, tp, nil); err != nil {
			p.o.Log.Debug("terminal not released", "terminal", tp.TerminalID, "err", err)
		}
		cancel()
	}
}

// AbandonTerminals releases every terminal still open through write,
// which sends without waiting for an answer: when the client's input has
// ended no answer can come, but the client may still read, and the
// commands in its terminals would run on.
func (p *Peer) AbandonTerminals(write func(method string, params any) error) {
	for tp := range p.terms.take() {
		if err := write(MethodTerminalRelease, tp); err != nil {
			p.o.Log.Debug("terminal not released", "terminal", tp.TerminalID, "err", err)
		}
	}
}

// openTerminals are the client terminals not released yet, so that the
// daemon's exit releases them.
type openTerminals struct {
	mu   sync.Mutex
	open map[TerminalParams]bool
}

func (o *openTerminals) add(sessionID, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open == nil {
		o.open = map[TerminalParams]bool{}
	}
	o.open[TerminalParams{sessionID, id}] = true
}

// remove reports whether the terminal was still open.
func (o *openTerminals) remove(sessionID, id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := TerminalParams{sessionID, id}
	was := o.open[k]
	delete(o.open, k)
	return was
}

// take removes and returns every terminal still open.
func (o *openTerminals) take() map[TerminalParams]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	open := o.open
	o.open = nil
	return open
}

// clientErr is err with the client's own reason, nil for nil.
func (p *Peer) clientErr(err error) error {
	if err == nil {
		return nil
	}
	return errorString(p.o.Reason(err))
}

type errorString string

func (e errorString) Error() string { return string(e) }
