package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/hookstest"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// TestClaudeCodeHooksWithAcpx: the two Claude Code hook scripts of
// testdata/hooks, in the user's config file, run unchanged when acpx
// drives the daemon: the model's rm -rf build is refused with the
// script's reason (nothing removed, no permission asked for it), the edit
// of main.go lands through acpx's fs/write_text_file and the model's next
// request carries go vet's report (the transcript expects both), and the
// tool calls' cards show both outcomes.
func TestClaudeCodeHooksWithAcpx(t *testing.T) {
	t.Parallel()
	for _, project := range []bool{false, true} {
		t.Run(map[bool]string{false: "config file", true: "project"}[project], func(t *testing.T) {
			claudeCodeHooksWithAcpx(t, project)
		})
	}
}

// claudeCodeHooksWithAcpx plays the scenario with the hooks in the user's
// config file or, when project, in the folder's .cline/settings.json,
// whose trust question acpx's --approve-all answers (Trust, the one allow
// it offers).
func claudeCodeHooksWithAcpx(t *testing.T, project bool) {
	node := acpClientsNode(t)
	hs := hookstest.Find(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure guard: node starts slowly on a loaded machine
	defer cancel()
	dir := t.TempDir()
	cli, _ := filepath.Abs(filepath.Join(acpClientsDir, "node_modules", "acpx", "dist", "cli.js"))
	a := &acpx{t: t, node: node, cli: cli, daemon: testbin.CLI(t), home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "ws"),
		env: hookstest.Env(t)}
	os.MkdirAll(a.home, 0o755)
	hookstest.WriteModule(t, a.cwd)
	if project {
		hs.WriteProject(t, a.cwd)
	} else {
		hs.WriteConfig(t, filepath.Join(a.home, "config"), nil)
	}

	a.run(ctx, hs.Transcript, 0, "sessions", "new")
	a.waitIdle(ctx)
	msgs := acpLines(t, a.run(ctx, hs.Transcript, 0, "--approve-all", "--format", "json", "prompt", hookstest.Prompt))
	a.waitIdle(ctx)
	if got := stopReasons(msgs); len(got) != 1 || got[0] != "end_turn" {
		t.Fatalf("stop reasons %v (a reply whose expectation failed ends the turn otherwise)", got)
	}
	hookstest.Check(t, a.cwd, true)
	m := methodsOf(msgs)
	if m["fs/write_text_file"] != 1 || m["terminal/create"] != 0 {
		t.Errorf("sent %v: want the edit through fs/write_text_file and the refused command in no terminal", m)
	}
	trust := 0
	for _, msg := range msgs {
		if msg["method"] == "session/request_permission" {
			b, _ := json.Marshal(msg["params"])
			if strings.Contains(string(b), "Trust the hooks of "+a.cwd) {
				trust++
			}
		}
	}
	if want := map[bool]int{false: 0, true: 1}[project]; trust != want {
		t.Errorf("%d trust questions, want %d", trust, want)
	}
	var said strings.Builder
	cards := map[string][]string{}
	for _, msg := range msgs {
		params, _ := msg["params"].(map[string]any)
		up, _ := params["update"].(map[string]any)
		switch up["sessionUpdate"] {
		case "tool_call_update":
			content, _ := up["content"].([]any)
			for _, c := range content {
				inner, _ := c.(map[string]any)["content"].(map[string]any)
				if s, ok := inner["text"].(string); ok {
					id, _ := up["toolCallId"].(string)
					cards[id] = append(cards[id], s)
				}
			}
		case "agent_message_chunk":
			if c, ok := up["content"].(map[string]any); ok {
				s, _ := c["text"].(string)
				said.WriteString(s)
			}
		}
	}
	for id, want := range map[string]string{"hook1": "Hook PreToolUse (", "hook2": "Hook PostToolUse ("} {
		if !hasNote(cards[id], want, map[string]string{"hook1": hookstest.BlockedNote, "hook2": hookstest.ContextNote}[id]) {
			t.Errorf("the card of %s does not show its hook's outcome: %q", id, cards[id])
		}
	}
	if !strings.Contains(said.String(), hookstest.LastWords) {
		t.Errorf("the model's last words are missing: %q", said.String())
	}
}

// hasNote reports whether one of a card's texts has a line that starts
// with prefix and holds rest: the hook's name between them is its
// command, which the card may shorten.
func hasNote(texts []string, prefix, rest string) bool {
	for _, s := range texts {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, prefix) && strings.Contains(l, rest) {
				return true
			}
		}
	}
	return false
}
