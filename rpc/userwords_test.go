package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestUserSeesOwnWords: what the session tells the model of the user's
// answers ("denied by the user", "Shown to the user.") reaches the model
// as it is, and the user sees it in their own words in the tool call's
// update; a reloaded session's replay shows the same words.
func TestUserSeesOwnWords(t *testing.T) {
	ctx := testCtx(t)
	tr := transcript(t,
		reply(call("c1", "write_to_file", map[string]any{"path": "new.txt", "content": "x\n"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "was not run: denied by the user"},
			"events": []any{text("Understood.")}},
	)
	tr2 := transcript(t, reply(call("c2", "plan_mode_respond", map[string]any{"response": "Plan: nothing."})))
	root, state := t.TempDir(), t.TempDir()
	ed := rpctest.New(t, rpc.Options{})
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state, "approvals": map[string]any{"edit": "ask"}}}); err != nil {
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
			"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}, "feedback": "not now"}, nil)
	}()
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "make new.txt"); err != nil {
		t.Fatal(err)
	}
	shown := toolTexts(updates(ed, id))
	if got := shown["c1"]; got != "You rejected this.\nYour feedback: not now" {
		t.Errorf("the rejected call shows %q", got)
	}
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"provider": map[string]any{"transcript": tr2}}})
	ed.Sync(ctx)
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "plan"}, &created); err != nil {
		t.Fatal(err)
	}
	if _, err := promptText(ctx, ed, created.SessionID, "plan it"); err != nil {
		t.Fatal(err)
	}
	for k, v := range toolTexts(updates(ed, created.SessionID)) {
		shown[k] = v
	}
	if got := shown["c2"]; got != "Plan presented." {
		t.Errorf("the plan's call shows %q", got)
	}
	for _, s := range shown {
		if strings.Contains(s, "the user") {
			t.Errorf("the user is shown %q", s)
		}
	}
}

// toolTexts maps each tool call to the text of its last update's content.
func toolTexts(ups []map[string]any) map[string]string {
	out := map[string]string{}
	for _, u := range ups {
		if u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		items, _ := u["content"].([]any)
		for _, it := range items {
			it, _ := it.(map[string]any)
			c, _ := it["content"].(map[string]any)
			if s, ok := c["text"].(string); ok {
				out[u["toolCallId"].(string)] = s
			}
		}
	}
	return out
}
