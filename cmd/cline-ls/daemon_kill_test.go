//go:build linux

package main

import (
	"bytes"
	"fmt"
	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	dir := t.TempDir()
	bin := filepath.Join(dir, "cline-ls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	piped := 5_000_000 + rand.IntN(1_000_000)*2
	escaped := piped + 1
	command := fmt.Sprintf("setsid sleep %d & sleep %d | cat", escaped, piped)
	transcript := fmt.Sprintf(`{"model":"replay","replies":[{"events":[
		{"tool_call":{"id":"c1","name":"run_commands","args":{"commands":[%q],"timeout":300}}}]}]}`, command)
	tpath := filepath.Join(dir, "transcript.json")
	if err := os.WriteFile(tpath, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	daemon := exec.Command(bin, "exec", "--provider", "replay", "--transcript", tpath, "--approve", "allow", "run it")
	daemon.Dir = work
	daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	var out bytes.Buffer
	daemon.Stdout, daemon.Stderr = &out, &out
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, n := range []int{piped, escaped} {
			for _, pid := range proctest.MarkerPIDs(n) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}()
	running := false
	for range 500 {
		if len(proctest.MarkerPIDs(piped)) > 0 && len(proctest.MarkerPIDs(escaped)) > 0 {
			running = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !running {
		daemon.Process.Kill()
		daemon.Wait()
		t.Fatalf("the command never ran; the daemon said:\n%s", out.String())
	}
	daemon.Process.Signal(syscall.SIGKILL)
	daemon.Wait()
	for range 200 { // at most 10 s
		if len(proctest.MarkerPIDs(piped))+len(proctest.MarkerPIDs(escaped)) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("after SIGKILL of the daemon, pipeline %v and escaped %v still run", proctest.MarkerPIDs(piped), proctest.MarkerPIDs(escaped))
}
