package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/internal/sandbox"
)

const (
	// cmdMaxTimeout caps the timeout a call may ask for: a command that
	// needs longer belongs in a terminal the user watches.
	cmdMaxTimeout = 10 * time.Minute
	// cmdStreamMax is how much of a command's output is streamed to the
	// client; past it the client is told that the rest is not shown
	// live, so a runaway command cannot flood the connection.
	cmdStreamMax = 1 << 20
	// cmdDrainWait is how long output is still read once the shell has
	// exited and what it left has been killed: only a process that hid
	// from the sweep (a cleared environment) can still hold the pipe.
	cmdDrainWait = 200 * time.Millisecond
)

type runCommandsArgs struct {
	Commands   []string `json:"commands"`
	Timeout    int      `json:"timeout"`
	Background bool     `json:"background"`
	// Sandbox false asks to run outside the sandbox (which asks the user);
	// it means something only at the sandbox approval level.
	Sandbox *bool `json:"sandbox"`
}

func (e *wsEnv) buildRunCommands(a runCommandsArgs) (Invocation, error) {
	var probs []Problem
	for i, cmd := range a.Commands {
		if strings.TrimSpace(cmd) == "" {
			probs = append(probs, Problem{Path: fmt.Sprintf("commands[%d]", i), Message: "is empty"})
		}
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	timeout := e.cfg.commandTimeout
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout) * time.Second
	}
	return &runCommandsCall{env: e, commands: a.Commands, timeout: min(timeout, cmdMaxTimeout), background: a.Background,
		outside: a.Sandbox != nil && !*a.Sandbox}, nil
}

type runCommandsCall struct {
	env      *wsEnv
	commands []string
	timeout  time.Duration
	// background starts each command in the session's Background and
	// returns with its first output.
	background bool
	// outside: the model asked to run outside the sandbox.
	outside bool
}

// WantsSandbox is false when the call asked to run outside the sandbox
// (Sandboxable).
func (c *runCommandsCall) WantsSandbox() bool { return !c.outside }

// Commands returns the commands the call runs, in order (CommandRunner).
func (c *runCommandsCall) Commands() []string { return slices.Clone(c.commands) }

// Describe shows the commands, for the approval request.
func (c *runCommandsCall) Describe(context.Context) Description {
	first := strings.TrimSpace(c.commands[0])
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i] + " …"
	}
	first = cutWords(first, 80)
	title := "Run " + first
	if c.background {
		title = "Run in the background: " + first
	}
	if n := len(c.commands); n > 1 {
		title += fmt.Sprintf(" and %d more", n-1)
	}
	return Description{Title: title, Kind: KindExecute, Command: strings.Join(c.commands, "\n")}
}

// Execute runs the commands one after another, each whatever the outcome
// of the one before, since they are often independent looks at the
// workspace. The call is an error if any command failed.
func (c *runCommandsCall) Execute(ctx context.Context, opts ExecOptions) (Result, error) {
	if c.background {
		return c.startBackground(ctx, opts.Sandboxed), nil
	}
	stream := opts.Output
	if stream == nil {
		stream = func(string) {}
	}
	run := c.executor(opts)
	if !run.streams() {
		// The client shows the command itself: text streamed to the
		// card would replace the terminal it embeds.
		stream = func(string) {}
	}
	share := MaxToolOutput / len(c.commands)
	var b strings.Builder
	failed := false
	outcomes := make([]CommandOutcome, 0, len(c.commands))
	for i, command := range c.commands {
		if i > 0 {
			b.WriteString("\n")
			stream("\n")
		}
		header := "$ " + command + "\n"
		b.WriteString(header)
		stream(header)
		if ctx.Err() != nil {
			b.WriteString("[not run: the call was cancelled]\n")
			failed = true
			outcomes = append(outcomes, CommandOutcome{Command: command, Status: "not run: the call was cancelled"})
			continue
		}
		out, status, ok := run.run(ctx, command, share, opts)
		b.WriteString(out)
		b.WriteString(status)
		stream(status)
		failed = failed || !ok
		outcomes = append(outcomes, CommandOutcome{Command: command, Status: strings.Trim(strings.TrimSpace(status), "[]"), OK: ok})
	}
	return Result{Content: b.String(), IsError: failed, Commands: outcomes}, nil
}

// startBackground starts each command in the session's background set
// and reports what each printed in its first moments. The call is an
// error if a command could not start or has already failed.
func (c *runCommandsCall) startBackground(ctx context.Context, sandboxed bool) Result {
	b := c.env.cfg.background
	if b == nil {
		return Errorf("background commands are not available in this session; run the command without background")
	}
	var out strings.Builder
	failed := false
	for i, command := range c.commands {
		if i > 0 {
			out.WriteString("\n")
		}
		cmd, err := b.start(c.env, command, sandboxed)
		if err != nil {
			fmt.Fprintf(&out, "$ %s\n[not started: %v]\n", command, err)
			failed = true
			continue
		}
		cmd.settle(ctx)
		out.WriteString(b.report(cmd, ""))
		if cmd.exited() && !strings.HasPrefix(cmd.status, "[exit code 0") {
			failed = true
		}
	}
	return Result{Content: out.String(), IsError: failed}
}

// runOne runs one command in its own process group and returns its
// output (cut to budget bytes) and a status line; ok is false unless it
// exited with 0.
func (c *runCommandsCall) runOne(ctx context.Context, command string, budget int, stream func(string), sandboxed bool) (out, status string, ok bool) {
	cmd, conf, err := c.env.command(command, sandboxed)
	if err != nil {
		return "", fmt.Sprintf("[not run: %v]\n", err), false
	}
	defer conf.release()
	// Standard input is /dev/null (a nil Stdin): a command that prompts
	// gets end of file instead of waiting for ever.
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Sprintf("[could not run: %v]\n", err), false
	}
	// One pipe for both streams keeps their lines in the order written.
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	group, err := proc.Start(cmd, true, nil)
	w.Close() // the child has its copy; ours would keep the pipe open
	if err != nil {
		r.Close()
		return "", fmt.Sprintf("[could not start the shell %s: %v]\n", cmd.Path, err), false
	}
	collected := newCmdOutput(budget, stream)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		collected.readFrom(r)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	var stopped string
	select {
	case err = <-exited:
	case <-timer.C:
		stopped = "timeout"
		group.Kill()
		err = <-exited
	case <-ctx.Done():
		stopped = "cancelled"
		group.Kill()
		err = <-exited
	}
	// The shell has ended: whatever it left running (a server started
	// with &, a daemon that double-forked away from its group) goes too,
	// and output is read only as long as it takes them to die.
	leftovers := group.Cleanup()
	select {
	case <-drained:
	case <-time.After(cmdDrainWait):
		r.Close() // ends the read; a process that hid from the sweep still holds the pipe
		<-drained
	}
	r.Close()

	out = commandText(collected)
	if stopped != "" {
		return out, stoppedStatus(stopped, c.timeout), false
	}
	status, ok = exitStatus(cmd, err, time.Since(start), leftovers)
	if !ok {
		status += conf.note(out)
	}
	return out, status, ok
}

// confinement is how one command runs: in the sandbox (sandboxed, with
// the policy it ran under) or not.
type confinement struct {
	sandboxed bool
	policy    sandbox.Policy
	release   func()
}

// note is what the model is told after a confined command failed, when
// its output shows a sign of the sandbox: why, and how to run it outside.
func (c confinement) note(output string) string {
	if !c.sandboxed {
		return ""
	}
	r := c.policy.Reason(output)
	if r == "" {
		return ""
	}
	return "[sandbox: " + r + ". If the command needs what the sandbox refuses, call " + NameRunCommands +
		" again with sandbox: false, which asks the user to run it outside]\n"
}

// command is the one place a command's process is made, for
// run_commands and background commands alike: the shell in the
// workspace with commandEnv, confined when the policy allowed it only
// in the sandbox. A command to confine with no sandbox configured, or one
// that cannot be confined, is an error: it never runs unconfined instead.
func (e *wsEnv) command(command string, sandboxed bool) (*exec.Cmd, confinement, error) {
	cmd := exec.Command(e.shellPath(), "-c", command)
	cmd.Dir = e.files.Root()
	cmd.Env = e.commandEnv()
	conf := confinement{release: func() {}}
	if !sandboxed {
		return cmd, conf, nil
	}
	if e.cfg.sandbox == nil {
		return nil, conf, errors.New("the sandbox is not set up in this session, and the command may run only inside it")
	}
	conf.sandboxed, conf.policy = true, e.cfg.sandbox()
	release, err := sandbox.Confine(cmd, conf.policy)
	if err != nil {
		return nil, conf, fmt.Errorf("the command may run only in the sandbox, which could not confine it: %v", err)
	}
	conf.release = release
	return cmd, conf, nil
}

// exitStatus is the status line of a command whose shell has exited
// (cmd.Wait returned err) after elapsed; leftovers says that processes it
// left running were killed. ok is true for exit code 0.
func exitStatus(cmd *exec.Cmd, err error, elapsed time.Duration, leftovers bool) (status string, ok bool) {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fmt.Sprintf("[failed: %v]\n", err), false
	}
	code, signal := cmd.ProcessState.ExitCode(), ""
	if code < 0 {
		signal = cmd.ProcessState.String()
	}
	return codeStatus(code, signal, elapsed, leftovers), code == 0
}

// codeStatus is the status line of a command that ended with code, or by
// signal when that is not empty, wherever it ran.
func codeStatus(code int, signal string, elapsed time.Duration, leftovers bool) string {
	elapsed = elapsed.Round(10 * time.Millisecond)
	var note string
	if leftovers {
		note = "; processes it left running in the background were stopped"
	}
	switch {
	case signal != "":
		return fmt.Sprintf("[killed by a signal: %s%s]\n", signal, note)
	case code == 0:
		return fmt.Sprintf("[exit code 0, %s%s]\n", elapsed, note)
	case code == 127:
		return fmt.Sprintf("[exit code 127: command not found; check the program's name and that it is installed and on PATH%s]\n", note)
	case code == 126:
		return fmt.Sprintf("[exit code 126: the program was found but could not be run (not executable?)%s]\n", note)
	}
	return fmt.Sprintf("[exit code %d, %s%s]\n", code, elapsed, note)
}

// ShellFor is the shell run_commands runs commands in ("shell -c
// command"), given the CommandShell option (empty when not set): the
// option, else $SHELL, else /bin/sh. The system prompt names the same
// shell: ShellFor("") when the option is not used.
func ShellFor(option string) string {
	for _, s := range []string{option, os.Getenv("SHELL")} {
		if s == "" {
			continue
		}
		if p, err := exec.LookPath(s); err == nil {
			return p
		}
	}
	return "/bin/sh"
}

func (e *wsEnv) shellPath() string { return ShellFor(e.cfg.shell) }

// commandEnv is the environment of commands, without API keys: pagers
// print instead of waiting for a key, and git never prompts for
// credentials.
func (e *wsEnv) commandEnv() []string {
	return proc.Env(e.cfg.commandEnv, e.cfg.hiddenEnv, commandEnvSet)
}

// commandEnvSet is what commands' environment sets, wherever they run.
var commandEnvSet = []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// terminalEnv is what a command in the client's terminal gets set over
// the client's own environment: commandEnvSet, and every key variable
// commandEnv removes (by name) set to empty, so a key the client's
// environment shares with the daemon's does not reach the command either.
func (e *wsEnv) terminalEnv() []string {
	base := e.cfg.commandEnv
	if base == nil {
		base = os.Environ()
	}
	var out []string
	seen := map[string]bool{}
	blank := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name+"=")
		}
	}
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if proc.IsSecret(name, e.cfg.hiddenEnv) {
			blank(name)
		}
	}
	for _, name := range e.cfg.hiddenEnv {
		blank(name)
	}
	return append(out, commandEnvSet...)
}

// cmdOutput collects a command's output as it arrives: it streams it
// (whole UTF-8 characters only, up to cmdStreamMax) and keeps the first
// and last halves of the budget, so memory stays bounded however much a
// command prints.
type cmdOutput struct {
	stream   func(string)
	budget   int
	mu       sync.Mutex
	head     []byte
	tail     []byte // the most recent bytes, at most budget/2 kept when trimmed
	total    int
	streamed int
	partial  []byte // the start of a UTF-8 character split between reads
}

func newCmdOutput(budget int, stream func(string)) *cmdOutput {
	return &cmdOutput{stream: stream, budget: max(budget, 1024)}
}

func (o *cmdOutput) readFrom(r *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.write(buf[:n])
		}
		if err != nil {
			o.flush()
			return
		}
	}
}

func (o *cmdOutput) write(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.total += len(p)
	half := o.budget / 2
	rest := p
	if len(o.head) < half {
		n := min(half-len(o.head), len(rest))
		o.head = append(o.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		o.tail = append(o.tail, rest...)
		if len(o.tail) > 2*half {
			o.tail = append(o.tail[:0], o.tail[len(o.tail)-half:]...)
		}
	}

	if o.streamed >= cmdStreamMax {
		return
	}
	chunk := append(o.partial, p...)
	// Hold back a character whose last bytes have not arrived yet.
	cut := len(chunk)
	for i := 1; i <= utf8.UTFMax && i <= len(chunk); i++ {
		if utf8.RuneStart(chunk[len(chunk)-i]) {
			if !utf8.FullRune(chunk[len(chunk)-i:]) {
				cut = len(chunk) - i
			}
			break
		}
	}
	o.partial = append([]byte(nil), chunk[cut:]...)
	if cut == 0 {
		return
	}
	o.streamed += cut
	o.stream(string(chunk[:cut]))
	if o.streamed >= cmdStreamMax {
		o.stream("\n[the output goes on but is no longer shown as it comes; the result will hold its start and end]\n")
	}
}

func (o *cmdOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 && o.streamed < cmdStreamMax {
		o.stream(string(o.partial))
	}
	o.partial = nil
}

// text is the output, cut in the middle if it went over the budget.
func (o *cmdOutput) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	half := o.budget / 2
	tail := o.tail
	if len(tail) > half {
		tail = tail[len(tail)-half:]
	}
	if len(o.head)+len(tail) == o.total {
		return string(o.head) + string(tail)
	}
	// The kept halves never met: put them together with a note, as
	// wsCutMiddle would for the whole text.
	head, t := string(o.head), string(tail)
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)*3/4 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(t, '\n'); i >= 0 && i <= len(t)/4 {
		t = t[i+1:]
	}
	head, t = beforeCut(wsValidPrefix(head)), afterCut(wsValidSuffix(t))
	return fmt.Sprintf("%s\n[... %d characters cut from the middle ...]\n%s", head, o.total-len(head)-len(t), t)
}
