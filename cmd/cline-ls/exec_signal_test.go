//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// startExecWith starts `bin exec` with flags on a replayed turn that runs
// `sleep marker`, in a folder of its own; its stdout and stderr are
// collected apart. The marked command is killed when the test ends.
func startExecWith(t *testing.T, bin string, marker int, flags ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	transcript := fmt.Sprintf(`{"model":"replay","replies":[
		{"events":[{"tool_call":{"id":"c1","name":"run_commands","args":{"commands":["sleep %d"],"timeout":300}}}]},
		{"events":[{"text":"The command was stopped."}]}]}`, marker)
	tpath := filepath.Join(dir, "transcript.json")
	if err := os.WriteFile(tpath, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	args := append([]string{"exec", "--provider", "replay", "--transcript", tpath, "--approve", "allow"}, flags...)
	cmd := exec.Command(bin, append(args, "wait for it")...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, pid := range proctest.MarkerPIDs(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if !markedRunning(marker) {
		t.Fatalf("the command never ran; exec said:\n%s\n%s", stdout.String(), stderr.String())
	}
	return cmd, stdout, stderr
}

// exitCode waits (a failure guard of 20 s) for exec to end and returns
// its exit code; killed by a signal fails the test.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("exec did not exit within 20 s of the signal")
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("exec was killed by %v, want an exit with a code", ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestExecCtrlCCancelsTheTurn: SIGINT while a command runs cancels the
// turn (the command stopped, the turn ended "cancelled") and exec exits
// 130; with --json the last line is the final event with that stop
// reason. Before, exec exited 1 and --json had no final event.
func TestExecCtrlCCancelsTheTurn(t *testing.T) {
	bin := testbin.CLI(t)
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			marker := 8_600_000 + rand.IntN(300_000)*2
			var flags []string
			if mode == "json" {
				flags = []string{"--json"}
			}
			cmd, stdout, stderr := startExecWith(t, bin, marker, flags...)
			cmd.Process.Signal(os.Interrupt)
			if code := exitCode(t, cmd); code != 130 {
				t.Errorf("exit code %d after Ctrl-C, want 130; stderr:\n%s", code, stderr.String())
			}
			if !markedGone(marker) {
				t.Errorf("the command %v still runs after exec ended", proctest.MarkerPIDs(marker))
			}
			if !strings.Contains(stderr.String(), "cancelling the turn") {
				t.Errorf("stderr does not say the turn is being cancelled:\n%s", stderr.String())
			}
			out := strings.TrimRight(stdout.String(), "\n")
			last := out[strings.LastIndexByte(out, '\n')+1:]
			if mode == "text" {
				if !strings.HasPrefix(last, "stop:") || !strings.Contains(last, "cancelled") {
					t.Errorf("the last line is %q, want the stop reason cancelled; stdout:\n%s", last, out)
				}
				return
			}
			var end map[string]any
			if err := json.Unmarshal([]byte(last), &end); err != nil {
				t.Fatalf("the last line %q is not JSON: %v", last, err)
			}
			if end["stopReason"] != "cancelled" || end["sessionId"] == nil || end["update"] != nil {
				t.Errorf("the final event is %s, want {sessionId, stopReason: cancelled}", last)
			}
		})
	}
}

// TestExecSecondInterruptExitsAtOnce: a second interrupt does not wait
// for the turn to end. The process is stopped while both signals are
// sent, so that they arrive together, and exec must exit (with 128 and
// the signal that came second; the kernel may hand them over in either
// order) without printing the end of the turn the first one cancelled.
func TestExecSecondInterruptExitsAtOnce(t *testing.T) {
	bin := testbin.CLI(t)
	marker := 8_900_000 + rand.IntN(300_000)*2
	cmd, stdout, stderr := startExecWith(t, bin, marker)
	pid := cmd.Process.Pid
	syscall.Kill(pid, syscall.SIGSTOP)
	syscall.Kill(pid, syscall.SIGINT)
	syscall.Kill(pid, syscall.SIGTERM)
	syscall.Kill(pid, syscall.SIGCONT)
	if code := exitCode(t, cmd); code != 128+int(syscall.SIGTERM) && code != 128+int(syscall.SIGINT) {
		t.Errorf("exit code %d, want 128+signal; stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if n := strings.Count(stderr.String(), "cancelling the turn"); n != 1 {
		t.Errorf("stderr says %d times that the turn is being cancelled, want once:\n%s", n, stderr.String())
	}
	if strings.Contains(stdout.String(), "stop:") {
		t.Errorf("exec waited for the turn to end:\n%s", stdout.String())
	}
	if !markedGone(marker) {
		t.Errorf("the command %v still runs after exec exited", proctest.MarkerPIDs(marker))
	}
}

// TestExecCtrlCAtTheApprovalPrompt: Ctrl-C while exec asks on the
// terminal whether to allow a command cancels the turn and exits 130;
// the read of the terminal, which cannot be stopped, is given up (exec
// waited for it before, and hung with the terminal open).
func TestExecCtrlCAtTheApprovalPrompt(t *testing.T) {
	bin := testbin.CLI(t)
	dir := t.TempDir()
	tpath := filepath.Join(dir, "transcript.json")
	os.WriteFile(tpath, []byte(`{"replies":[{"events":[{"tool_call":{"id":"c1","name":"run_commands","args":{"commands":["touch made"]}}}]},{"events":[{"text":"ok"}]}]}`), 0o600)
	cmd := exec.Command(bin, "exec", "--provider", "replay", "--transcript", tpath, "--approve", "ask", "make it")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	terminal, err := cmd.StdinPipe() // held open, never answered
	if err != nil {
		t.Fatal(err)
	}
	defer terminal.Close()
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	asked := false
	for range 1000 { // a failure guard of 20 s
		if asked = strings.Contains(stdout.String(), "allow? [y/N/a(lways)]"); asked {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !asked {
		t.Fatalf("exec never asked; it said:\n%s\n%s", stdout.String(), stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	if code := exitCode(t, cmd); code != 130 {
		t.Errorf("exit code %d after Ctrl-C at the prompt, want 130; stderr:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Error("the command ran although it was never allowed")
	}
}
