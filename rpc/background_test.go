//go:build linux

package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// bgMarker is the seconds a test's marked sleep asks for, its own.
func bgMarker() int { return 7_000_000 + rand.IntN(1_000_000) }

// waitMarked waits until the marked process runs (want true) or is gone
// (want false), and reports whether it came to that. It kills by PID
// what is left when it gives up.
func waitMarked(t *testing.T, marker int, want bool) bool {
	t.Helper()
	for range 200 { // a failure guard of 10 s, not a timing assertion
		if (len(proctest.MarkerPIDs(marker)) > 0) == want {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !want {
		for _, pid := range proctest.MarkerPIDs(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return false
}

// TestBackgroundCommandEndsWithItsSession: a background command started
// through the one tool path is read (redacted) and dies with its session,
// whether the session is closed or the editor's own session ends with
// the connection.
func TestBackgroundCommandEndsWithItsSession(t *testing.T) {
	const key = "sk-planted-background-0123456789"
	t.Setenv("BG_TEST_KEY", key)
	ctx := testCtx(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "secret.txt"), []byte(key+"\n"), 0o644)
	ed := rpctest.New(t, rpc.Options{Getenv: os.Getenv})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider":  map[string]any{"name": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:1/v1", "apiKeyEnv": "BG_TEST_KEY"},
		"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir(),
	}})

	t.Run("session close", func(t *testing.T) {
		id := newSessionIn(t, ctx, ed, root)
		marker := bgMarker()
		res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "run_commands", "arguments": map[string]any{
			"commands": []string{fmt.Sprintf("echo ready; cat secret.txt; sleep 1; cat secret.txt; sleep %d", marker)}, "background": true}})
		if res.IsError || !strings.Contains(res.Content, "\nready\n") || !strings.Contains(res.Content, "bg1 is running") {
			t.Fatalf("start: %+v", res)
		}
		if strings.Contains(res.Content, key) || !strings.Contains(res.Content, "[redacted]") {
			t.Errorf("the key's line was not redacted in the result: %s", res.Content)
		}
		if !waitMarked(t, marker, true) {
			t.Fatal("the background command never ran")
		}
		// The key printed again a second later is redacted in a read too.
		redacted := false
		for range 100 { // a failure guard of 5 s
			res = callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "read_command_output", "arguments": map[string]any{"id": "bg1"}})
			if res.IsError || !strings.Contains(res.Content, "bg1 is running") || strings.Contains(res.Content, key) {
				t.Fatalf("read: %+v", res)
			}
			if redacted = strings.Contains(res.Content, "[redacted]"); redacted {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !redacted {
			t.Error("the second line of the key never showed, redacted, in a read")
		}
		if err := ed.Call(ctx, "cline/closeSession", map[string]any{"sessionId": id}, nil); err != nil {
			t.Fatal(err)
		}
		if !waitMarked(t, marker, false) {
			t.Error("the background command outlived its session")
		}
	})

	t.Run("plan mode refuses a writing command", func(t *testing.T) {
		var created struct{ SessionID string }
		if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "plan"}, &created); err != nil {
			t.Fatal(err) // without a session the call would run in the editor's own (act) session
		}
		res := callIn(t, ctx, ed, map[string]any{"sessionId": created.SessionID, "name": "run_commands", "arguments": map[string]any{
			"commands": []string{"touch " + filepath.Join(root, "made")}, "background": true}})
		if !res.IsError || !strings.Contains(res.Content, "plan mode") {
			t.Errorf("a writing background command in plan mode was not refused: %+v", res)
		}
		time.Sleep(100 * time.Millisecond) // a refused command must not run at all; give a wrong one time to show
		if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
			t.Error("the command ran")
		}
	})

	t.Run("connection end", func(t *testing.T) {
		marker := bgMarker()
		res := callIn(t, ctx, ed, map[string]any{"name": "run_commands", "arguments": map[string]any{
			"commands": []string{fmt.Sprintf("echo up; sleep %d", marker)}, "background": true}})
		if res.IsError {
			t.Fatalf("start in the editor's session: %+v", res)
		}
		if !waitMarked(t, marker, true) {
			t.Fatal("the background command never ran")
		}
		ed.Shutdown(ctx)
		if !waitMarked(t, marker, false) {
			t.Error("the editor session's background command outlived the connection")
		}
	})

	for _, m := range ed.Messages("") {
		if strings.Contains(string(m.Params), key) {
			t.Errorf("%s carries the key", m.Method)
		}
	}
}

// TestBackgroundCommandApprovalSaysSo: the approval of a background
// command says that it will run in the background.
func TestBackgroundCommandApprovalSaysSo(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: os.Getenv})
	ed.Handle("window/showMessageRequest", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"title": "Reject"}, nil
	})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{"stateDir": t.TempDir()}})
	id := newSessionIn(t, ctx, ed, root)
	res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "run_commands", "arguments": map[string]any{
		"commands": []string{"npm run dev"}, "background": true}})
	if !res.IsError || !strings.Contains(res.Content, "denied") {
		t.Errorf("a rejected start: %+v, want it denied", res)
	}
	asks := ed.Messages("window/showMessageRequest")
	if len(asks) != 1 || !strings.Contains(string(asks[0].Params), "Run in the background: npm run dev") ||
		!strings.Contains(string(asks[0].Params), "$ npm run dev") {
		t.Errorf("approval requests %v, want one saying the command runs in the background", asks)
	}
}

// TestBackgroundCommandGoneWithTheDaemon: a daemon process that sees its
// input end, or is killed outright, leaves no background command behind.
func TestBackgroundCommandGoneWithTheDaemon(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"stdin EOF", "SIGKILL"} {
		t.Run(end, func(t *testing.T) {
			ctx := testCtx(t)
			root := t.TempDir()
			d := startDaemon(t)
			init := map[string]any{"processId": nil, "rootUri": "file://" + root, "capabilities": map[string]any{},
				"initializationOptions": map[string]any{"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir()}}
			if err := d.Call(ctx, "initialize", init, nil); err != nil {
				t.Fatal(err)
			}
			marker := bgMarker()
			var res callResult
			if err := d.Call(ctx, "cline/callTool", map[string]any{"name": "run_commands", "arguments": map[string]any{
				"commands": []string{fmt.Sprintf("echo up; sleep %d", marker)}, "background": true}}, &res); err != nil {
				t.Fatal(err)
			}
			if res.IsError || !waitMarked(t, marker, true) {
				t.Fatalf("the background command never ran: %+v", res)
			}
			if end == "SIGKILL" {
				d.cmd.Process.Signal(syscall.SIGKILL)
			} else {
				d.Close() // closes the daemon's stdin
			}
			d.cmd.Wait()
			if !waitMarked(t, marker, false) {
				t.Errorf("after %s the background command still runs", end)
			}
		})
	}
}

// TestIdleReleaseSparesRunningBackgroundCommands: a session left alone
// while its dev server runs is in use; a session with nothing running,
// used later than it, is released in the same pass or before.
func TestIdleReleaseSparesRunningBackgroundCommands(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root := t.TempDir()
	logs := newLogWatch()
	ed := rpctest.New(t, rpc.Options{Logger: slog.New(logs), IdleRelease: 300 * time.Millisecond}) // well above the gap between a lookup and the work it starts, under -race on a loaded machine
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir(),
	}})
	server := newSessionIn(t, ctx, ed, root)
	marker := bgMarker()
	res := callIn(t, ctx, ed, map[string]any{"sessionId": server, "name": "run_commands", "arguments": map[string]any{
		"commands": []string{fmt.Sprintf("echo serving; sleep %d", marker)}, "background": true}})
	if res.IsError || !waitMarked(t, marker, true) {
		t.Fatalf("the background command never ran: %+v", res)
	}
	idle := newSessionIn(t, ctx, ed, root) // used after the server's session
	if err := logs.await(ctx, "releasing idle session", "session", idle); err != nil {
		t.Fatal(err)
	}
	if logs.has("releasing idle session", "session", server) {
		t.Error("the session whose background command runs was released as idle")
	}
	if len(proctest.MarkerPIDs(marker)) == 0 {
		t.Error("the background command was killed by the idle release")
	}
	if err := ed.Call(ctx, "cline/closeSession", map[string]any{"sessionId": server}, nil); err != nil {
		t.Fatal(err)
	}
	if !waitMarked(t, marker, false) {
		t.Error("the background command outlived its closed session")
	}
}
