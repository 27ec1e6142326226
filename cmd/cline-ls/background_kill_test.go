//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// TestBackgroundCommandsEndWithTheDaemon runs the real binary on a
// replayed turn that starts a background command, and expects the
// command gone when the daemon finishes its work and exits, and when it
// is killed with SIGKILL while a later command runs.
func TestBackgroundCommandsEndWithTheDaemon(t *testing.T) {
	bin := testbin.CLI(t)
	for _, end := range []string{"exit", "SIGKILL"} {
		t.Run(end, func(t *testing.T) {
			bg := 8_000_000 + rand.IntN(500_000)*2
			busy := bg + 1
			next := `{"events":[{"text":"It runs."}]}`
			if end == "SIGKILL" {
				next = fmt.Sprintf(`{"events":[{"tool_call":{"id":"c2","name":"run_commands","args":{"commands":["sleep %d"],"timeout":300}}}]}`, busy)
			}
			transcript := fmt.Sprintf(`{"model":"replay","replies":[{"events":[
				{"tool_call":{"id":"c1","name":"run_commands","args":{"commands":["echo up; sleep %d"],"background":true}}}]},
				%s, {"events":[{"text":"Done."}]}]}`, bg, next)
			daemon, out := startReplayExec(t, bin, transcript, "start the server", bg, busy)
			if end == "SIGKILL" {
				if !markedRunning(bg, busy) {
					daemon.Process.Kill()
					daemon.Wait()
					t.Fatalf("the commands never ran; the daemon said:\n%s", out.String())
				}
				daemon.Process.Signal(syscall.SIGKILL)
			}
			err := daemon.Wait()
			if end == "exit" && err != nil {
				t.Fatalf("exec: %v\n%s", err, out.String())
			}
			if end == "exit" && !bytes.Contains(out.Bytes(), []byte("bg1 is running")) {
				t.Fatalf("the background command did not start; the daemon said:\n%s", out.String())
			}
			if markedGone(bg, busy) {
				return
			}
			t.Errorf("after the daemon's %s, background %v and foreground %v still run", end, proctest.MarkerPIDs(bg), proctest.MarkerPIDs(busy))
		})
	}
}
