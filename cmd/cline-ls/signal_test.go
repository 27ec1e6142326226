//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// startServe starts `bin serve` in a workspace of its own and returns it
// with a client on its stdio and its log.
func startServe(t *testing.T, bin string) (*exec.Cmd, *jsonrpcclient.Client, *lockedBuffer, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	daemon := exec.Command(bin, "serve")
	daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stdin, err := daemon.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	daemon.Stderr = logs
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	c := jsonrpcclient.New(stdout, stdin, jsonrpcclient.Options{Discard: true})
	t.Cleanup(func() { c.Close() })
	return daemon, c, logs, ws
}

// waitExit waits (a failure guard of 20 s) for the daemon to end.
func waitExit(t *testing.T, daemon *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- daemon.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not exit within 20 s of SIGTERM")
		return nil
	}
}

// TestSIGTERMAfterInitializeEndsGracefully: once a message has followed
// initialize, SIGTERM ends serving the graceful way (sessions flushed,
// children stopped, a normal exit), although the daemon no longer catches
// signals from its first instruction on.
func TestSIGTERMAfterInitializeEndsGracefully(t *testing.T) {
	bin := testbin.CLI(t)
	for _, second := range []string{"initialized", "cline.newSession"} {
		t.Run(second, func(t *testing.T) {
			daemon, c, logs, ws := startServe(t, bin)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := c.Call(ctx, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}, nil); err != nil {
				t.Fatal(err)
			}
			if second == "initialized" {
				if err := c.Notify(ctx, "initialized", map[string]any{}); err != nil {
					t.Fatal(err)
				}
			} else if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.newSession", "arguments": []any{}}, nil); err != nil {
				t.Fatal(err)
			}
			// The notification has no answer: wait until the daemon has
			// read it, i.e. until a request sent behind it is answered.
			if err := c.Call(ctx, "cline/tools", map[string]any{"format": "openai"}, nil); err != nil {
				t.Fatal(err)
			}
			daemon.Process.Signal(syscall.SIGTERM)
			err := waitExit(t, daemon)
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				t.Fatalf("exit after SIGTERM: %v, want a normal exit; logs:\n%s", err, logs.String())
			} else if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "ending on a signal") {
				t.Errorf("no graceful end in the logs:\n%s", logs.String())
			}
		})
	}
}

// TestSIGTERMUntilAMessageFollowsInitializeKills: until a message has
// followed initialize there is nothing to save, and SIGTERM takes its
// default action: the process ends at once, killed by the signal.
func TestSIGTERMUntilAMessageFollowsInitializeKills(t *testing.T) {
	bin := testbin.CLI(t)
	daemon, c, logs, ws := startServe(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Call(ctx, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	daemon.Process.Signal(syscall.SIGTERM)
	err := waitExit(t, daemon)
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("exit after SIGTERM: %v, want the process killed by it; logs:\n%s", err, logs.String())
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("exit after SIGTERM: %v, want killed by SIGTERM", err)
	}
}
