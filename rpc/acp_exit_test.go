//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testbin"
)

// TestACPTerminalsReleasedAtExit: a daemon that ends while commands run in
// the TypeScript SDK client's terminals, two sessions' worth, releases
// each terminal before it goes, whether its stdin closes (the editor gone)
// or it gets SIGTERM: the client gets a terminal/release for both (which
// kills their commands), none is left open and no command still runs.
func TestACPTerminalsReleasedAtExit(t *testing.T) {
	t.Parallel()
	node := acpClientsNode(t)
	daemon := testbin.CLI(t)
	script, _ := filepath.Abs(filepath.Join(acpClientsDir, "sdk-terminal.mjs"))
	tr := transcript(t,
		map[string]any{"expect": map[string]any{"last_user_contains": "run the server"},
			"events": []any{call("c1", "run_commands", map[string]any{"commands": []string{"sleep 300"}, "timeout": 600})}},
		reply(text("Stopped.")),
	)
	for _, mode := range []string{"stdin", "sigterm"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure guard
			defer cancel()
			dir := t.TempDir()
			home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
			os.MkdirAll(home, 0o755)
			os.MkdirAll(cwd, 0o755)
			cmd := exec.CommandContext(ctx, node, script, daemon, cwd, filepath.Join(dir, "record.jsonl"), tr, mode)
			cmd.Env = clientEnv(home, "CLINE_LS_MODE=yolo", "SHELL=/bin/sh")
			cmd.Dir = filepath.Dir(script)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("sdk-terminal.mjs %s: %v\n%s", mode, err, out)
			}
			var sum struct {
				Requests [][2]string
				Open     []string
				Running  []int
				Exit     int
				ExitMs   int
			}
			if err := json.Unmarshal(out, &sum); err != nil {
				t.Fatalf("summary %q: %v", out, err)
			}
			var released []string
			for _, r := range sum.Requests {
				if r[0] == "release" {
					released = append(released, r[1])
				}
			}
			slices.Sort(released)
			if !slices.Equal(released, []string{"term-1", "term-2"}) || len(sum.Open) != 0 || len(sum.Running) != 0 {
				t.Errorf("requests %v: released %v, left open %v, still running %v; want both released", sum.Requests, released, sum.Open, sum.Running)
			}
			t.Logf("the daemon exited with %d, %d ms after its end began", sum.Exit, sum.ExitMs)
		})
	}
}
