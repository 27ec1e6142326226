package rpc_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc"
)

// TestMain lets the test binary serve as a daemon process: with
// CLINE_LS_TEST_DAEMON=1 it serves stdio like cline-ls does, so tests can
// kill a real process.
func TestMain(m *testing.M) {
	if os.Getenv("CLINE_LS_TEST_DAEMON") == "1" {
		code, _ := rpc.NewServer(rpc.Options{Getenv: os.Getenv}).Serve(context.Background(), bufio.NewReader(os.Stdin), os.Stdout)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// daemon is a daemon process and a client connection to it.
type daemon struct {
	cmd *exec.Cmd
	*jsonrpcclient.Client
}

func startDaemon(t *testing.T, env ...string) *daemon {
	t.Helper()
	return startDaemonCmd(t, exec.Command(os.Args[0]), env...)
}

// startDaemonCmd is startDaemon with the command that runs the test
// binary given (a wrapper that sets limits, say).
func startDaemonCmd(t *testing.T, cmd *exec.Cmd, env ...string) *daemon {
	t.Helper()
	cmd.Env = append(os.Environ(), append(env, "CLINE_LS_TEST_DAEMON=1")...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, Client: jsonrpcclient.New(out, in, jsonrpcclient.Options{})}
	t.Cleanup(func() {
		d.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return d
}

// TestLoadAfterSIGKILL: a daemon killed mid-turn loses at most the turn in
// flight; the session file still loads in a new daemon, which replays the
// finished turn.
func TestLoadAfterSIGKILL(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	tr := transcript(t,
		reply(text("First answer, kept.")),
		reply(text("Second turn: "), call("c1", "editor", map[string]any{"path": "a.txt", "old_text": "one", "new_text": "two"})),
	)
	init := map[string]any{
		"processId": nil, "rootUri": "file://" + root,
		"capabilities":          map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}},
		"initializationOptions": map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state},
	}
	d := startDaemon(t)
	if err := d.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := d.Call(ctx, "session/new", map[string]any{"cwd": root}, &created); err != nil {
		t.Fatal(err)
	}
	prompt := func(text string) error {
		return d.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}, nil)
	}
	if err := prompt("first question"); err != nil {
		t.Fatal(err)
	}
	// The second turn stops at the approval of its edit: kill it there.
	go prompt("second question")
	deadline := time.Now().Add(20 * time.Second) // failure guard
	for len(d.Messages("cline/approvalRequest")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval request")
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.cmd.Process.Signal(syscall.SIGKILL)
	d.cmd.Wait()

	d2 := startDaemon(t)
	init["initializationOptions"] = map[string]any{"stateDir": state}
	if err := d2.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	if err := d2.Call(ctx, "session/load", map[string]any{"sessionId": created.SessionID, "cwd": root, "mcpServers": []any{}}, nil); err != nil {
		t.Fatalf("session/load after SIGKILL: %v", err)
	}
	var replayed strings.Builder
	for _, m := range d2.Messages("session/update") {
		replayed.Write(m.Params)
	}
	if !strings.Contains(replayed.String(), "first question") || !strings.Contains(replayed.String(), "First answer, kept.") {
		t.Fatalf("replayed history lacks the finished turn: %s", replayed.String())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\n" {
		t.Fatalf("the unapproved edit reached the disk: %q", b)
	}
}
