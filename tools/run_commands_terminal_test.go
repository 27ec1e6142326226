//go:build unix

package tools_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/tools"
)

// fakeTerminal is a client terminal that runs commands for real, as an
// editor would, and records the requests it got.
type fakeTerminal struct {
	mu       sync.Mutex
	calls    []string
	specs    []tools.TerminalSpec
	running  map[string]*fakeTerm
	limit    int // bytes of output kept, from the end; 0 keeps all
	released map[string]bool
}

type fakeTerm struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
}

func newFakeTerminal() *fakeTerminal {
	return &fakeTerminal{running: map[string]*fakeTerm{}, released: map[string]bool{}}
}

func (f *fakeTerminal) note(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

func (f *fakeTerminal) Create(_ context.Context, spec tools.TerminalSpec) (string, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.CWD
	cmd.Env = append(os.Environ(), spec.Env...)
	ft := &fakeTerm{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &ft.out, &ft.out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { cmd.Wait(); close(ft.done) }()
	f.mu.Lock()
	defer f.mu.Unlock()
	id := fmt.Sprintf("term-%d", len(f.specs)+1)
	f.specs = append(f.specs, spec)
	f.running[id] = ft
	f.calls = append(f.calls, "create "+id)
	return id, nil
}

func (f *fakeTerminal) term(id string) *fakeTerm {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[id]
}

func (f *fakeTerminal) WaitForExit(ctx context.Context, id string) (tools.TerminalExit, error) {
	ft := f.term(id)
	select {
	case <-ft.done:
	case <-ctx.Done():
		return tools.TerminalExit{}, ctx.Err()
	}
	if code := ft.cmd.ProcessState.ExitCode(); code >= 0 {
		return tools.TerminalExit{ExitCode: &code}, nil
	}
	return tools.TerminalExit{Signal: "SIGKILL"}, nil
}

func (f *fakeTerminal) Output(_ context.Context, id string) (tools.TerminalOutput, error) {
	f.note("output " + id)
	ft := f.term(id)
	<-ft.done // the buffer is written by exec until the process ends
	out := ft.out.String()
	truncated := f.limit > 0 && len(out) > f.limit
	if truncated {
		out = out[len(out)-f.limit:]
	}
	return tools.TerminalOutput{Output: out, Truncated: truncated}, nil
}

func (f *fakeTerminal) Kill(_ context.Context, id string) error {
	f.note("kill " + id)
	return f.term(id).cmd.Process.Kill()
}

func (f *fakeTerminal) Release(_ context.Context, id string) error {
	f.note("release " + id)
	f.mu.Lock()
	f.released[id] = true
	f.mu.Unlock()
	return nil
}

func (f *fakeTerminal) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func TestRunCommandsInTheClientTerminal(t *testing.T) {
	files := wsTree(t, map[string]string{"a.txt": "hello\n"})
	term := newFakeTerminal()
	env := tools.CommandEnv([]string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-daemon-secret", "MY_TOKEN=tok"})
	inv, err := wsBuild(t, files, tools.NameRunCommands,
		`{"commands":["cat a.txt; echo key=$OPENAI_API_KEY; echo to-stderr >&2","exit 3"]}`,
		tools.CommandShell("/bin/sh"), env, tools.HideEnv("MY_TOKEN"), tools.ClientTerminals(term))
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	t.Setenv("OPENAI_API_KEY", "sk-client-secret") // the client's own environment holds a key too
	res, err := inv.Execute(context.Background(), tools.ExecOptions{Terminal: func(id string) { shown = append(shown, id) }})
	if err != nil {
		t.Fatal(err)
	}
	wsWant(t, res.Content, "$ cat a.txt; echo key=$OPENAI_API_KEY; echo to-stderr >&2\nhello\nkey=\nto-stderr\n[exit code 0, ",
		"$ exit 3\n(no output)\n[exit code 3, ")
	wsWantNot(t, res.Content, "secret")
	if !res.IsError {
		t.Error("IsError is false after a command in the terminal failed")
	}
	if want := []string{"term-1", "term-2"}; !slices.Equal(shown, want) {
		t.Errorf("terminals shown = %v, want %v", shown, want)
	}
	if want := []string{"create term-1", "output term-1", "release term-1", "create term-2", "output term-2", "release term-2"}; !slices.Equal(term.log(), want) {
		t.Errorf("terminal requests = %v, want %v", term.log(), want)
	}
	sp := term.specs[0]
	if sp.Command != "/bin/sh" || !slices.Equal(sp.Args, []string{"-c", "cat a.txt; echo key=$OPENAI_API_KEY; echo to-stderr >&2"}) ||
		sp.CWD != files.Root() || sp.OutputByteLimit != tools.MaxToolOutput/2 {
		t.Errorf("spec = %+v", sp)
	}
	for _, want := range []string{"OPENAI_API_KEY=", "MY_TOKEN=", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"} {
		if !slices.Contains(sp.Env, want) {
			t.Errorf("env %v lacks %s", sp.Env, want)
		}
	}
	if strings.Contains(strings.Join(sp.Env, " "), "secret") || strings.Contains(strings.Join(sp.Env, " "), "PATH=") {
		t.Errorf("env %v carries more than it sets", sp.Env)
	}
}

func TestRunCommandsInTheClientTerminalTruncated(t *testing.T) {
	files := wsTree(t, nil)
	term := newFakeTerminal()
	term.limit = 100
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["seq 1 1000"]}`, tools.CommandShell("/bin/sh"), tools.ClientTerminals(term))
	wsWant(t, res.Content, "$ seq 1 1000\n[the start of the output was dropped by the editor's terminal]\n", "\n1000\n[exit code 0")
	wsWantNot(t, res.Content, "\n1\n")
}

func TestRunCommandsInTheClientTerminalCancelKills(t *testing.T) {
	files := wsTree(t, nil)
	term := newFakeTerminal()
	inv, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["sleep 60","echo never"]}`,
		tools.CommandShell("/bin/sh"), tools.ClientTerminals(term))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan tools.Result, 1)
	go func() {
		res, err := inv.Execute(ctx, tools.ExecOptions{Terminal: func(string) { cancel() }})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var res tools.Result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute): // a guard only: the kill ends it at once
		t.Fatal("the call did not end after its cancel")
	}
	wsWant(t, res.Content, "[cancelled: the command and the processes it started were stopped]", "$ echo never\n[not run: the call was cancelled]")
	if want := []string{"create term-1", "kill term-1", "output term-1", "release term-1"}; !slices.Equal(term.log(), want) {
		t.Errorf("terminal requests = %v, want %v", term.log(), want)
	}
}

func TestRunCommandsInTheClientTerminalTimeoutKills(t *testing.T) {
	files := wsTree(t, nil)
	term := newFakeTerminal()
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["sleep 60"],"timeout":1}`, tools.CommandShell("/bin/sh"), tools.ClientTerminals(term))
	wsWant(t, res.Content, "[timed out after 1s")
	if want := []string{"create term-1", "kill term-1", "output term-1", "release term-1"}; !slices.Equal(term.log(), want) {
		t.Errorf("terminal requests = %v, want %v", term.log(), want)
	}
}

// A command the policy allows only in the sandbox never goes to the
// client's terminal, which cannot confine it.
func TestRunCommandsSandboxedStaysLocal(t *testing.T) {
	files := wsTree(t, nil)
	term := newFakeTerminal()
	inv, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["echo hi"]}`, tools.CommandShell("/bin/sh"), tools.ClientTerminals(term))
	if err != nil {
		t.Fatal(err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{Sandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	wsWant(t, res.Content, "the sandbox is not set up")
	if l := term.log(); len(l) != 0 {
		t.Errorf("the client's terminal got %v", l)
	}
}

// A terminal the client could not make is reported, and nothing is
// released that was never created.
func TestRunCommandsClientTerminalFails(t *testing.T) {
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["echo hi"]}`, tools.ClientTerminals(failingTerminal{}))
	wsWant(t, res.Content, "[not run: the editor's terminal could not start it: no terminals here]")
	if !res.IsError {
		t.Error("not an error")
	}
}

type failingTerminal struct{ tools.ClientTerminal }

func (failingTerminal) Create(context.Context, tools.TerminalSpec) (string, error) {
	return "", errors.New("no terminals here")
}
