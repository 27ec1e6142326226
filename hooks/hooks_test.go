package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// script writes an executable script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func needs(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		testenv.LookPath(t, p, "the hook scripts of these tests run with it")
	}
}

func runner(t *testing.T, cwd string, cfg Config) *Runner {
	t.Helper()
	r, err := New(Options{SessionID: "s-1", TranscriptPath: "/state/s-1.jsonl", CWD: cwd}, Source{Name: "user", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func one(event, matcher, command string, timeout float64) Config {
	return Config{event: {{Matcher: matcher, Hooks: []Command{{Type: "command", Command: command, Timeout: timeout}}}}}
}

// blockRm is a Claude Code style PreToolUse hook: it reads the command
// from tool_input and refuses rm -rf with exit 2.
const blockRm = `#!/bin/bash
cmd=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
if echo "$cmd" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
exit 0
`

func TestExit2BlocksWithStderrForTheModel(t *testing.T) {
	needs(t, "bash", "python3")
	dir := t.TempDir()
	r := runner(t, dir, one("PreToolUse", "Bash", script(t, dir, "block.sh", blockRm), 0))
	for _, args := range []string{`{"commands":["ls","rm -rf /tmp/x"]}`, `{"commands":["rm -rf ~"]}`} {
		out := r.Run(context.Background(), Input{Event: PreToolUse, Tool: "run_commands", Args: json.RawMessage(args)})
		if out.Decision != Deny || !strings.Contains(out.Reason, "rm -rf is not allowed") {
			t.Fatalf("%s: outcome %+v, want deny with the hook's stderr", args, out)
		}
		if len(out.Notes) != 1 || !strings.HasPrefix(out.Notes[0], "Hook PreToolUse (") || !strings.Contains(out.Notes[0], "blocked: Blocked: rm -rf") {
			t.Fatalf("notes %q", out.Notes)
		}
	}
	out := r.Run(context.Background(), Input{Event: PreToolUse, Tool: "run_commands", Args: json.RawMessage(`{"commands":["go test ./..."]}`)})
	if out.Decision != "" || len(out.Notes) != 0 {
		t.Fatalf("harmless command: %+v", out)
	}
}

func TestMatchersUseOurNamesAndClaudeCodes(t *testing.T) {
	needs(t, "bash")
	dir := t.TempDir()
	deny := script(t, dir, "deny.sh", "#!/bin/bash\necho no >&2\nexit 2\n")
	cases := []struct {
		matcher, tool, args string
		want                bool
	}{
		{"Bash", "run_commands", `{"commands":["ls"]}`, true},
		{"run_commands", "run_commands", `{"commands":["ls"]}`, true},
		{"Bash", "write_to_file", `{"path":"a","content":""}`, false},
		{"Edit|Write", "write_to_file", `{"path":"a","content":""}`, true},
		{"Edit|Write", "replace_in_file", `{"path":"a","diff":""}`, true},
		{"Edit|Write", "editor", `{"path":"a","new_text":""}`, true},
		{"Edit|Write", "apply_patch", `{"input":""}`, true},
		{"Edit|Write", "run_commands", `{"commands":["ls"]}`, false},
		{"Edit", "Editor", `{}`, false}, // whole names only
		{"Read", "read_files", `{"files":[{"path":"a"}]}`, true},
		{"Grep", "search_codebase", `{"queries":["x"]}`, true},
		{"Glob", "list_files", `{"path":"."}`, true},
		{"", "list_files", `{"path":"."}`, true},
		{"*", "list_files", `{"path":"."}`, true},
		{"mcp__github__.*", "github__mcp__create_issue", `{}`, true},
		{"mcp__github__create_issue", "use_mcp_tool", `{"server_name":"github","tool_name":"create_issue"}`, true},
		{"mcp__memory__.*", "github__mcp__create_issue", `{}`, false},
	}
	for _, c := range cases {
		r := runner(t, dir, one("PreToolUse", c.matcher, deny, 0))
		out := r.Run(context.Background(), Input{Event: PreToolUse, Tool: c.tool, Args: json.RawMessage(c.args)})
		if got := out.Decision == Deny; got != c.want {
			t.Errorf("matcher %q on %s: ran %v, want %v", c.matcher, c.tool, got, c.want)
		}
	}
}

func TestStdinCarriesClaudeCodeFields(t *testing.T) {
	needs(t, "python3")
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.json")
	hook := script(t, dir, "dump.py", `#!/usr/bin/env python3
import json, os, sys
d = json.load(sys.stdin)
d["env"] = {k: v for k, v in os.environ.items() if k in ("CLAUDE_PROJECT_DIR", "CLINE_LS_PROJECT_DIR", "SOME_API_KEY")}
d["pwd"] = os.getcwd()
json.dump(d, open(sys.argv[1], "w"))
`)
	t.Setenv("SOME_API_KEY", "sk-secret")
	r := runner(t, dir, one("PreToolUse", "Edit", hook+" "+dump, 0))
	args := `{"path":"src/a.go","diff":"------- SEARCH\nold line\n=======\nnew line\n+++++++ REPLACE\n"}`
	r.Run(context.Background(), Input{Event: PreToolUse, Tool: "replace_in_file", Args: json.RawMessage(args)})
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		SessionID      string            `json:"session_id"`
		TranscriptPath string            `json:"transcript_path"`
		CWD            string            `json:"cwd"`
		Event          string            `json:"hook_event_name"`
		ToolName       string            `json:"tool_name"`
		Ours           string            `json:"cline_tool_name"`
		Input          map[string]any    `json:"tool_input"`
		Env            map[string]string `json:"env"`
		PWD            string            `json:"pwd"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.SessionID != "s-1" || d.TranscriptPath != "/state/s-1.jsonl" || d.CWD != dir || d.Event != "PreToolUse" || d.ToolName != "Edit" || d.Ours != "replace_in_file" {
		t.Fatalf("payload %+v", d)
	}
	if d.Input["file_path"] != filepath.Join(dir, "src/a.go") || d.Input["old_string"] != "old line" || d.Input["new_string"] != "new line" || d.Input["path"] != "src/a.go" {
		t.Fatalf("tool_input %v", d.Input)
	}
	if d.Env["CLAUDE_PROJECT_DIR"] != dir || d.Env["CLINE_LS_PROJECT_DIR"] != dir || d.Env["SOME_API_KEY"] != "" {
		t.Fatalf("env %v", d.Env)
	}
	if real, _ := filepath.EvalSymlinks(dir); d.PWD != dir && d.PWD != real {
		t.Fatalf("hook ran in %s, want %s", d.PWD, dir)
	}
}

func TestUpdatedInputInClaudeCodeNamesBecomesOurs(t *testing.T) {
	needs(t, "python3")
	dir := t.TempDir()
	hook := script(t, dir, "rewrite.py", `#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
ti = d["tool_input"]
ti["command"] = ti["command"].replace("npm", "pnpm")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": ti}}))
`)
	r := runner(t, dir, one("PreToolUse", "Bash", hook, 0))
	out := r.Run(context.Background(), Input{Event: PreToolUse, Tool: "run_commands", Args: json.RawMessage(`{"commands":["npm test"],"timeout":30}`)})
	if out.Decision != Allow {
		t.Fatalf("decision %q", out.Decision)
	}
	var got map[string]any
	if err := json.Unmarshal(out.UpdatedInput, &got); err != nil {
		t.Fatal(err)
	}
	if c, _ := got["commands"].([]any); len(c) != 1 || c[0] != "pnpm test" || got["timeout"] != float64(30) || got["command"] != nil {
		t.Fatalf("updated input %s", out.UpdatedInput)
	}
}

func TestContinueFalseAndSystemMessage(t *testing.T) {
	needs(t, "bash")
	dir := t.TempDir()
	hook := script(t, dir, "stop.sh", `#!/bin/bash
echo '{"continue": false, "stopReason": "budget spent", "systemMessage": "see you"}'
`)
	r := runner(t, dir, one("PostToolUse", "", hook, 0))
	out := r.Run(context.Background(), Input{Event: PostToolUse, Tool: "read_files", Args: json.RawMessage(`{"files":[{"path":"a"}]}`)})
	if !out.Stop || out.StopReason != "budget spent" || len(out.Messages) != 1 || out.Messages[0] != "see you" {
		t.Fatalf("outcome %+v", out)
	}
}

func TestPostToolUseAdditionalContextAndPlainOutput(t *testing.T) {
	needs(t, "bash", "python3")
	dir := t.TempDir()
	vet := script(t, dir, "vet.sh", `#!/bin/bash
out=$(echo "vet: a.go:3: unreachable code")
python3 -c 'import json,sys; print(json.dumps({"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":sys.argv[1]}}))' "$out"
`)
	r := runner(t, dir, one("PostToolUse", "Edit|Write", vet, 0))
	out := r.Run(context.Background(), Input{Event: PostToolUse, Tool: "write_to_file", Args: json.RawMessage(`{"path":"a.go","content":"x"}`)})
	if len(out.Context) != 1 || out.Context[0] != "vet: a.go:3: unreachable code" {
		t.Fatalf("context %q", out.Context)
	}
	// Plain output of a PostToolUse hook is not the model's; of a
	// UserPromptSubmit hook it is.
	plain := script(t, dir, "plain.sh", "#!/bin/bash\necho hello\n")
	if out := runner(t, dir, one("PostToolUse", "", plain, 0)).Run(context.Background(), Input{Event: PostToolUse, Tool: "read_files"}); len(out.Context) != 0 {
		t.Fatalf("PostToolUse plain output became context: %q", out.Context)
	}
	if out := runner(t, dir, one("UserPromptSubmit", "", plain, 0)).Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "hi"}); len(out.Context) != 1 || out.Context[0] != "hello" {
		t.Fatalf("UserPromptSubmit plain output: %q", out.Context)
	}
}

func TestOtherExitCodesAreShownAndGoOn(t *testing.T) {
	needs(t, "bash")
	dir := t.TempDir()
	hook := script(t, dir, "fail.sh", "#!/bin/bash\necho oops >&2\nexit 1\n")
	out := runner(t, dir, one("PreToolUse", "", hook, 0)).Run(context.Background(), Input{Event: PreToolUse, Tool: "read_files"})
	if out.Decision != "" || len(out.Messages) != 1 || !strings.Contains(out.Messages[0], "failed with exit code 1: oops") {
		t.Fatalf("outcome %+v", out)
	}
}

func TestHangingHookIsKilledWithItsChildren(t *testing.T) {
	needs(t, "bash", "sleep")
	dir := t.TempDir()
	hook := script(t, dir, "hang.sh", "#!/bin/bash\nsleep 24681 &\nsleep 24682\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a guard, not the test's timeout
	defer cancel()
	out := runner(t, dir, one("PreToolUse", "", hook, 0.5)).Run(ctx, Input{Event: PreToolUse, Tool: "read_files"})
	if ctx.Err() != nil {
		t.Fatal("the hook's own timeout did not stop it")
	}
	if len(out.Messages) != 1 || !strings.Contains(out.Messages[0], "timed out") || out.Decision != "" {
		t.Fatalf("outcome %+v", out)
	}
	if pids := append(proctest.MarkerPIDs(24681), proctest.MarkerPIDs(24682)...); len(pids) != 0 {
		for _, p := range pids {
			if pr, err := os.FindProcess(p); err == nil {
				pr.Kill()
			}
		}
		t.Fatalf("the hook's processes outlived it: %v", pids)
	}
}

func TestCancelKillsAHook(t *testing.T) {
	needs(t, "bash", "sleep")
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	hook := script(t, dir, "hang.sh", "#!/bin/bash\ntouch "+started+"\nsleep 24683\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome, 1)
	go func() { done <- runner(t, dir, one("Stop", "", hook, 0)).Run(ctx, Input{Event: Stop}) }()
	for i := 0; i < 6000; i++ {
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case out := <-done:
		if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "cancelled") {
			t.Fatalf("outcome %+v", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a cancelled hook kept running")
	}
	if pids := proctest.MarkerPIDs(24683); len(pids) != 0 {
		t.Fatalf("the hook outlived its cancel: %v", pids)
	}
}

func TestFloodingHookIsBounded(t *testing.T) {
	needs(t, "bash", "head", "tr")
	dir := t.TempDir()
	hook := script(t, dir, "flood.sh", "#!/bin/bash\nhead -c 5000000 /dev/zero | tr '\\0' a\nhead -c 5000000 /dev/zero | tr '\\0' b >&2\nexit 2\n")
	out := runner(t, dir, one("PreToolUse", "", hook, 0)).Run(context.Background(), Input{Event: PreToolUse, Tool: "read_files"})
	if out.Decision != Deny {
		t.Fatalf("decision %q", out.Decision)
	}
	if len(out.Reason) > MaxOutput+100 || !strings.Contains(out.Reason, "more bytes not kept") {
		t.Fatalf("reason is %d bytes, ends %q", len(out.Reason), out.Reason[max(0, len(out.Reason)-80):])
	}
}

func TestUserPromptSubmitExit2(t *testing.T) {
	needs(t, "python3")
	dir := t.TempDir()
	hook := script(t, dir, "prompt.py", `#!/usr/bin/env python3
import json, sys
if "password" in json.load(sys.stdin)["prompt"]:
    print("prompts must not hold passwords", file=sys.stderr)
    sys.exit(2)
`)
	r := runner(t, dir, one("UserPromptSubmit", "", hook, 0))
	if out := r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "my password is x"}); out.Decision != Deny || out.Reason != "prompts must not hold passwords" {
		t.Fatalf("outcome %+v", out)
	}
	if out := r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "fix the bug"}); out.Decision != "" {
		t.Fatalf("outcome %+v", out)
	}
}

func TestUntrustedSourceDoesNotRun(t *testing.T) {
	needs(t, "bash")
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	hook := script(t, dir, "mark.sh", "#!/bin/bash\ntouch "+marker+"\n")
	trusted := false
	var asked [][]string
	r, err := New(Options{CWD: dir}, Source{Name: "project", Config: one("UserPromptSubmit", "", hook, 0),
		Trusted: func(_ context.Context, commands []string, mayAsk bool) bool {
			asked = append(asked, commands)
			return trusted
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "x"})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project hook ran")
	}
	if len(asked) != 1 || len(asked[0]) != 1 || asked[0][0] != "UserPromptSubmit: "+hook {
		t.Fatalf("asked %q", asked)
	}
	trusted = true
	r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "x"})
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("a trusted project hook did not run")
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{"PreToolUze": nil}, "hooks.PreToolUze: unknown event"},
		{Config{"PreToolUse": {{Matcher: "(", Hooks: []Command{{Type: "command", Command: "x"}}}}}, "hooks.PreToolUse[0].matcher: not a regular expression"},
		{Config{"Stop": {{Hooks: []Command{{Type: "prompt", Command: "x"}}}}}, `hooks.Stop[0].hooks[0].type: must be "command"`},
		{Config{"Stop": {{Hooks: []Command{{Type: "command", Command: " "}}}}}, "hooks.Stop[0].hooks[0].command: required"},
		{Config{"Stop": {{Hooks: []Command{{Type: "command", Command: "x", Timeout: -1}}}}}, "hooks.Stop[0].hooks[0].timeout: must be 0"},
	} {
		err := c.cfg.Validate("hooks.")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestToolInputHasClaudeCodeFields: each tool with an equivalent carries
// that tool's field names beside its own, and a field the call already
// has is kept as it is.
func TestToolInputHasClaudeCodeFields(t *testing.T) {
	for _, c := range []struct {
		tool, args string
		commands   []string
		want       map[string]any
	}{
		{"run_commands", `{"commands":["go vet ./...","go test ./..."]}`, nil, map[string]any{"command": "go vet ./...\ngo test ./..."}},
		{"run_commands", `{"commands":"ignored: the invocation's list wins"}`, []string{"ls"}, map[string]any{"command": "ls"}},
		{"editor", `{"path":"a.go","old_text":"x","new_text":"y"}`, nil, map[string]any{"file_path": "/w/a.go", "old_string": "x", "new_string": "y"}},
		{"write_to_file", `{"path":"/w/b.go","content":"package b"}`, nil, map[string]any{"file_path": "/w/b.go", "content": "package b"}},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Add File: c.go\n+package c\n*** End Patch"}`, nil, map[string]any{"file_path": "/w/c.go"}},
		{"read_files", `{"files":[{"path":"d.go"}]}`, nil, map[string]any{"file_path": "/w/d.go"}},
		{"search_codebase", `{"queries":["func main"],"path":"cmd"}`, nil, map[string]any{"pattern": "func main", "path": "/w/cmd"}},
		{"use_mcp_tool", `{"server_name":"gh","tool_name":"create_issue","arguments":{"title":"t","server_name":"not this"}}`, nil, map[string]any{"title": "t", "server_name": "gh"}},
	} {
		var got map[string]any
		if err := json.Unmarshal(ToolInput(c.tool, json.RawMessage(c.args), c.commands, "/w"), &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s %s: %s = %v, want %v", c.tool, c.args, k, got[k], v)
			}
		}
	}
}

// BenchmarkRunNoMatch is a tool call's cost when hooks are configured but
// none matches it: compiling the configuration and matching.
func BenchmarkRunNoMatch(b *testing.B) {
	cfg := Config{"PreToolUse": {{Matcher: "Edit|Write", Hooks: []Command{{Type: "command", Command: "true"}}}, {Matcher: "mcp__.*", Hooks: []Command{{Type: "command", Command: "true"}}}}}
	in := Input{Event: PreToolUse, Tool: "run_commands", Args: json.RawMessage(`{"commands":["go test ./..."]}`)}
	dir := b.TempDir()
	for b.Loop() {
		r, err := New(Options{CWD: dir}, Source{Name: "user", Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		if out := r.Run(context.Background(), in); out.Decision != "" {
			b.Fatal(out)
		}
	}
}

// BenchmarkRunOneHook is a call's cost with one hook that exits 0 at
// once: a process started, fed and waited for.
func BenchmarkRunOneHook(b *testing.B) {
	dir := b.TempDir()
	r, err := New(Options{CWD: dir}, Source{Name: "user", Config: Config{"PreToolUse": {{Matcher: "Bash", Hooks: []Command{{Type: "command", Command: "true"}}}}}})
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Event: PreToolUse, Tool: "run_commands", Args: json.RawMessage(`{"commands":["go test ./..."]}`)}
	for b.Loop() {
		r.Run(context.Background(), in)
	}
}
