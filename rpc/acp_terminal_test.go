//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// lockedBuffer is a buffer the daemon's goroutines may write while the
// test reads it (the daemon's output as the client read it, its logs).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTerminalClient starts the daemon as its own process, so that a
// command it ran itself has the daemon, not the test, as its parent, and
// connects an rpctest.ACPClient that offers terminals; wire and sent hold
// what each side wrote, for the schema.
func startTerminalClient(t *testing.T, env []string) (c *rpctest.ACPClient, wire *lockedBuffer, wireMu *sync.Mutex, sent *teeWriter) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(env, "CLINE_LS_TEST_DAEMON=1")...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wire = &lockedBuffer{}
	sent = &teeWriter{w: stdin}
	c = rpctest.NewACPClient(io.TeeReader(out, wire), sent)
	t.Cleanup(func() {
		stdin.Close()
		<-c.Done()
		cmd.Wait()
		if err := c.Err(); err != nil {
			t.Error(err)
		}
	})
	// wire locks itself: checkWire's lock is another.
	return c, wire, &sync.Mutex{}, sent
}

func acpStart(t *testing.T, ctx context.Context, c *rpctest.ACPClient, root string, terminal bool) string {
	t.Helper()
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"terminal": terminal}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(r, &sess)
	return sess.SessionID
}

func acpPrompt(ctx context.Context, c *rpctest.ACPClient, id, prompt string) (string, error) {
	r, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": id,
		"prompt": []any{map[string]any{"type": "text", "text": prompt}}})
	var res struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(r, &res)
	return res.StopReason, err
}

// TestACPCommandsInClientTerminal: a client that offers terminals gets
// run_commands' command through terminal/create (the shell, the session's
// folder, the pager settings and the key blanked in env, an output
// limit), waited for, read and released; it runs as the client's child,
// its output reaches the model, and the tool call's updates embed the
// terminal through to the final one. A client that does not offer
// terminals gets none. Every message validates against the ACP schema.
func TestACPCommandsInClientTerminal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard only
	defer cancel()
	command := "echo out-$((6*7)); echo ppid=$PPID; echo key=${OPENAI_API_KEY:-none}"
	for _, offer := range []bool{true, false} {
		t.Run(fmt.Sprintf("terminal=%v", offer), func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "sk-test-not-for-commands") // the client's and the daemon's environment alike
			parent := "ppid=" + fmt.Sprint(os.Getpid())
			resultHas := parent
			if !offer {
				resultHas = "out-42"
			}
			tr := transcript(t,
				reply(call("c1", "run_commands", map[string]any{"commands": []string{command}})),
				map[string]any{"expect": map[string]any{"last_tool_result_contains": resultHas}, "events": []any{text("Ran it.")}},
			)
			root, state := t.TempDir(), t.TempDir()
			c, wire, wireMu, sent := startTerminalClient(t, []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act",
				"XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + t.TempDir(), "CLINE_LS_TRANSCRIPT=" + tr, "SHELL=/bin/sh"})
			id := acpStart(t, ctx, c, root, offer)
			stop, err := acpPrompt(ctx, c, id, "run it")
			if err != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q, %v", stop, err)
			}
			if c.Permissions() != 1 {
				t.Errorf("%d permission requests, want 1: the policy asks before the terminal is made", c.Permissions())
			}
			reqs := c.Terminals()
			if !offer {
				if len(reqs) != 0 || len(c.Shown()) != 0 {
					t.Fatalf("a client without terminals got %v, shown %v", reqs, c.Shown())
				}
				checkWire(t, acpSchema(t), wire, wireMu, sent, 4)
				return
			}
			var methods []string
			for _, r := range reqs {
				if r.TerminalID != "term-1" {
					t.Errorf("request %v names another terminal", r)
				}
				methods = append(methods, r.Method)
			}
			if want := []string{"terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"}; !slices.Equal(methods, want) {
				t.Errorf("terminal requests = %v, want %v", methods, want)
			}
			specs := c.TerminalSpecs()
			if len(specs) != 1 {
				t.Fatalf("%d terminal/create", len(specs))
			}
			sp := specs[0]
			if sp.SessionID != id || sp.Command != "/bin/sh" || !slices.Equal(sp.Args, []string{"-c", command}) || sp.CWD != root || sp.OutputByteLimit <= 0 {
				t.Errorf("terminal/create params = %+v", sp)
			}
			env := map[string]string{}
			for _, e := range sp.Env {
				env[e.Name] = e.Value
			}
			if v, ok := env["OPENAI_API_KEY"]; !ok || v != "" || env["PAGER"] != "cat" || len(env) > 8 {
				t.Errorf("env = %v, want the key blanked and the pager set, not the daemon's environment", env)
			}
			shown := c.Shown()
			if len(shown) < 2 || shown[0].TerminalID != "term-1" || shown[0].Status != "in_progress" || shown[len(shown)-1].Status != "completed" {
				t.Errorf("terminal content in updates = %v, want it embedded while running and in the final update", shown)
			}
			out := wire.String()
			if strings.Contains(out, "sk-test-not-for-commands") {
				t.Error("the key reached the wire")
			}
			if !strings.Contains(out, "key=none") {
				t.Error("the command saw the key, or its output did not come back")
			}
			checkWire(t, acpSchema(t), wire, wireMu, sent, 8)
		})
	}
}

// TestACPCancelKillsClientTerminal: cancelling the turn while its command
// runs in the client's terminal kills it there at once and still releases
// the terminal.
func TestACPCancelKillsClientTerminal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard only
	defer cancel()
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []string{"echo started; sleep 120"}, "timeout": 600})),
		reply(text("Stopped.")),
	)
	root := t.TempDir()
	c, wire, wireMu, sent := startTerminalClient(t, []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=yolo",
		"XDG_STATE_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "CLINE_LS_TRANSCRIPT=" + tr, "SHELL=/bin/sh"})
	id := acpStart(t, ctx, c, root, true)
	type ended struct {
		stop string
		err  error
	}
	done := make(chan ended, 1)
	go func() {
		stop, err := acpPrompt(ctx, c, id, "run it")
		done <- ended{stop, err}
	}()
	var pid int
	for pid == 0 {
		select {
		case e := <-done:
			t.Fatalf("the turn ended before its command started: %+v", e)
		case <-ctx.Done():
			t.Fatal("no terminal was made")
		case <-time.After(20 * time.Millisecond):
		}
		if len(c.Shown()) > 0 {
			pid = c.TerminalPID("term-1")
		}
	}
	if err := c.Notify("session/cancel", map[string]any{"sessionId": id}); err != nil {
		t.Fatal(err)
	}
	e := <-done
	if e.err != nil || e.stop != "cancelled" {
		t.Fatalf("prompt: %+v, want cancelled", e)
	}
	var methods []string
	for _, r := range c.Terminals() {
		methods = append(methods, r.Method)
	}
	if want := []string{"terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/output", "terminal/release"}; !slices.Equal(methods, want) {
		t.Errorf("terminal requests = %v, want %v", methods, want)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the command (pid %d) still runs", pid)
	}
	checkWire(t, acpSchema(t), wire, wireMu, sent, 6)
}
