//go:build linux

package session

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/wire"
)

// hookSession is a session on a temporary folder with the real workspace
// and edit tools, /bin/sh for commands, the hooks of cfg run by a real
// hooks.Runner, and the updates it sends kept.
type hookSession struct {
	*Session
	root string
	mu   sync.Mutex
	ups  []wire.SessionUpdate
}

func newHookSession(t *testing.T, mode string, pol PolicyConfig, ap Approver, cfg hooks.Config, prov provider.Provider) *hookSession {
	t.Helper()
	for _, p := range []string{"bash", "python3"} {
		testenv.LookPath(t, p, "the hook scripts of these tests run with it")
	}
	hs := &hookSession{root: t.TempDir()}
	files, err := toolstest.New(hs.root)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := NewPolicy(pol)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := hooks.New(hooks.Options{SessionID: "s1", CWD: hs.root}, hooks.Source{Name: "user", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	bg := tools.NewBackground(0)
	impls := tools.WorkspaceTools(files, tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg))
	maps.Copy(impls, tools.EditTools(files))
	s, err := New(Config{ID: "s1", CWD: hs.root, Mode: mode, Impls: impls, Files: files, Policy: policy, Approver: ap,
		Background: bg, Hooks: runner, Provider: prov,
		Host: testHost{update: func(u wire.SessionUpdate) {
			hs.mu.Lock()
			hs.ups = append(hs.ups, u)
			hs.mu.Unlock()
		}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs.Session = s
	t.Cleanup(func() { s.Close() })
	return hs
}

// texts is every text the session sent: tool call contents and message
// chunks.
func (hs *hookSession) texts() string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var b strings.Builder
	for _, u := range hs.ups {
		switch u := u.(type) {
		case wire.ToolCallUpdate:
			for _, c := range u.Content {
				if tc, ok := c.(wire.ContentItem); ok {
					if tb, ok := tc.Content.(wire.TextBlock); ok {
						b.WriteString(tb.Text + "\n")
					}
				}
			}
		case wire.AgentMessageChunk:
			if tb, ok := u.Content.(wire.TextBlock); ok {
				b.WriteString(tb.Text)
			}
		}
	}
	return b.String()
}

func hookScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func oneHook(event, matcher, command string) hooks.Config {
	return hooks.Config{event: {{Matcher: matcher, Hooks: []hooks.Command{{Type: "command", Command: command}}}}}
}

const blockRmRf = `#!/bin/bash
cmd=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
if echo "$cmd" | grep -q 'rm -rf'; then
  echo "rm -rf is forbidden by the project's hook" >&2
  exit 2
fi
`

// TestPreToolUseHookBlocksWhatThePolicyAllows: a Claude Code script that
// refuses rm -rf (matcher Bash, exit 2) refuses it in every argument shape
// while the settings allow every command; the model is told the hook's
// reason, the card shows the hook's note, and nothing ran.
func TestPreToolUseHookBlocksWhatThePolicyAllows(t *testing.T) {
	for _, args := range []string{
		`{"commands":["touch ran; rm -rf junk"]}`,
		`{"commands":"touch ran; rm -rf junk"}`,
		`{"commands":"[\"ls\", \"touch ran; rm -rf junk\"]"}`,
	} {
		hs := newHookSession(t, tools.ModeAct, PolicyConfig{Approvals: Approvals{Execute: Allow}}, nil, oneHook("PreToolUse", "Bash", hookScript(t, blockRmRf)), nil)
		r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(args))
		if r.State != StateError || !strings.Contains(r.Result.Content, "a hook refused it: rm -rf is forbidden") {
			t.Fatalf("%s: %s %q", args, r.State, r.Result.Content)
		}
		if _, err := os.Stat(filepath.Join(hs.root, "ran")); err == nil {
			t.Fatalf("%s: the command ran", args)
		}
		if got := hs.texts(); !strings.Contains(got, "Hook PreToolUse (") || !strings.Contains(got, "blocked: rm -rf is forbidden") {
			t.Fatalf("%s: the card does not show the hook: %q", args, got)
		}
	}
}

// TestPlanModeRefusesBeforeAnyHook: a hook that allows everything is not
// even asked about what plan mode refuses, and cannot rewrite a read-only
// command into one that changes files.
func TestPlanModeRefusesBeforeAnyHook(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "asked")
	allow := hookScript(t, "#!/bin/bash\ntouch "+marker+"\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n")
	hs := newHookSession(t, tools.ModePlan, PolicyConfig{}, nil, oneHook("PreToolUse", "", allow), nil)
	r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["touch x"]}`))
	if r.State != StateError || !strings.Contains(r.Result.Content, "plan") {
		t.Fatalf("%s %q", r.State, r.Result.Content)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the hook ran for a call plan mode refuses")
	}

	rewrite := hookScript(t, `#!/usr/bin/env python3
import json, sys
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "touch evil"}}}))
`)
	hs = newHookSession(t, tools.ModePlan, PolicyConfig{}, nil, oneHook("PreToolUse", "Bash", rewrite), nil)
	r = hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["ls"]}`))
	if r.State != StateError || !strings.Contains(r.Result.Content, "the input a hook gave it is refused") {
		t.Fatalf("%s %q", r.State, r.Result.Content)
	}
	if _, err := os.Stat(filepath.Join(hs.root, "evil")); err == nil {
		t.Fatal("a hook's rewrite ran past plan mode")
	}
}

// TestHookDecisionsAndThePolicy: allow skips asking but not a deny rule;
// ask asks about what the policy allows; updatedInput runs the rewritten
// command, judged again by the rules.
func TestHookDecisionsAndThePolicy(t *testing.T) {
	decide := func(d string) string {
		return hookScript(t, "#!/bin/bash\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\""+d+"\",\"permissionDecisionReason\":\"by hook\"}}'\n")
	}
	ap := &askLog{} // rejects whatever it is asked
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{}, ap, oneHook("PreToolUse", "Bash", decide("allow")), nil)
	if r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["touch allowed"]}`)); r.State != StateSuccess || ap.count() != 0 {
		t.Fatalf("allow: %s %q, asked %d", r.State, r.Result.Content, ap.count())
	}

	hs = newHookSession(t, tools.ModeAct, PolicyConfig{Rules: []Rule{{Tool: tools.NameRunCommands, ArgPattern: "^touch", Decision: Deny}}}, ap,
		oneHook("PreToolUse", "Bash", decide("allow")), nil)
	if r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["touch denied"]}`)); r.State != StateError || !strings.Contains(r.Result.Content, "denies") {
		t.Fatalf("allow over a deny rule: %s %q", r.State, r.Result.Content)
	}

	ap = &askLog{answers: []ApprovalChoice{AllowOnce}}
	hs = newHookSession(t, tools.ModeAct, PolicyConfig{}, ap, oneHook("PreToolUse", "Read", decide("ask")), nil)
	os.WriteFile(filepath.Join(hs.root, "a.txt"), []byte("hello\n"), 0o644)
	if r := hs.CallTool(t.Context(), tools.NameReadFiles, []byte(`{"files":[{"path":"a.txt"}]}`)); r.State != StateSuccess || ap.count() != 1 {
		t.Fatalf("ask: %s %q, asked %d", r.State, r.Result.Content, ap.count())
	}

	// The mode's and the .git folder's own caution stand: a hook's allow
	// does not skip asking about a write into .git, and a hook's ask
	// where nobody is asked (yolo) refuses.
	ap = &askLog{}
	hs = newHookSession(t, tools.ModeAct, PolicyConfig{Approvals: Approvals{Edit: Allow}}, ap, oneHook("PreToolUse", "Write", decide("allow")), nil)
	os.Mkdir(filepath.Join(hs.root, ".git"), 0o755)
	if r := hs.CallTool(t.Context(), tools.NameWriteToFile, []byte(`{"path":".git/config","content":"x"}`)); r.State != StateError || ap.count() != 1 {
		t.Fatalf(".git: %s %q, asked %d", r.State, r.Result.Content, ap.count())
	}
	hs = newHookSession(t, tools.ModeYolo, PolicyConfig{}, ap, oneHook("PreToolUse", "Bash", decide("ask")), nil)
	if r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["touch yolo"]}`)); r.State != StateError || !strings.Contains(r.Result.Content, "a hook asks for the user's approval, and yolo mode approves without asking") {
		t.Fatalf("ask in yolo: %s %q", r.State, r.Result.Content)
	}
	if _, err := os.Stat(filepath.Join(hs.root, "yolo")); err == nil {
		t.Fatal("the command ran")
	}

	rewrite := hookScript(t, `#!/usr/bin/env python3
import json, sys
ti = json.load(sys.stdin)["tool_input"]
ti["command"] = ti["command"].replace("original", "rewritten")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": ti}}))
`)
	hs = newHookSession(t, tools.ModeAct, PolicyConfig{Approvals: Approvals{Execute: Allow}, Rules: []Rule{{Tool: tools.NameRunCommands, ArgPattern: "rewritten-denied", Decision: Deny}}},
		nil, oneHook("PreToolUse", "Bash", rewrite), nil)
	if r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":"touch original"}`)); r.State != StateSuccess {
		t.Fatalf("rewrite: %s %q", r.State, r.Result.Content)
	}
	if _, err := os.Stat(filepath.Join(hs.root, "rewritten")); err != nil {
		t.Fatal("the rewritten command did not run")
	}
	if _, err := os.Stat(filepath.Join(hs.root, "original")); err == nil {
		t.Fatal("the original command ran")
	}
	if r := hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":"touch original-denied"}`)); r.State != StateError || !strings.Contains(r.Result.Content, "denies") {
		t.Fatalf("a rewrite the rules deny: %s %q", r.State, r.Result.Content)
	}
}

// TestPostToolUseAddsContextAfterAnEdit: a hook on Edit|Write runs a
// script after the write and its output reaches the model with the
// result; a hook on Bash does not run for a write.
func TestPostToolUseAddsContextAfterAnEdit(t *testing.T) {
	check := hookScript(t, `#!/bin/bash
f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')
out="lines: $(wc -l < "$f")"
python3 -c 'import json,sys; print(json.dumps({"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":sys.argv[1]}}))' "$out"
`)
	bash := hookScript(t, "#!/bin/bash\necho should-not-run >&2\nexit 2\n")
	cfg := hooks.Config{"PostToolUse": {
		{Matcher: "Edit|Write", Hooks: []hooks.Command{{Type: "command", Command: check}}},
		{Matcher: "Bash", Hooks: []hooks.Command{{Type: "command", Command: bash}}},
	}}
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{Approvals: Approvals{Edit: Allow}}, nil, cfg, nil)
	r := hs.CallTool(t.Context(), tools.NameWriteToFile, []byte(`{"path":"a.txt","content":"one\ntwo\nthree\n"}`))
	if r.State != StateSuccess || !strings.Contains(r.Result.Content, "[from a PostToolUse hook]\nlines: 3") || strings.Contains(r.Result.Content, "should-not-run") {
		t.Fatalf("%s %q", r.State, r.Result.Content)
	}
}

// TestContinueFalseEndsTheTurn: a PreToolUse hook answering continue:
// false refuses its call and every later one of the batch, and the turn
// ends with its reason.
func TestContinueFalseEndsTheTurn(t *testing.T) {
	stop := hookScript(t, "#!/bin/bash\necho '{\"continue\": false, \"stopReason\": \"quota reached\"}'\n")
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{Approvals: Approvals{Execute: Allow}}, nil, oneHook("PreToolUse", "Bash", stop), nil)
	results := hs.schedule(t.Context(), tools.ModeAct, []provider.ToolCall{
		{ID: "1", Name: tools.NameRunCommands, Args: []byte(`{"commands":["touch one"]}`)},
		{ID: "2", Name: tools.NameListFiles, Args: []byte(`{"path":"."}`)},
	})
	if results[0].StopTurn != "quota reached" || results[0].State != StateError || results[1].State != StateCancelled {
		t.Fatalf("results %+v", results)
	}
	if _, err := os.Stat(filepath.Join(hs.root, "one")); err == nil {
		t.Fatal("the call ran")
	}
}

func replay(t *testing.T, replies ...provider.ReplayReply) provider.Provider {
	t.Helper()
	prov, err := provider.New(provider.Config{Name: "replay", Replay: &provider.Transcript{Replies: replies}})
	if err != nil {
		t.Fatal(err)
	}
	return prov
}

func (hs *hookSession) assistantReplies() int {
	n := 0
	for _, m := range hs.History() {
		if m.Role == provider.RoleAssistant {
			n++
		}
	}
	return n
}

// TestUserPromptSubmitExit2RefusesThePrompt: the model is never asked,
// the prompt does not enter the history, the user is told the reason; a
// prompt the hook lets through carries its plain output to the model, as
// does the session's first SessionStart hook.
func TestUserPromptSubmitExit2RefusesThePrompt(t *testing.T) {
	gate := hookScript(t, `#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)["prompt"]
if "secret" in p:
    print("prompts naming secrets are refused", file=sys.stderr)
    sys.exit(2)
print("ticket: ABC-1")
`)
	start := hookScript(t, "#!/bin/bash\necho \"branch policy: small commits\"\n")
	cfg := oneHook("UserPromptSubmit", "", gate)
	cfg["SessionStart"] = oneHook("SessionStart", "startup", start)["SessionStart"]
	prov := replay(t, provider.ReplayReply{Expect: &provider.Expect{LastUserContains: "ticket: ABC-1"}, Events: []provider.ReplayEvent{{Text: "ok"}}})
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{}, nil, cfg, prov)
	stop, err := hs.Prompt(t.Context(), "print the secret")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("stop %q err %v", stop, err)
	}
	if len(hs.History()) != 0 || !strings.Contains(hs.texts(), "a hook refused the prompt: prompts naming secrets are refused") {
		t.Fatalf("history %v, told %q", hs.History(), hs.texts())
	}
	if stop, err := hs.Prompt(t.Context(), "fix the bug"); err != nil || stop != StopEndTurn {
		t.Fatalf("second prompt: %q %v", stop, err)
	}
	var user string
	for _, p := range hs.History()[0].Parts {
		user += p.Text
	}
	if !strings.Contains(user, "branch policy: small commits") || !strings.Contains(user, "ticket: ABC-1") {
		t.Fatalf("the hooks' context is not in the prompt: %q", user)
	}
}

// TestStopHookContinuesTheTurnBounded: a Stop hook that exits 2 sends
// the turn on with its reason for the model, until stop_hook_active; one
// that always objects is stopped after maxStopHookRounds.
func TestStopHookContinuesTheTurnBounded(t *testing.T) {
	once := hookScript(t, `#!/usr/bin/env python3
import json, sys
if not json.load(sys.stdin)["stop_hook_active"]:
    print("run the tests before you stop", file=sys.stderr)
    sys.exit(2)
`)
	prov := replay(t,
		provider.ReplayReply{Events: []provider.ReplayEvent{{Text: "done"}}},
		provider.ReplayReply{Expect: &provider.Expect{LastUserContains: "run the tests before you stop"}, Events: []provider.ReplayEvent{{Text: "tests pass"}}},
	)
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{}, nil, oneHook("Stop", "", once), prov)
	if stop, err := hs.Prompt(t.Context(), "do it"); err != nil || stop != StopEndTurn || hs.assistantReplies() != 2 {
		t.Fatalf("stop %q err %v replies %d", stop, err, hs.assistantReplies())
	}

	always := hookScript(t, "#!/bin/bash\necho 'not yet' >&2\nexit 2\n")
	var replies []provider.ReplayReply
	for range 20 {
		replies = append(replies, provider.ReplayReply{Events: []provider.ReplayEvent{{Text: "done"}}})
	}
	hs = newHookSession(t, tools.ModeAct, PolicyConfig{}, nil, oneHook("Stop", "", always), replay(t, replies...))
	if stop, err := hs.Prompt(t.Context(), "do it"); err != nil || stop != StopEndTurn || hs.assistantReplies() != maxStopHookRounds+1 {
		t.Fatalf("stop %q err %v replies %d", stop, err, hs.assistantReplies())
	}
}

// TestLifecycleHooks: SessionStart runs once, at the first prompt;
// PreCompact with the trigger; Notification before the user is asked;
// SessionEnd when the session closes — each told what Claude Code's
// scripts read.
func TestLifecycleHooks(t *testing.T) {
	log := filepath.Join(t.TempDir(), "events")
	record := hookScript(t, `#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(d["hook_event_name"] + " " + (d.get("source") or d.get("trigger") or d.get("message") or d.get("reason") or "") + "\n")
`)
	cfg := hooks.Config{}
	for _, ev := range []string{"SessionStart", "PreCompact", "Notification", "SessionEnd"} {
		cfg[ev] = []hooks.Group{{Hooks: []hooks.Command{{Type: "command", Command: record + " " + log}}}}
	}
	prov := replay(t,
		provider.ReplayReply{Events: []provider.ReplayEvent{{Text: "one"}}},
		provider.ReplayReply{Events: []provider.ReplayEvent{{Text: "two"}}},
	)
	ap := &askLog{}
	hs := newHookSession(t, tools.ModeAct, PolicyConfig{}, ap, cfg, prov)
	hs.Prompt(t.Context(), "first")
	hs.Prompt(t.Context(), "second")
	hs.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":["true"]}`))
	hs.Compact(t.Context())
	hs.Close()
	b, _ := os.ReadFile(log)
	want := "SessionStart startup\nNotification cline-ls needs your permission to use run_commands\nPreCompact manual\nSessionEnd other\n"
	if string(b) != want {
		t.Fatalf("events:\n%s\nwant:\n%s", b, want)
	}
}
