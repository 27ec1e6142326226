//go:build linux

package rpc_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestSandboxLevelWholeDaemon: at approvals.level sandbox a session's
// commands run without a single approval, under each backend; a write
// outside the workspace and a read of a planted key fail, and the model
// is told the sandbox may be why; its rerun with sandbox: false asks the
// user, who refuses.
func TestSandboxLevelWholeDaemon(t *testing.T) {
	t.Parallel()
	for _, b := range []sandbox.Backend{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(string(b), func(t *testing.T) {
			if st := sandbox.Detect(b, ""); st.Backend != b {
				if b == sandbox.BackendBwrap {
					testenv.Missing(t, "bubblewrap cannot run here (%s); apt-get install bubblewrap", st.Detail)
				}
				t.Skipf("no %s: %s", b, st.Detail)
			}
			sandboxLevelSession(t, string(b))
		})
	}
}

func sandboxLevelSession(t *testing.T, backend string) {
	ctx := testCtx(t)
	root := t.TempDir()
	home := t.TempDir()
	var rnd [6]byte
	rand.Read(rnd[:])
	secret := "KEY-" + hex.EncodeToString(rnd[:])
	outside := "/tmp/outside-" + hex.EncodeToString(rnd[:])
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte(secret), 0o600)
	os.WriteFile(filepath.Join(root, "calc_test.sh"), []byte("#!/bin/sh\n[ $((2+2)) -eq 4 ] && echo PASS\n"), 0o755)

	yes, no := true, false
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []string{
			"sh calc_test.sh > test.log && cat test.log", "mkdir -p build && echo bin > build/out && ls build",
		}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "PASS", "last_tool_result_is_error": &no},
			"events": []any{call("c2", "run_commands", map[string]any{"commands": []string{"touch " + outside, "cat " + key}})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "sandbox: false", "last_tool_result_is_error": &yes},
			"events": []any{call("c3", "run_commands", map[string]any{"commands": []string{"touch " + outside}, "sandbox": false})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "denied by the user"},
			"events": []any{text("Tests pass; the write outside stays undone.")}},
	)
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}})
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}},
		"workspace": map[string]any{"applyEdit": true}, "window": map[string]any{"showMessage": map[string]any{}}}
	if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"level": "sandbox"}, "sandbox": map[string]any{"backend": backend}}}); err != nil {
		t.Fatal(err)
	}
	answered := make(chan json.RawMessage, 1)
	go func() {
		m, err := ed.Await(ctx, "cline/approvalRequest", nil)
		if err != nil {
			t.Error(err)
			close(answered)
			return
		}
		var req struct{ ApprovalID string }
		json.Unmarshal(m.Params, &req)
		ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
			"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil)
		answered <- m.Params
	}()
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "run the tests"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	asked := <-answered
	if n := len(ed.Messages("cline/approvalRequest")); n != 1 || !strings.Contains(string(asked), `"sandbox":false`) {
		t.Errorf("%d approvals asked (%s); want only the rerun outside the sandbox", n, asked)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "build", "out")); string(data) != "bin\n" {
		t.Errorf("the workspace write from the sandbox = %q", data)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		os.Remove(outside)
		t.Errorf("%s was written", outside)
	}
	all, _ := json.Marshal(updates(ed, id))
	if strings.Contains(string(all), secret) {
		t.Error("the planted key reached the session's updates")
	}
}

// TestSandboxLevelWithoutSandboxAsks: when the sandbox level is set and
// nothing can confine commands (bubblewrap forced and not on PATH), the
// user is told once, and commands ask as at the ask level.
func TestSandboxLevelWithoutSandboxAsks(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	t.Setenv("PATH", t.TempDir()+":/usr/bin:/bin")
	if sandbox.Detect(sandbox.BackendBwrap, os.Getenv("PATH")).Backend != sandbox.BackendNone {
		// /usr/bin holds bubblewrap here: hide it behind an empty PATH.
		t.Setenv("PATH", t.TempDir())
	}
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []string{"/bin/echo hi"}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "denied by the user"},
			"events": []any{text("Not run.")}},
	)
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}},
		"workspace": map[string]any{"applyEdit": true}, "window": map[string]any{"showMessage": map[string]any{}}}
	ed := rpctest.New(t, rpc.Options{})
	if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"level": "sandbox"}, "sandbox": map[string]any{"backend": "bwrap"}}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		m, err := ed.Await(ctx, "cline/approvalRequest", nil)
		if err != nil {
			return
		}
		var req struct{ ApprovalID string }
		json.Unmarshal(m.Params, &req)
		ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
			"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil)
	}()
	id := newSessionIn(t, ctx, ed, root)
	newSessionIn(t, ctx, ed, root) // a second session is not told again
	if stop, err := promptText(ctx, ed, id, "say hi"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	if n := len(ed.Messages("cline/approvalRequest")); n != 1 {
		t.Errorf("%d approvals asked, want the command's", n)
	}
	told := 0
	for _, m := range ed.Messages("window/showMessage") {
		if strings.Contains(string(m.Params), "no sandbox is available") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times that no sandbox is available, want once", told)
	}
}

// TestACPSandboxLevel: an ACP session whose approval option is set to
// sandbox runs its commands without a permission request, confined: the
// workspace write lands, the write outside does not.
func TestACPSandboxLevel(t *testing.T) {
	if st := sandbox.Detect(sandbox.BackendAuto, ""); st.Backend == sandbox.BackendNone {
		testenv.Missing(t, "no sandbox here (%s); apt-get install bubblewrap", st.Detail)
	}
	ctx := testCtx(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	os.MkdirAll(root, 0o755)
	var rnd [6]byte
	rand.Read(rnd[:])
	outside := "/tmp/outside-" + hex.EncodeToString(rnd[:])
	no := false
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []string{"echo in > inside.txt", "touch " + outside}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "[sandbox:"},
			"events": []any{call("c2", "run_commands", map[string]any{"commands": []string{"cat inside.txt"}})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "in", "last_tool_result_is_error": &no},
			"events": []any{text("Done.")}},
	)
	env := map[string]string{"CLINE_LS_PROVIDER": "replay", "CLINE_LS_TRANSCRIPT": tr,
		"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	c := inProcessACP(t, ctx, env)
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &s)
	if _, err := c.Call(ctx, "session/set_config_option", map[string]any{"sessionId": s.SessionID, "configId": "approvals", "value": "sandbox"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "write"}}}); err != nil {
		t.Fatal(err)
	}
	if n := c.Permissions(); n != 0 {
		t.Errorf("%d permission requests at the sandbox level, want none", n)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		os.Remove(outside)
		t.Errorf("%s was written from an ACP session at the sandbox level", outside)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "inside.txt")); string(data) != "in\n" {
		t.Errorf("inside.txt = %q", data)
	}
}
