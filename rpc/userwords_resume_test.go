package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeKeepsPlanAndUserWords: a plan-mode turn whose prompt mentions
// a file, resumed by a second daemon. The replay shows the plan's text and
// the prompt as typed (the mention as @name, not the file's text); the
// model's first request after the resume still has the plan; the session
// list, a checkpoint's label and the progress title show the user's words
// of each prompt, whichever way the editor sent its mention (the @path in
// the text and the file after it, or the file alone, or a link).
func TestResumeKeepsPlanAndUserWords(t *testing.T) {
	ctx := testCtx(t)
	const plan = "PLAN: rename foo to bar in notes.txt, then run the tests."
	const secret = "CONTENT-OF-NOTES"
	ws := newWindowServer(t, 1<<20, func(n int) map[string]any {
		switch n {
		case 0:
			return toolCall(n, "plan_mode_respond", map[string]any{"response": plan})
		case 1:
			return toolCall(n, "write_to_file", map[string]any{"path": "out.txt", "content": "bar\n"})
		}
		return map[string]any{"content": "Done."}
	})
	root, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte(secret+"\nfoo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + filepath.Join(root, "notes.txt")
	block := map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "text": secret + "\nfoo\n", "mimeType": "text/plain"}}
	link := map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(root, "docs", "guide.md"), "name": "guide.md"}

	ed := windowEditor(t, ctx, ws.URL, root, state)
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "plan"}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	first := []any{map[string]any{"type": "text", "text": "rename foo in @notes.txt"}, block}
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": first}, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range ed.Messages("$/progress") {
		if strings.Contains(string(m.Params), secret) || strings.Contains(string(m.Params), "<file") {
			t.Errorf("the progress shows the mentioned file: %s", m.Params)
		}
	}
	ed.Shutdown(ctx)

	ed2 := windowEditor(t, ctx, ws.URL, root, state)
	if err := ed2.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": root}, nil); err != nil {
		t.Fatal(err)
	}
	var user, agent strings.Builder
	for _, u := range updates(ed2, id) {
		c, _ := u["content"].(map[string]any)
		s, _ := c["text"].(string)
		switch u["sessionUpdate"] {
		case "user_message_chunk":
			user.WriteString(s)
		case "agent_message_chunk":
			agent.WriteString(s)
		}
	}
	if user.String() != "rename foo in @notes.txt" {
		t.Errorf("the replay shows the prompt as %q", user.String())
	}
	if !strings.Contains(agent.String(), plan) {
		t.Errorf("the replay lost the plan: the agent's text is %q", agent.String())
	}
	if err := ed2.Call(ctx, "session/set_mode", map[string]any{"sessionId": id, "modeId": "act"}, nil); err != nil {
		t.Fatal(err)
	}
	second := []any{map[string]any{"type": "text", "text": "do it, as in "}, block, link}
	if err := ed2.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": second}, nil); err != nil {
		t.Fatal(err)
	}
	bodies := ws.chatBodies()
	if len(bodies) < 2 || !strings.Contains(string(bodies[1]), "rename foo to bar in notes.txt") {
		t.Errorf("the model's first request after the resume lacks the plan")
	}

	var list struct {
		Sessions []struct{ SessionID, Title string }
	}
	if err := ed2.Call(ctx, "session/list", map[string]any{"cwd": root}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "rename foo in @notes.txt" {
		t.Errorf("session/list = %+v", list.Sessions)
	}
	var cps struct{ Checkpoints []struct{ Title string } }
	if err := ed2.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &cps); err != nil {
		t.Fatal(err)
	}
	if len(cps.Checkpoints) == 0 || cps.Checkpoints[0].Title != "Before: do it, as in @notes.txt @guide.md" {
		t.Errorf("checkpoints = %+v", cps.Checkpoints)
	}
	raw, _ := json.Marshal(cps)
	if strings.Contains(string(raw), secret) {
		t.Errorf("a checkpoint label shows the mentioned file: %s", raw)
	}
}
