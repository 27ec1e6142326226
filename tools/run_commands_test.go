//go:build unix

package tools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/tools"
)

func TestRunCommandsOutputAndExitCodes(t *testing.T) {
	files := wsTree(t, map[string]string{"a.txt": "hello\n"})
	sh := tools.CommandShell("/bin/sh")

	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["cat a.txt; echo to-stderr >&2; echo after","pwd"]}`, sh)
	wsWant(t, res.Content, "$ cat a.txt; echo to-stderr >&2; echo after\nhello\nto-stderr\nafter\n[exit code 0, ",
		"$ pwd\n"+files.Root()+"\n[exit code 0")
	if res.IsError {
		t.Error("IsError after commands that succeeded")
	}

	res = wsRun(t, files, tools.NameRunCommands, `{"commands":["true","exit 3"]}`, sh)
	wsWant(t, res.Content, "$ true\n(no output)\n[exit code 0", "$ exit 3\n(no output)\n[exit code 3, ")
	if !res.IsError {
		t.Error("IsError is false after a command failed")
	}
	if c := res.Commands; len(c) != 2 || c[0].Command != "true" || !c[0].OK || c[1].Command != "exit 3" || c[1].OK ||
		!strings.HasPrefix(c[1].Status, "exit code 3, ") {
		t.Errorf("outcomes = %+v, want true ok and exit 3 failed with its code", c)
	}

	res = wsRun(t, files, tools.NameRunCommands, `{"commands":["no-such-program-xyz --flag"]}`, sh)
	wsWant(t, res.Content, "no-such-program-xyz", "[exit code 127: command not found; check the program's name")
	if !res.IsError {
		t.Error("a missing program is not an error")
	}

	// Standard input is empty, so a command reading it ends at once.
	res = wsRun(t, files, tools.NameRunCommands, `{"commands":["cat; echo read-all"],"timeout":20}`, sh)
	wsWant(t, res.Content, "read-all\n[exit code 0")

	if _, err := os.Stat("/bin/bash"); err == nil {
		res = wsRun(t, files, tools.NameRunCommands, `{"commands":["echo bash=$BASH_VERSION"]}`, tools.CommandShell("/bin/bash"))
		wsWantNot(t, res.Content, "bash=\n")
	}

	_, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["ls","  "]}`)
	wsWant(t, wsErrorText(t, err), "commands[1]: is empty")
}

func TestRunCommandsTimeoutKillsTheGroup(t *testing.T) {
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands,
		`{"commands":["sleep 30 & echo $! > child.pid; wait"],"timeout":1}`, tools.CommandShell("/bin/sh"))
	wsWant(t, res.Content, "[timed out after 1s: the command and the processes it started were stopped")
	if !res.IsError {
		t.Error("a timeout is not an error")
	}
	waitGone(t, readPid(t, filepath.Join(files.Root(), "child.pid")))
}

func TestRunCommandsCancelKillsTheGroup(t *testing.T) {
	files := wsTree(t, nil)
	pidFile := filepath.Join(files.Root(), "child.pid")
	inv, err := wsBuild(t, files, tools.NameRunCommands,
		`{"commands":["sleep 60 & echo $! > child.pid; echo started; wait","echo never"]}`, tools.CommandShell("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	done := make(chan tools.Result)
	go func() {
		res, err := inv.Execute(ctx, tools.ExecOptions{Output: func(chunk string) {
			if strings.Contains(chunk, "started") {
				once.Do(func() { close(started) })
			}
		}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case <-started:
	case res := <-done:
		t.Fatalf("finished before it was cancelled: %s", res.Content)
	}
	pid := readPid(t, pidFile)
	cancel()
	res := <-done
	wsWant(t, res.Content, "[cancelled: the command and the processes it started were stopped]",
		"$ echo never\n[not run: the call was cancelled]")
	waitGone(t, pid)
}

func TestRunCommandsStopsLeftoverBackgroundProcesses(t *testing.T) {
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["sleep 60 & echo $! > child.pid"],"timeout":20}`,
		tools.CommandShell("/bin/sh"))
	wsWant(t, res.Content, "[exit code 0", "processes it left running in the background were stopped")
	waitGone(t, readPid(t, filepath.Join(files.Root(), "child.pid")))
}

// readPid reads a process ID a command wrote.
func readPid(t *testing.T, name string) int {
	t.Helper()
	for range 200 {
		data, err := os.ReadFile(name)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was never written", name)
	return 0
}

// waitGone fails unless process pid ends (or is a zombie, dead but not
// yet reaped by its new parent) within a few seconds of being killed.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
	t.Fatalf("process %d still runs", pid)
}

func TestRunCommandsStreamsWhileRunning(t *testing.T) {
	files := wsTree(t, nil)
	flag := filepath.Join(files.Root(), "go.flag")
	// The command waits until the test has seen its first line, which it
	// can only do if output is streamed before the command ends.
	inv, err := wsBuild(t, files, tools.NameRunCommands,
		`{"commands":["echo ready; while [ ! -f go.flag ]; do sleep 0.02; done; echo finished"],"timeout":20}`,
		tools.CommandShell("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var streamed strings.Builder
	res, err := inv.Execute(context.Background(), tools.ExecOptions{Output: func(chunk string) {
		mu.Lock()
		defer mu.Unlock()
		streamed.WriteString(chunk)
		if strings.Contains(streamed.String(), "ready\n") {
			os.WriteFile(flag, nil, 0o644)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	wsWant(t, res.Content, "ready\nfinished\n[exit code 0")
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(streamed.String(), "$ echo ready;") || !strings.Contains(streamed.String(), "finished\n[exit code 0") {
		t.Errorf("streamed %q", streamed.String())
	}
}

func TestRunCommandsCutsLongOutputInTheMiddle(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3*tools.MaxToolOutput; i++ {
		fmt.Fprintf(&b, "line %d %s end\n", i, strings.Repeat("é", i%7))
	}
	files := wsTree(t, map[string]string{"big.txt": "FIRST LINE\n" + b.String() + "LAST LINE\n"})
	var streamed int
	inv, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["cat big.txt"]}`, tools.CommandShell("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{Output: func(s string) {
		streamed += len(s)
		if !utf8.ValidString(s) {
			t.Errorf("a streamed chunk splits a character: %q…", s[:min(len(s), 40)])
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	wsWant(t, res.Content, "$ cat big.txt\nFIRST LINE\nline 0  end\n", "LAST LINE\n[exit code 0", "characters cut from the middle")
	if len(res.Content) > tools.MaxToolOutput+500 {
		t.Errorf("output is %d bytes, over the limit", len(res.Content))
	}
	if !utf8.ValidString(res.Content) {
		t.Error("the cut split a UTF-8 character")
	}
	if streamed < 3*tools.MaxToolOutput {
		t.Errorf("streamed %d bytes; the whole output goes to the client", streamed)
	}
}

// TestReadOnlyRefusal: plan mode's refusal names each command that may
// change files, and only those, with what to do instead.
func TestReadOnlyRefusal(t *testing.T) {
	for _, cmd := range []string{"rm -rf build", "echo hi > out.txt", "sed -i s/a/b/ a.txt", "find . -delete", "git commit -m x"} {
		text := wsErrorText(t, tools.ReadOnlyRefusal([]string{"ls", cmd}))
		wsWant(t, text, "commands[1]: not allowed in plan mode, which runs only commands that change no files", strconv.Quote(cmd),
			"Changing files needs act mode")
		wsWantNot(t, text, "commands[0]")
	}
	if err := tools.ReadOnlyRefusal([]string{"ls -a | head -5 2>/dev/null", "git status 2>&1 || true"}); err != nil {
		t.Errorf("read-only commands refused: %v", err)
	}
}

func TestRunCommandsDescribe(t *testing.T) {
	files := wsTree(t, nil)
	inv, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["go test ./...\ngo vet ./...","ls"]}`)
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Describe(context.Background())
	if d.Kind != tools.KindExecute || d.Title != "Run go test ./... … and 1 more" || d.Command != "go test ./...\ngo vet ./...\nls" {
		t.Errorf("description %+v", d)
	}
}

func TestRunCommandsOptions(t *testing.T) {
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["echo \"$FOO|$PAGER\""]}`,
		tools.CommandShell("/bin/sh"), tools.CommandEnv([]string{"FOO=from-option", "PATH=" + os.Getenv("PATH")}))
	wsWant(t, res.Content, "from-option|cat\n")

	res = wsRun(t, files, tools.NameRunCommands, `{"commands":["sleep 20"]}`,
		tools.CommandShell("/bin/sh"), tools.CommandTimeout(200*time.Millisecond))
	wsWant(t, res.Content, "[timed out after 200ms")
}
