//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
)

// TestBackgroundCommandsEndWithTheDaemon runs the real binary on a
// replayed turn that starts a background command, and expects the
// command gone when the daemon finishes its work and exits, and when it
// is killed with SIGKILL while a later command runs.
func TestBackgroundCommandsEndWithTheDaemon(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "cline-ls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
			tpath := filepath.Join(t.TempDir(), "transcript.json")
			if err := os.WriteFile(tpath, []byte(transcript), 0o600); err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			daemon := exec.Command(bin, "exec", "--provider", "replay", "--transcript", tpath, "--approve", "allow", "start the server")
			daemon.Dir = work
			daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
			var out bytes.Buffer
			daemon.Stdout, daemon.Stderr = &out, &out
			if err := daemon.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, n := range []int{bg, busy} {
					for _, pid := range proctest.MarkerPIDs(n) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}()
			if end == "SIGKILL" {
				running := false
				for range 500 { // a failure guard of 10 s
					if len(proctest.MarkerPIDs(bg)) > 0 && len(proctest.MarkerPIDs(busy)) > 0 {
						running = true
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !running {
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
			for range 200 { // at most 10 s
				if len(proctest.MarkerPIDs(bg))+len(proctest.MarkerPIDs(busy)) == 0 {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Errorf("after the daemon's %s, background %v and foreground %v still run", end, proctest.MarkerPIDs(bg), proctest.MarkerPIDs(busy))
		})
	}
}
