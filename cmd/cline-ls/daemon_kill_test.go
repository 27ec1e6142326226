//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"syscall"
	"testing"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// TestDaemonKilledTakesItsCommandsAlong runs the real binary on a replayed
// turn whose command starts a pipeline and a process that left its
// session, kills the daemon with SIGKILL while the command runs, and
// expects both gone: the shell by its parent-death signal, the rest by
// the watchdog.
func TestDaemonKilledTakesItsCommandsAlong(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed; the command needs it")
	}
	bin := testbin.CLI(t)
	piped := 5_000_000 + rand.IntN(1_000_000)*2
	escaped := piped + 1
	command := fmt.Sprintf("setsid sleep %d & sleep %d | cat", escaped, piped)
	transcript := fmt.Sprintf(`{"model":"replay","replies":[{"events":[
		{"tool_call":{"id":"c1","name":"run_commands","args":{"commands":[%q],"timeout":300}}}]}]}`, command)
	daemon, out := startReplayExec(t, bin, transcript, "run it", piped, escaped)
	if !markedRunning(piped, escaped) {
		daemon.Process.Kill()
		daemon.Wait()
		t.Fatalf("the command never ran; the daemon said:\n%s", out.String())
	}
	daemon.Process.Signal(syscall.SIGKILL)
	daemon.Wait()
	if markedGone(piped, escaped) {
		return
	}
	t.Errorf("after SIGKILL of the daemon, pipeline %v and escaped %v still run", proctest.MarkerPIDs(piped), proctest.MarkerPIDs(escaped))
}
