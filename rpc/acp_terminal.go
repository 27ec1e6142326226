package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/tools"
)

// Commands in the ACP client's terminal (clientCapabilities.terminal):
// run_commands' foreground commands go through terminal/create and the
// requests after it (tools.ClientTerminals decides when), so the user
// watches them in the editor and the editor holds their processes.

const (
	methodTerminalCreate  = "terminal/create"
	methodTerminalOutput  = "terminal/output"
	methodTerminalWait    = "terminal/wait_for_exit"
	methodTerminalKill    = "terminal/kill"
	methodTerminalRelease = "terminal/release"
)

// terminalAnswerWait bounds the requests sent once a command is over or
// stopped (output, kill, release): a client that never answers them must
// not hold the call, nor the daemon's exit.
const terminalAnswerWait = 10 * time.Second

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

type terminalParams struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

type terminalExitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

func (e terminalExitStatus) exit() tools.TerminalExit {
	x := tools.TerminalExit{ExitCode: e.ExitCode}
	if e.Signal != nil {
		x.Signal = *e.Signal
	}
	return x
}

// acpTerminal is a session's tools.ClientTerminal.
type acpTerminal struct {
	s         *Server
	sessionID string
}

// clientTerminal is the session's terminal when the client offers one,
// else nil (commands run as the daemon's children).
func (s *Server) clientTerminal(sessionID string) tools.ClientTerminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dialect != DialectACP || !s.acp.terminal || sessionID == "" {
		return nil
	}
	return acpTerminal{s: s, sessionID: sessionID}
}

func (t acpTerminal) Create(ctx context.Context, spec tools.TerminalSpec) (string, error) {
	p := terminalCreateParams{SessionID: t.sessionID, Command: spec.Command, Args: spec.Args, CWD: spec.CWD,
		OutputByteLimit: spec.OutputByteLimit, Env: []terminalEnv{}}
	for _, kv := range spec.Env {
		name, value, _ := strings.Cut(kv, "=")
		p.Env = append(p.Env, terminalEnv{Name: name, Value: value})
	}
	var res struct {
		TerminalID string `json:"terminalId"`
	}
	if err := t.s.call(ctx, methodTerminalCreate, p, &res); err != nil {
		return "", clientErr(err)
	}
	if res.TerminalID == "" {
		return "", errorString("the editor gave no terminalId")
	}
	t.s.terms.add(t.sessionID, res.TerminalID)
	return res.TerminalID, nil
}

func (t acpTerminal) WaitForExit(ctx context.Context, id string) (tools.TerminalExit, error) {
	var res terminalExitStatus
	if err := t.s.call(ctx, methodTerminalWait, terminalParams{t.sessionID, id}, &res); err != nil {
		return tools.TerminalExit{}, clientErr(err)
	}
	return res.exit(), nil
}

func (t acpTerminal) Output(ctx context.Context, id string) (tools.TerminalOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, terminalAnswerWait)
	defer cancel()
	var res struct {
		Output     string              `json:"output"`
		Truncated  bool                `json:"truncated"`
		ExitStatus *terminalExitStatus `json:"exitStatus"`
	}
	if err := t.s.call(ctx, methodTerminalOutput, terminalParams{t.sessionID, id}, &res); err != nil {
		return tools.TerminalOutput{}, clientErr(err)
	}
	out := tools.TerminalOutput{Output: res.Output, Truncated: res.Truncated}
	if res.ExitStatus != nil {
		x := res.ExitStatus.exit()
		out.Exit = &x
	}
	return out, nil
}

func (t acpTerminal) Kill(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, terminalAnswerWait)
	defer cancel()
	return clientErr(t.s.call(ctx, methodTerminalKill, terminalParams{t.sessionID, id}, nil))
}

func (t acpTerminal) Release(ctx context.Context, id string) error {
	if !t.s.terms.remove(t.sessionID, id) {
		return nil // released at the daemon's exit already
	}
	ctx, cancel := context.WithTimeout(ctx, terminalAnswerWait)
	defer cancel()
	return clientErr(t.s.call(ctx, methodTerminalRelease, terminalParams{t.sessionID, id}, nil))
}

// openTerminals are the client terminals not released yet, so that the
// daemon's exit releases them (which also kills their commands).
type openTerminals struct {
	mu   sync.Mutex
	open map[terminalParams]bool
}

func (o *openTerminals) add(sessionID, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open == nil {
		o.open = map[terminalParams]bool{}
	}
	o.open[terminalParams{sessionID, id}] = true
}

// remove reports whether the terminal was still open.
func (o *openTerminals) remove(sessionID, id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := terminalParams{sessionID, id}
	was := o.open[k]
	delete(o.open, k)
	return was
}

// take removes and returns every terminal still open.
func (o *openTerminals) take() map[terminalParams]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	open := o.open
	o.open = nil
	return open
}

// releaseTerminals releases every terminal still open, while the
// connection is still up: at the daemon's exit, before turns are
// cancelled.
func (s *Server) releaseTerminals() {
	for p := range s.terms.take() {
		ctx, cancel := context.WithTimeout(context.Background(), terminalAnswerWait)
		if err := s.call(ctx, methodTerminalRelease, p, nil); err != nil {
			s.log.Debug("terminal not released", "terminal", p.TerminalID, "err", err)
		}
		cancel()
	}
}

// releaseAtInputEnd releases the terminals still open when the client's
// input ends (the editor closed the daemon's stdin, or went): no answer
// can come any more, but the client may still read, and the commands in
// its terminals would run on. Each release goes straight to the stream,
// ahead of the connection's own end (which closes the output, flushing
// it), and is not waited for; its id is one the connection never uses.
func (s *Server) releaseAtInputEnd() {
	if s.stream == nil {
		return // the input ended before the first message
	}
	n := 0
	for p := range s.terms.take() {
		n++
		params, err := json.Marshal(p)
		if err == nil {
			call := jsonrpc2.NewCall(jsonrpc2.NewStringID(fmt.Sprintf("cline-ls-release-%d", n)), methodTerminalRelease, params)
			_, err = s.stream.Write(context.Background(), call)
		}
		if err != nil {
			s.log.Debug("terminal not released", "terminal", p.TerminalID, "err", err)
		}
	}
}

// clientErr is err with the client's own reason (clientError), nil for nil.
func clientErr(err error) error {
	if err == nil {
		return nil
	}
	return errorString(delivery.ClientError(err))
}

type errorString string

func (e errorString) Error() string { return string(e) }
