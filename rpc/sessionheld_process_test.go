//go:build unix

package rpc_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// TestSessionHeldAcrossProcesses: two daemon processes on one state
// directory (XDG_STATE_HOME), window A over LSP, window B over ACP.
// B's session/load of A's session is refused with -32002 naming A's
// process; once A is killed (SIGKILL: nothing of it runs to let go) the
// kernel drops its lock and B loads the session.
func TestSessionHeldAcrossProcesses(t *testing.T) {
	ctx := testCtx(t)
	root, xdg := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	env := "XDG_STATE_HOME=" + xdg

	a := startDaemon(t, env)
	init := map[string]any{"processId": nil, "rootUri": "file://" + root, "capabilities": map[string]any{}}
	if err := a.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := a.Call(ctx, "session/new", map[string]any{"cwd": root}, &created); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(xdg, "cline-ls", "sessions", created.SessionID+".jsonl")); err != nil {
		t.Fatalf("window A's session file: %v", err)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env, "CLINE_LS_TEST_DAEMON=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := jsonrpcclient.New(out, in, jsonrpcclient.Options{Framing: jsonrpcclient.ACP})
	t.Cleanup(func() {
		b.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if err := b.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	load := map[string]any{"sessionId": created.SessionID, "cwd": root, "mcpServers": []any{}}
	err := b.Call(ctx, "session/load", load, nil)
	var re *jsonrpc2.Error
	if !errors.As(err, &re) || re.Code != -32002 {
		t.Fatalf("window B's session/load of A's session: %v, want -32002", err)
	}
	var data struct{ HeldBy int }
	if json.Unmarshal(re.Data, &data); data.HeldBy != a.cmd.Process.Pid {
		t.Errorf("data %s, want heldBy %d (window A's process)", re.Data, a.cmd.Process.Pid)
	}

	a.cmd.Process.Kill()
	a.cmd.Wait()
	if err := b.Call(ctx, "session/load", load, nil); err != nil {
		t.Fatalf("window B's session/load once A is gone: %v", err)
	}
}
