package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// callResult is cline/callTool's answer.
type callResult struct {
	Content string
	IsError bool
}

func callIn(t *testing.T, ctx context.Context, ed *rpctest.Editor, params map[string]any) callResult {
	t.Helper()
	var res callResult
	if err := ed.Call(ctx, "cline/callTool", params, &res); err != nil {
		t.Fatalf("cline/callTool %v: %v", params["name"], err)
	}
	return res
}

// askCounter answers window/showMessageRequest with one title and counts
// the questions.
func askCounter(ed *rpctest.Editor, title string) *atomic.Int32 {
	var n atomic.Int32
	ed.Handle("window/showMessageRequest", func(context.Context, json.RawMessage) (any, error) {
		n.Add(1)
		return map[string]any{"title": title}, nil
	})
	return &n
}

// TestCallToolRunsInItsSession: an editor call that names a session takes
// that session's mode, folder, rules and redaction — the path the model's
// calls take. Each case failed while cline/callTool had a tool host of its
// own.
func TestCallToolRunsInItsSession(t *testing.T) {
	const key = "sk-planted-callTool-0123456789"
	t.Setenv("TEST_API_KEY", key)
	ctx := testCtx(t)
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	ed := rpctest.New(t, rpc.Options{Getenv: os.Getenv})
	asked := askCounter(ed, "Always allow")
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:1/v1", "apiKeyEnv": "TEST_API_KEY"},
		"stateDir": t.TempDir(),
	}})

	t.Run("plan mode refuses edits", func(t *testing.T) {
		var created struct{ SessionID string }
		if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "plan"}, &created); err != nil {
			t.Fatal(err)
		}
		res := callIn(t, ctx, ed, map[string]any{"sessionId": created.SessionID, "name": "editor",
			"arguments": map[string]any{"path": "a.txt", "old_text": "one", "new_text": "two"}})
		if !res.IsError || !strings.Contains(res.Content, "plan mode") {
			t.Errorf("an edit in a plan-mode session was not refused: %+v", res)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\n" {
			t.Errorf("the file changed: %q", b)
		}
		res = callIn(t, ctx, ed, map[string]any{"sessionId": created.SessionID, "name": "run_commands",
			"arguments": map[string]any{"commands": []string{"touch " + filepath.Join(root, "made")}}})
		if !res.IsError || !strings.Contains(res.Content, "plan mode") {
			t.Errorf("a file-changing command in plan mode was not refused: %+v", res)
		}
		if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
			t.Errorf("the command ran")
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("refused calls were asked about %d times", n)
		}
	})

	t.Run("the session's folder", func(t *testing.T) {
		id := newSessionIn(t, ctx, ed, sub)
		res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "write_to_file",
			"arguments": map[string]any{"path": "bar.md", "content": "hi\n"}})
		if res.IsError {
			t.Fatalf("write failed: %s", res.Content)
		}
		if _, err := os.Stat(filepath.Join(sub, "bar.md")); err != nil {
			t.Errorf("bar.md was not written in the session's folder: %v", err)
		}
		if _, err := os.Stat(filepath.Join(root, "bar.md")); err == nil {
			t.Errorf("bar.md was written one level up")
		}
	})

	t.Run("always rules and redaction", func(t *testing.T) {
		id := newSessionIn(t, ctx, ed, root)
		before := asked.Load()
		// The key comes from a file: a command's environment has no keys,
		// so echoing the variable would print nothing to redact.
		os.WriteFile(filepath.Join(root, "key.txt"), []byte(key+"\n"), 0o644)
		for i := 0; i < 2; i++ {
			res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "run_commands",
				"arguments": map[string]any{"commands": []string{"cat key.txt"}}})
			if res.IsError || strings.Contains(res.Content, key) || !strings.Contains(res.Content, "[redacted]") {
				t.Errorf("call %d: want the key's line redacted in the output: %+v", i+1, res)
			}
		}
		if n := asked.Load() - before; n != 1 {
			t.Errorf("asked %d times; the first answer was always allow", n)
		}
		for _, m := range ed.Messages("") {
			if strings.Contains(string(m.Params), key) {
				t.Errorf("%s carries the key", m.Method)
			}
		}
	})
}

// TestSettingsChangeReachesSessions: a provider change takes that
// provider's key variable (the first settings' value was written through
// to the client's own copy before), null clears a value, and approvals
// changed later apply to sessions already running.
func TestSettingsChangeReachesSessions(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(string) string { return "" }})
	asked := askCounter(ed, "Allow")
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "anthropic", "model": "claude-sonnet-4-5"}, "stateDir": t.TempDir(),
	}})
	if got := ed.Server.CurrentSettings().Provider.APIKeyEnv; got != "ANTHROPIC_API_KEY" {
		t.Fatalf("apiKeyEnv = %q", got)
	}
	id := newSessionIn(t, ctx, ed, root)
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"provider":  map[string]any{"name": "openai", "model": nil},
		"approvals": map[string]any{"execute": "deny"},
	}})
	ed.Sync(ctx)
	p := ed.Server.CurrentSettings().Provider
	if p.Name != "openai" || p.APIKeyEnv != "OPENAI_API_KEY" {
		t.Errorf("after switching to openai: name %q, apiKeyEnv %q", p.Name, p.APIKeyEnv)
	}
	if p.Model != "" {
		t.Errorf("model %q was not cleared by null", p.Model)
	}
	res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "run_commands",
		"arguments": map[string]any{"commands": []string{"echo hi"}}})
	if !res.IsError || !strings.Contains(res.Content, "approvals.execute is deny") || asked.Load() != 0 {
		t.Errorf("execute: deny did not reach the running session: %+v, asked %d", res, asked.Load())
	}
}

// TestBadConfigFileIsReported: a config file that does not parse is
// ignored with a message to the user, not silently.
func TestBadConfigFileIsReported(t *testing.T) {
	ctx := testCtx(t)
	cfgDir := t.TempDir()
	os.MkdirAll(filepath.Join(cfgDir, "cline-ls"), 0o755)
	os.WriteFile(filepath.Join(cfgDir, "cline-ls", "config.json"), []byte(`{"mode": "act",`), 0o644)
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfgDir
		}
		return ""
	}})
	ed.Initialize(ctx, t.TempDir(), nil)
	m, err := ed.Await(ctx, "window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "config.json") })
	if err != nil {
		t.Fatalf("no message about the bad config file: %v", err)
	}
	if !strings.Contains(string(m.Params), "not valid JSON") {
		t.Errorf("the message does not say what is wrong: %s", m.Params)
	}
}

// TestSecondInitializeRefused: initialize is answered once per connection;
// a second one is refused as an invalid request and changes nothing (the
// folders stay the first one's).
func TestSecondInitializeRefused(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	first, second := t.TempDir(), t.TempDir()
	if _, err := ed.Initialize(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	_, err := ed.Initialize(ctx, second, nil)
	if err == nil {
		t.Fatal("a second initialize was accepted")
	}
	if c := codeOf(t, err); c != -32600 || !strings.Contains(err.Error(), "already received") {
		t.Errorf("second initialize: %d %v, want -32600 saying initialize was already received", c, err)
	}
	if got := ed.Server.Folders().Paths(); len(got) != 1 || got[0] != first {
		t.Errorf("folders after a refused second initialize = %q, want only %q", got, first)
	}
}

// TestCancelDoesNotWaitForAnotherSessionsDialog: with one
// window/showMessageRequest open for session A, session B waiting to ask
// is cancelled at once, and A's dialog is told to close with
// $/cancelRequest when A is cancelled.
func TestCancelDoesNotWaitForAnotherSessionsDialog(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{})
	opened := make(chan struct{}, 4)
	release := make(chan struct{}) // the user never answers until the end
	defer close(release)
	ed.Handle("window/showMessageRequest", func(context.Context, json.RawMessage) (any, error) {
		opened <- struct{}{}
		<-release
		return nil, nil
	})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{"stateDir": t.TempDir()}})
	a, b := newSessionIn(t, ctx, ed, root), newSessionIn(t, ctx, ed, root)
	run := func(id string, done chan<- callResult) {
		var res callResult
		ed.Call(ctx, "cline/callTool", map[string]any{"sessionId": id, "name": "run_commands",
			"arguments": map[string]any{"commands": []string{"echo " + id}}}, &res)
		done <- res
	}
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s", what)
		}
	}
	doneA, doneB := make(chan callResult, 1), make(chan callResult, 1)
	go run(a, doneA)
	wait("A's dialog", opened)
	go run(b, doneB)
	// Once B's call has been described it waits for A's dialog to close.
	if _, err := ed.Await(ctx, "session/update", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"sessionId":"`+b+`"`) && strings.Contains(string(p), "tool_call_update")
	}); err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": b})
	select {
	case res := <-doneB:
		if !res.IsError {
			t.Errorf("B ran after its cancel: %+v", res)
		}
	case <-ctx.Done():
		t.Fatal("cancelling B waited for A's dialog")
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": a})
	select {
	case <-doneA:
	case <-ctx.Done():
		t.Fatal("A's call did not end after its cancel")
	}
	dialogs := ed.Messages("window/showMessageRequest")
	if len(dialogs) != 1 {
		t.Fatalf("%d dialogs opened, want A's only", len(dialogs))
	}
	m, err := ed.Await(ctx, "$/cancelRequest", nil)
	if err != nil {
		t.Fatalf("A's open dialog was not cancelled: %v", err)
	}
	// The cancel names A's dialog by its request id.
	var got struct{ ID json.RawMessage }
	json.Unmarshal(m.Params, &got)
	if string(got.ID) != string(dialogs[0].ID) {
		t.Errorf("$/cancelRequest %s, want the id of A's dialog, %s", m.Params, dialogs[0].ID)
	}
}

// TestEditThatCannotApplyIsNotAskedAbout: an edit whose text is not in the
// file fails with the reason before the user is asked (before, the user
// was shown an approval with no diff, and Allow then failed).
func TestEditThatCannotApplyIsNotAskedAbout(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	ed := rpctest.New(t, rpc.Options{})
	asked := askCounter(ed, "Allow")
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{"stateDir": t.TempDir()}})
	id := newSessionIn(t, ctx, ed, root)
	for _, c := range []struct {
		name   string
		args   map[string]any
		reason string
	}{
		{"editor", map[string]any{"path": "a.txt", "old_text": "two", "new_text": "three"}, "text not found in a.txt"},
		{"replace_in_file", map[string]any{"path": "a.txt", "diff": "------- SEARCH\ntwo\n=======\nthree\n+++++++ REPLACE\n"}, "matches nothing in the file"},
	} {
		res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": c.name, "arguments": c.args})
		if !res.IsError || !strings.Contains(res.Content, c.reason) {
			t.Errorf("%s: %+v, want an error saying %q", c.name, res, c.reason)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the user was asked %d times about edits that cannot apply", n)
	}
}

// TestCommandsNeverSeeTheModelKey: the variable the settings name for
// the key is kept out of commands' environment, whatever its name, so no
// transformation of it (rev, base64, cut) reaches the model or the editor.
func TestCommandsNeverSeeTheModelKey(t *testing.T) {
	const key = "sk-planted-in-MYKEYVAR-0123456789"
	t.Setenv("MYKEYVAR", key)
	ctx := testCtx(t)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: os.Getenv})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider":  map[string]any{"name": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:1/v1", "apiKeyEnv": "MYKEYVAR"},
		"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir(),
	}})
	id := newSessionIn(t, ctx, ed, root)
	res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "run_commands",
		"arguments": map[string]any{"commands": []string{"printenv MYKEYVAR | rev; echo done"}}})
	rev := []rune(key)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if strings.Contains(res.Content, string(rev)) || !strings.Contains(res.Content, "done") {
		t.Errorf("the command saw the key: %s", res.Content)
	}
}

// TestEveryOutgoingShapeIsRedacted: a key in a tool's arguments reaches
// no message to the client (tool_call rawInput, the approval's preview
// and arguments, cline/diff, the result), while the edit itself keeps it:
// the file on disk and the open buffer get the real text.
func TestEveryOutgoingShapeIsRedacted(t *testing.T) {
	const key = "sk-planted-shapes-0123456789abcdef"
	t.Setenv("TEST_API_KEY", key)
	ctx := testCtx(t)
	for _, viaCline := range []bool{true, false} {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "open.env"), []byte("KEY=old\n"), 0o644)
		ed := rpctest.New(t, rpc.Options{Getenv: os.Getenv})
		var caps map[string]any
		if viaCline {
			caps = map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true, "diffs": true}},
				"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
				"window":    map[string]any{"showMessage": map[string]any{}}}
		}
		askCounter(ed, "Allow")
		params := map[string]any{"initializationOptions": map[string]any{
			"provider": map[string]any{"name": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:1/v1", "apiKeyEnv": "TEST_API_KEY"},
			"stateDir": t.TempDir()}}
		if caps != nil {
			params["capabilities"] = caps
		}
		ed.Initialize(ctx, root, params)
		if viaCline {
			go func() {
				answered := map[string]bool{}
				for {
					m, err := ed.Await(ctx, "cline/approvalRequest", func(p json.RawMessage) bool {
						var a struct{ ApprovalID string }
						json.Unmarshal(p, &a)
						return !answered[a.ApprovalID]
					})
					if err != nil {
						return
					}
					var p struct{ ApprovalID string }
					json.Unmarshal(m.Params, &p)
					answered[p.ApprovalID] = true
					ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": p.ApprovalID,
						"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
				}
			}()
		}
		openURI := workspace.PathToURI(filepath.Join(root, "open.env"))
		ed.Open(ctx, openURI, "KEY=old\n")
		id := newSessionIn(t, ctx, ed, root)
		res := callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "write_to_file",
			"arguments": map[string]any{"path": "new.env", "content": "KEY=" + key + "\n"}})
		if res.IsError {
			t.Fatalf("write: %s", res.Content)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "new.env")); string(b) != "KEY="+key+"\n" {
			t.Errorf("the file on disk lost its key: %q", b)
		}
		if viaCline {
			res = callIn(t, ctx, ed, map[string]any{"sessionId": id, "name": "editor",
				"arguments": map[string]any{"path": "open.env", "old_text": "KEY=old", "new_text": "KEY=" + key}})
			if res.IsError {
				t.Fatalf("edit: %s", res.Content)
			}
			if got, _, _ := ed.Text(openURI); got != "KEY="+key+"\n" {
				t.Errorf("the open buffer lost its key: %q", got)
			}
		}
		for _, m := range ed.Messages("") {
			if m.Method == "workspace/applyEdit" {
				continue
			}
			if strings.Contains(string(m.Params), key) {
				t.Errorf("cline approvals %v: %s carries the key: %.200s", viaCline, m.Method, m.Params)
			}
		}
	}
}
