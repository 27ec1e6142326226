//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
)

// startReplayExec starts `bin exec` on task with the replay model reading
// transcript, every call allowed, in a folder of its own; its output is
// collected in the buffer returned. The processes marked by markers
// (proctest.MarkerPIDs) are killed when the test ends, whatever happened.
func startReplayExec(t *testing.T, bin, transcript, task string, markers ...int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	tpath := filepath.Join(dir, "transcript.json")
	if err := os.WriteFile(tpath, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	daemon := exec.Command(bin, "exec", "--provider", "replay", "--transcript", tpath, "--approve", "allow", task)
	daemon.Dir = work
	daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	var out bytes.Buffer
	daemon.Stdout, daemon.Stderr = &out, &out
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range markers {
			for _, pid := range proctest.MarkerPIDs(n) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return daemon, &out
}

// markedRunning waits until a process of every marker runs, and reports
// whether that came (a failure guard of 10 s).
func markedRunning(markers ...int) bool {
	for range 500 {
		all := true
		for _, n := range markers {
			all = all && len(proctest.MarkerPIDs(n)) > 0
		}
		if all {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// markedGone waits until no process of any marker is left, and reports
// whether that came (at most 10 s).
func markedGone(markers ...int) bool {
	for range 200 {
		left := 0
		for _, n := range markers {
			left += len(proctest.MarkerPIDs(n))
		}
		if left == 0 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
