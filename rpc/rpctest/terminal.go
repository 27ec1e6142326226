package rpctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
)

// terminals are the ACPClient's terminals: each terminal/create runs its
// command for real, as the client's child (its own process group), and
// keeps its output within outputByteLimit by dropping the start, as ACP
// asks of a client.
type terminals struct {
	mu    sync.Mutex
	next  int
	byID  map[string]*terminal
	log   []TerminalRequest
	specs []TerminalSpec
	shown []TerminalShown
}

// TerminalShown is a terminal embedded in a tool_call_update's content,
// with the update's status.
type TerminalShown struct {
	TerminalID string
	Status     string
}

// Shown returns the terminals the daemon's tool call updates embedded.
func (c *ACPClient) Shown() []TerminalShown {
	c.terms.mu.Lock()
	defer c.terms.mu.Unlock()
	return slices.Clone(c.terms.shown)
}

func (ts *terminals) noteShown(content []json.RawMessage, status string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, raw := range content {
		var item struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}
		if json.Unmarshal(raw, &item) == nil && item.Type == "terminal" {
			ts.shown = append(ts.shown, TerminalShown{TerminalID: item.TerminalID, Status: status})
		}
	}
}

// TerminalRequest is one terminal/* request the client got.
type TerminalRequest struct {
	Method     string
	TerminalID string
}

// TerminalSpec is the params of a terminal/create the client got.
type TerminalSpec struct {
	SessionID string   `json:"sessionId"`
	Command   string   `json:"command"`
	Args      []string `json:"args"`
	Env       []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	CWD             string `json:"cwd"`
	OutputByteLimit int    `json:"outputByteLimit"`
}

type terminal struct {
	cmd   *exec.Cmd
	limit int
	mu    sync.Mutex
	out   bytes.Buffer
	done  chan struct{}
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out.Write(p)
	return len(p), nil
}

func newTerminals() *terminals { return &terminals{byID: map[string]*terminal{}} }

// Terminals returns the terminal/* requests the client got, in order.
func (c *ACPClient) Terminals() []TerminalRequest {
	c.terms.mu.Lock()
	defer c.terms.mu.Unlock()
	return slices.Clone(c.terms.log)
}

// TerminalSpecs returns the params of the terminal/create requests.
func (c *ACPClient) TerminalSpecs() []TerminalSpec {
	c.terms.mu.Lock()
	defer c.terms.mu.Unlock()
	return slices.Clone(c.terms.specs)
}

// TerminalPID is the process id of a terminal's command.
func (c *ACPClient) TerminalPID(id string) int {
	c.terms.mu.Lock()
	defer c.terms.mu.Unlock()
	if t := c.terms.byID[id]; t != nil {
		return t.cmd.Process.Pid
	}
	return 0
}

func (ts *terminals) serve(method string, params json.RawMessage) (any, error) {
	if method == "terminal/create" {
		return ts.create(params)
	}
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	json.Unmarshal(params, &p)
	ts.mu.Lock()
	t := ts.byID[p.TerminalID]
	ts.log = append(ts.log, TerminalRequest{Method: method, TerminalID: p.TerminalID})
	ts.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("no terminal %q", p.TerminalID)
	}
	switch method {
	case "terminal/wait_for_exit":
		<-t.done
		return t.exitStatus(), nil
	case "terminal/output":
		t.mu.Lock()
		out := t.out.String()
		t.mu.Unlock()
		truncated := t.limit > 0 && len(out) > t.limit
		if truncated {
			out = out[len(out)-t.limit:]
		}
		res := map[string]any{"output": out, "truncated": truncated}
		select {
		case <-t.done:
			res["exitStatus"] = t.exitStatus()
		default:
		}
		return res, nil
	case "terminal/kill":
		t.kill()
		return map[string]any{}, nil
	case "terminal/release":
		t.kill()
		ts.mu.Lock()
		delete(ts.byID, p.TerminalID)
		ts.mu.Unlock()
		return map[string]any{}, nil
	}
	return nil, errors.New("method not found: " + method)
}

func (ts *terminals) create(params json.RawMessage) (any, error) {
	var spec TerminalSpec
	if err := json.Unmarshal(params, &spec); err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.CWD
	cmd.Env = os.Environ()
	for _, e := range spec.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t := &terminal{cmd: cmd, limit: spec.OutputByteLimit, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t, t
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		cmd.Wait()
		close(t.done)
	}()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.next++
	id := fmt.Sprintf("term-%d", ts.next)
	ts.byID[id] = t
	ts.specs = append(ts.specs, spec)
	ts.log = append(ts.log, TerminalRequest{Method: "terminal/create", TerminalID: id})
	return map[string]any{"terminalId": id}, nil
}

func (t *terminal) kill() {
	select {
	case <-t.done:
		return
	default:
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
}

func (t *terminal) exitStatus() map[string]any {
	st := t.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return map[string]any{"exitCode": nil, "signal": ws.Signal().String()}
	}
	return map[string]any{"exitCode": st.ExitCode(), "signal": nil}
}
