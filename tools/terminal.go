package tools

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ClientTerminal is a terminal the client owns and runs commands in (ACP's
// terminal/* requests): the user watches the command there, and the
// client, not the daemon, holds its process. Each method is one request;
// the run_commands executor that uses them decides when to kill and makes
// sure every terminal it created is released.
type ClientTerminal interface {
	Create(ctx context.Context, spec TerminalSpec) (terminalID string, err error)
	WaitForExit(ctx context.Context, terminalID string) (TerminalExit, error)
	Output(ctx context.Context, terminalID string) (TerminalOutput, error)
	Kill(ctx context.Context, terminalID string) error
	Release(ctx context.Context, terminalID string) error
}

// TerminalSpec is what a client terminal is made to run.
type TerminalSpec struct {
	Command string
	Args    []string
	// CWD is the session's folder, absolute.
	CWD string
	// Env holds the variables to set (KEY=value), over the client's own
	// environment: the pager and prompt settings local commands get, and
	// every API key variable the daemon knows of set to empty, since the
	// client's environment may hold the same keys.
	Env []string
	// OutputByteLimit is how many bytes of output the client keeps (it
	// drops the start past it).
	OutputByteLimit int
}

// TerminalExit is how a terminal's command ended: ExitCode is nil when a
// signal (named in Signal) ended it.
type TerminalExit struct {
	ExitCode *int
	Signal   string
}

// TerminalOutput is what the client kept of a terminal's output;
// Truncated says its start was dropped.
type TerminalOutput struct {
	Output    string
	Truncated bool
	Exit      *TerminalExit
}

// ClientTerminals runs foreground commands in the client's terminal, t,
// instead of as the daemon's children; a command the policy allows only
// in the sandbox still runs locally, confined, since the client cannot
// confine it. Background commands stay the daemon's own.
func ClientTerminals(t ClientTerminal) WorkspaceOption {
	return func(c *workspaceConfig) { c.terminal = t }
}

// terminalStopWait bounds how long the daemon waits for the client to
// report that a command it was told to kill has ended: a client that
// never answers must not hold the call.
const terminalStopWait = 5 * time.Second

// executor runs one foreground command of a run_commands call and
// returns its output (cut to budget bytes) and status line; ok is false
// unless it exited with 0.
type executor interface {
	run(ctx context.Context, command string, budget int, opts ExecOptions) (out, status string, ok bool)
	// streams says the command's output is streamed to ExecOptions.Output.
	streams() bool
}

// executor is the one place that decides where a foreground command
// runs: in the client's terminal when the client offers one and the
// command need not be confined, else as the daemon's own child.
func (c *runCommandsCall) executor(opts ExecOptions) executor {
	if t := c.env.cfg.terminal; t != nil && !opts.Sandboxed {
		return terminalExecutor{c: c, t: t}
	}
	return localExecutor{c: c}
}

type localExecutor struct{ c *runCommandsCall }

func (localExecutor) streams() bool { return true }

func (l localExecutor) run(ctx context.Context, command string, budget int, opts ExecOptions) (string, string, bool) {
	stream := opts.Output
	if stream == nil {
		stream = func(string) {}
	}
	return l.c.runOne(ctx, command, budget, stream, opts.Sandboxed)
}

type terminalExecutor struct {
	c *runCommandsCall
	t ClientTerminal
}

func (terminalExecutor) streams() bool { return false }

// run runs command as "shell -c command" in a client terminal, shown in
// the call's card (ExecOptions.Terminal) rather than streamed: the client
// shows it live. A timeout or a cancel kills it at once; the terminal is
// released whatever happens.
func (x terminalExecutor) run(ctx context.Context, command string, budget int, opts ExecOptions) (string, string, bool) {
	e := x.c.env
	spec := TerminalSpec{Command: e.shellPath(), Args: []string{"-c", command}, CWD: e.files.Root(),
		Env: e.terminalEnv(), OutputByteLimit: max(budget, 1024)}
	id, err := x.t.Create(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return "(no output)\n", stoppedStatus("cancelled", 0), false
		}
		return "", fmt.Sprintf("[not run: the editor's terminal could not start it: %v]\n", err), false
	}
	bg := context.WithoutCancel(ctx)
	defer x.t.Release(bg, id)
	if opts.Terminal != nil {
		opts.Terminal(id)
	}
	start := time.Now()
	waitCtx, stopWaiting := context.WithCancel(bg)
	defer stopWaiting()
	type waited struct {
		exit TerminalExit
		err  error
	}
	exited := make(chan waited, 1)
	go func() {
		ex, err := x.t.WaitForExit(waitCtx, id)
		exited <- waited{ex, err}
	}()
	timer := time.NewTimer(x.c.timeout)
	defer timer.Stop()
	var stopped string
	var w waited
	select {
	case w = <-exited:
	case <-timer.C:
		stopped = "timeout"
	case <-ctx.Done():
		stopped = "cancelled"
	}
	if stopped != "" {
		x.t.Kill(bg, id)
		guard := time.NewTimer(terminalStopWait)
		select {
		case <-exited:
		case <-guard.C:
		}
		guard.Stop()
	}
	got, oerr := x.t.Output(bg, id)
	collected := newCmdOutput(budget, func(string) {})
	if got.Truncated {
		collected.write([]byte("[the start of the output was dropped by the editor's terminal]\n"))
	}
	collected.write([]byte(got.Output))
	out := commandText(collected)
	switch {
	case stopped != "":
		return out, stoppedStatus(stopped, x.c.timeout), false
	case w.err != nil:
		return out, fmt.Sprintf("[failed: the editor's terminal did not report how the command ended: %v]\n", w.err), false
	case oerr != nil:
		out = "(the editor's terminal did not give the output: " + oerr.Error() + ")\n"
	}
	code, signal := -1, w.exit.Signal
	if w.exit.ExitCode != nil {
		code = *w.exit.ExitCode
	} else if signal == "" {
		signal = "unknown"
	}
	return out, codeStatus(code, signal, time.Since(start), false), code == 0 && signal == ""
}

// commandText is a command's collected output as the model is shown it,
// wherever the command ran.
func commandText(collected *cmdOutput) string {
	out := collected.text()
	if out == "" {
		return "(no output)\n"
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// stoppedStatus is the status line of a command that was stopped,
// wherever it ran: for its timeout, or because the call was cancelled.
func stoppedStatus(stopped string, timeout time.Duration) string {
	if stopped == "timeout" {
		return fmt.Sprintf("[timed out after %s: the command and the processes it started were stopped; give a longer timeout if it needs more time]\n", timeout)
	}
	return "[cancelled: the command and the processes it started were stopped]\n"
}
