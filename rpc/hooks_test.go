package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
)

// blockRmRfHook is a Claude Code hook script as its users write them: the
// command from tool_input, exit 2 and a reason on stderr for rm -rf.
const blockRmRfHook = `#!/bin/bash
cmd=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
if echo "$cmd" | grep -q 'rm -rf'; then
  echo "rm -rf is blocked by the hook" >&2
  exit 2
fi
`

func writeHook(t *testing.T, body string) string {
	t.Helper()
	for _, p := range []string{"bash", "python3"} {
		testenv.LookPath(t, p, "the hook scripts of these tests run with it")
	}
	p := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func hookSetting(event, matcher, command string) map[string]any {
	return map[string]any{event: []any{map[string]any{"matcher": matcher, "hooks": []any{map[string]any{"type": "command", "command": command}}}}}
}

// toolCallTexts is the text content of every tool_call_update of a
// session.
func toolCallTexts(ups []wire.SessionUpdate) string {
	var b strings.Builder
	for _, u := range ups {
		if tc, ok := u.(wire.ToolCallUpdate); ok {
			for _, c := range tc.Content {
				if ci, ok := c.(wire.ContentItem); ok {
					if tb, ok := ci.Content.(wire.TextBlock); ok {
						b.WriteString(tb.Text + "\n")
					}
				}
			}
		}
	}
	return b.String()
}

// TestHookBlocksRmRfWholeDaemon: a PreToolUse hook with Claude Code's
// matcher Bash, from the client's settings, refuses the replayed model's
// rm -rf while the settings allow every command: nothing runs, the model
// sees the hook's reason, the card shows the hook's outcome.
func TestHookBlocksRmRfWholeDaemon(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root := t.TempDir()
	hook := writeHook(t, blockRmRfHook)
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": "touch ran; rm -rf junk"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "a hook refused it: rm -rf is blocked by the hook", "last_tool_result_is_error": true},
			"events": []any{text("Blocked.")}},
	)
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(), "mode": "act",
		"approvals": map[string]any{"execute": "allow"},
		"hooks":     hookSetting("PreToolUse", "Bash", hook)}})
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "clean up"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v (the second reply expects the hook's reason)", stop, err)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Fatal("the command ran")
	}
	if got := toolCallTexts(typedUpdates(t, ed, id)); !strings.Contains(got, "Hook PreToolUse ("+hook+"): blocked: rm -rf is blocked by the hook") {
		t.Fatalf("the card does not show the hook's outcome: %q", got)
	}
}

// TestInvalidHooksSettingIsRefused: a hooks setting with an unknown
// event, a bad matcher or a hook without a command is an invalid-params
// error naming the field, and the daemon goes on serving.
func TestInvalidHooksSettingIsRefused(t *testing.T) {
	ctx := testCtx(t)
	for _, c := range []struct {
		hooks any
		want  string
	}{
		{map[string]any{"PreToolUze": []any{}}, "initializationOptions.hooks.PreToolUze: unknown event"},
		{hookSetting("PreToolUse", "(", "x"), "initializationOptions.hooks.PreToolUse[0].matcher: not a regular expression"},
		{map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command"}}}}}, "initializationOptions.hooks.Stop[0].hooks[0].command: required"},
		{map[string]any{"Stop": "nope"}, "initializationOptions.hooks: expected an array, got string"},
	} {
		ed := rpctest.New(t, rpc.Options{})
		err := ed.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"hooks": c.hooks}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.hooks, err, c.want)
		}
		ed.Initialize(ctx, t.TempDir(), nil) // serving still: this fails the test otherwise
	}
}

// TestProjectHooksRunOnlyWhenTrusted: a folder's .cline/settings.json
// hook runs nothing until the user trusts the folder; the question lists
// the commands and is asked once; "Don't trust" is remembered in the
// state directory, as is "Trust"; trustedFolders in the config file
// trusts without asking.
func TestProjectHooksRunOnlyWhenTrusted(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	hook := writeHook(t, "#!/bin/bash\necho x >> "+marker+"\n")
	os.MkdirAll(filepath.Join(root, ".cline"), 0o755)
	b, _ := json.Marshal(map[string]any{"hooks": hookSetting("UserPromptSubmit", "", hook), "other": "keys are ignored"})
	os.WriteFile(filepath.Join(root, ".cline", "settings.json"), b, 0o644)
	runs := func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "x")
	}
	replies := func(n int) string {
		var rs []any
		for range n {
			rs = append(rs, reply(text("ok")))
		}
		return transcript(t, rs...)
	}
	open := func(state, config, answer string) (*rpctest.Editor, *atomic.Int32, *[]string) {
		ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return config
			}
			return ""
		}})
		var asked atomic.Int32
		var mu sync.Mutex
		var msgs []string
		ed.Handle("window/showMessageRequest", func(_ context.Context, raw json.RawMessage) (any, error) {
			var p struct {
				Message string
				Actions []struct{ Title string }
			}
			json.Unmarshal(raw, &p)
			if !strings.Contains(p.Message, "Trust the hooks of") {
				return nil, nil
			}
			asked.Add(1)
			mu.Lock()
			msgs = append(msgs, p.Message)
			mu.Unlock()
			if answer == "" {
				return nil, nil
			}
			return map[string]any{"title": answer}, nil
		})
		ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
			"provider": map[string]any{"name": "replay", "transcript": replies(2)}, "stateDir": state, "mode": "act"}})
		return ed, &asked, &msgs
	}

	// Dismissed: not run, not remembered.
	state := t.TempDir()
	ed, asked, _ := open(state, t.TempDir(), "")
	id := newSessionIn(t, ctx, ed, root)
	promptText(ctx, ed, id, "hello")
	promptText(ctx, ed, id, "hello")
	if runs() != 0 || asked.Load() != 1 {
		t.Fatalf("dismissed: ran %d, asked %d", runs(), asked.Load())
	}

	ed, asked, msgs := open(state, t.TempDir(), "Don't trust")
	id = newSessionIn(t, ctx, ed, root)
	for range 2 {
		if stop, err := promptText(ctx, ed, id, "hello"); err != nil || stop != "end_turn" {
			t.Fatalf("prompt: %q %v", stop, err)
		}
	}
	if runs() != 0 || asked.Load() != 1 || !strings.Contains((*msgs)[0], "UserPromptSubmit: "+hook) {
		t.Fatalf("untrusted: ran %d, asked %d: %q", runs(), asked.Load(), *msgs)
	}
	// Remembered: a new connection with that state does not ask again.
	ed, asked, _ = open(state, t.TempDir(), "Trust")
	id = newSessionIn(t, ctx, ed, root)
	promptText(ctx, ed, id, "hello")
	if runs() != 0 || asked.Load() != 0 {
		t.Fatalf("after Don't trust: ran %d, asked %d", runs(), asked.Load())
	}

	state = t.TempDir()
	ed, asked, _ = open(state, t.TempDir(), "Trust")
	id = newSessionIn(t, ctx, ed, root)
	promptText(ctx, ed, id, "hello")
	promptText(ctx, ed, id, "hello")
	if runs() != 2 || asked.Load() != 1 {
		t.Fatalf("trusted: ran %d, asked %d", runs(), asked.Load())
	}

	config := t.TempDir()
	os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
	cb, _ := json.Marshal(map[string]any{"trustedFolders": []string{filepath.Dir(root)}})
	os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), cb, 0o644)
	ed, asked, _ = open(t.TempDir(), config, "Don't trust")
	id = newSessionIn(t, ctx, ed, root)
	promptText(ctx, ed, id, "hello")
	if runs() != 3 || asked.Load() != 0 {
		t.Fatalf("trustedFolders: ran %d, asked %d", runs(), asked.Load())
	}
}

// TestHooksOverACP: through the real daemon and the ACP SDK's client, a
// user-level hook from the config file blocks rm -rf, and a project hook
// the user trusts adds context after an edit (its card shows it, the
// model sees it).
func TestHooksOverACP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root, state, config := t.TempDir(), t.TempDir(), t.TempDir()
	block := writeHook(t, blockRmRfHook)
	vet := writeHook(t, `#!/bin/bash
f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')
python3 -c 'import json,sys; print(json.dumps({"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"checked "+sys.argv[1]}}))' "$f"
`)
	os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
	cb, _ := json.Marshal(map[string]any{"hooks": hookSetting("PreToolUse", "Bash", block)})
	os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), cb, 0o644)
	os.MkdirAll(filepath.Join(root, ".cline"), 0o755)
	pb, _ := json.Marshal(map[string]any{"hooks": hookSetting("PostToolUse", "Edit|Write", vet)})
	os.WriteFile(filepath.Join(root, ".cline", "settings.json"), pb, 0o644)
	path := filepath.Join(root, "a.txt")
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []string{"rm -rf " + root}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "rm -rf is blocked by the hook"},
			"events": []any{call("c2", "write_to_file", map[string]any{"path": "a.txt", "content": "new\n"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "checked " + path},
			"events": []any{text("Done.")}},
	)
	c := &acpClient{files: map[string]string{}, answer: "allow_always"}
	conn, _, _, _ := acpDaemon(t, c, "CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act", "XDG_STATE_HOME="+state,
		"XDG_CONFIG_HOME="+config, "CLINE_LS_TRANSCRIPT="+tr)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("tidy up")}})
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v (the replies expect the hooks' words)", res, err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatal("rm -rf ran")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var trustAsked bool
	for _, p := range c.permissions {
		if p.ToolCall.Title != nil && strings.Contains(*p.ToolCall.Title, "Trust the hooks of "+root) {
			trustAsked = true
		}
	}
	if !trustAsked {
		t.Error("the project's hooks ran without the trust question")
	}
	var cards strings.Builder
	for _, u := range c.updates {
		if tc := u.Update.ToolCallUpdate; tc != nil {
			for _, item := range tc.Content {
				if item.Content != nil && item.Content.Content.Text != nil {
					cards.WriteString(item.Content.Content.Text.Text + "\n")
				}
			}
		}
	}
	if got := cards.String(); !strings.Contains(got, "Hook PreToolUse (") || !strings.Contains(got, "blocked: rm -rf is blocked by the hook") ||
		!strings.Contains(got, "Hook PostToolUse (") {
		t.Errorf("cards: %q", got)
	}
}

// TestHostileProjectSettings: a .cline/settings.json that is a symbolic
// link out of the folder, a named pipe, too large or not JSON runs
// nothing, asks nothing, is named to the user once, and the session goes
// on.
func TestHostileProjectSettings(t *testing.T) {
	ctx := testCtx(t)
	marker := filepath.Join(t.TempDir(), "ran")
	hook := writeHook(t, "#!/bin/bash\ntouch "+marker+"\n")
	good, _ := json.Marshal(map[string]any{"hooks": hookSetting("UserPromptSubmit", "", hook)})
	outside := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(outside, good, 0o644)
	for _, c := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"symlink out", func(p string) error { return os.Symlink(outside, p) }, "outside the workspace"},
		{"fifo", func(p string) error { return mkfifo(p) }, "not a regular file"},
		{"too large", func(p string) error {
			return os.WriteFile(p, append(good[:len(good)-1], []byte(`,"pad":"`+strings.Repeat("x", 300<<10)+`"}`)...), 0o644)
		}, "too large"},
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte(`{"hooks":`), 0o644) }, "not valid JSON"},
		{"bad hook", func(p string) error { return os.WriteFile(p, []byte(`{"hooks":{"Nope":[]}}`), 0o644) }, "hooks.Nope: unknown event"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, ".cline"), 0o755)
			if err := c.make(filepath.Join(root, ".cline", "settings.json")); err != nil {
				t.Skip(err)
			}
			ed := rpctest.New(t, rpc.Options{})
			asked := askCounter(ed, "Trust")
			ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
				"provider": map[string]any{"name": "replay", "transcript": transcript(t, reply(text("one")), reply(text("two")))},
				"stateDir": t.TempDir(), "mode": "act"}})
			id := newSessionIn(t, ctx, ed, root)
			for range 2 {
				if stop, err := promptText(ctx, ed, id, "hello"); err != nil || stop != "end_turn" {
					t.Fatalf("prompt: %q %v", stop, err)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the hook ran")
			}
			if asked.Load() != 0 {
				t.Fatalf("asked %d times", asked.Load())
			}
			var told string
			for _, u := range typedUpdates(t, ed, id) {
				if m, ok := u.(wire.AgentMessageChunk); ok {
					if tb, ok := m.Content.(wire.TextBlock); ok && strings.Contains(tb.Text, ".cline/settings.json are ignored") {
						told += tb.Text
					}
				}
			}
			if strings.Count(told, "are ignored") != 1 || !strings.Contains(told, c.want) {
				t.Fatalf("told %q, want one message naming %q", told, c.want)
			}
		})
	}
}

// TestTrustQuestionThroughThePlugin: a client with the plugin's approvals
// is asked about a folder's hooks with cline/approvalRequest offering
// exactly Don't trust and Trust; Trust runs the project's hook (here one
// that refuses every command), on the editor's own calls too.
func TestTrustQuestionThroughThePlugin(t *testing.T) {
	ctx := testCtx(t)
	hook := writeHook(t, "#!/bin/bash\necho 'the project refuses commands' >&2\nexit 2\n")
	b, _ := json.Marshal(map[string]any{"hooks": hookSetting("PreToolUse", "Bash", hook)})
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	ed, root := editWorkspace(t, map[string]string{".cline/settings.json": string(b)},
		map[string]any{"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir()}, caps)
	var options []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		m, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool { return true })
		if err != nil {
			t.Error(err)
			return
		}
		var req struct {
			ApprovalID string
			ToolCall   struct{ Title string }
			Command    string
			Options    []struct{ OptionID, Name string }
		}
		json.Unmarshal(m.Params, &req)
		for _, o := range req.Options {
			options = append(options, o.OptionID+"="+o.Name)
		}
		if !strings.Contains(req.ToolCall.Title, "Trust the hooks of "+root) || req.Command != "PreToolUse: "+hook {
			t.Errorf("question %+v", req)
		}
		if err := ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
			"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}, nil); err != nil {
			t.Error(err)
		}
	}()
	r := callTool(t, ctx, ed, "run_commands", map[string]any{"commands": "touch made"})
	<-done
	if want := "reject_always=Don't trust allow_always=Trust"; strings.Join(options, " ") != want {
		t.Errorf("options %q, want %q", options, want)
	}
	if !r.IsError || !strings.Contains(r.Content, "the project refuses commands") {
		t.Fatalf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
		t.Fatal("the command ran")
	}
}

// TestHooksConfinedWhenTheSettingsSaySo: with sandbox.hooks, a hook runs
// in the sandbox: its write outside the workspace fails, while the same
// hook unconfined writes there (the control).
func TestHooksConfinedWhenTheSettingsSaySo(t *testing.T) {
	t.Parallel()
	for _, confined := range []bool{false, true} {
		t.Run(map[bool]string{false: "unconfined", true: "confined"}[confined], func(t *testing.T) {
			ctx := testCtx(t)
			root, outside := t.TempDir(), t.TempDir()
			mark := filepath.Join(outside, "hook-wrote-here")
			hook := writeHook(t, "#!/bin/bash\ntouch "+mark+"\nexit 0\n")
			tr := transcript(t,
				reply(call("c1", "run_commands", map[string]any{"commands": "true"})),
				reply(text("Done.")),
			)
			opts := map[string]any{
				"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(), "mode": "act",
				"approvals": map[string]any{"execute": "allow"},
				"hooks":     hookSetting("PreToolUse", "Bash", hook)}
			if confined {
				opts["sandbox"] = map[string]any{"hooks": true}
			}
			ed := rpctest.New(t, rpc.Options{})
			ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts})
			id := newSessionIn(t, ctx, ed, root)
			if stop, err := promptText(ctx, ed, id, "go"); err != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, err)
			}
			_, err := os.Stat(mark)
			if confined && err == nil {
				t.Fatal("the confined hook wrote outside the workspace")
			}
			if !confined && err != nil {
				t.Fatalf("the unconfined hook did not run: %v", err)
			}
		})
	}
}
