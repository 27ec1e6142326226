package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// transcript writes a replay transcript and returns its path.
func transcript(t *testing.T, replies ...any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": "replay-test", "chunk_size": 5, "replies": replies})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "transcript.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func reply(events ...map[string]any) map[string]any { return map[string]any{"events": events} }
func text(s string) map[string]any                  { return map[string]any{"text": s} }
func call(id, name string, args any) map[string]any {
	return map[string]any{"tool_call": map[string]any{"id": id, "name": name, "args": args}}
}

// updates collects session/update payloads of one session.
func updates(ed *rpctest.Editor, id string) []map[string]any {
	var out []map[string]any
	for _, m := range ed.Messages("session/update") {
		var p struct {
			SessionID string         `json:"sessionId"`
			Update    map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		if p.SessionID == id {
			out = append(out, p.Update)
		}
	}
	return out
}

// typedUpdates is updates decoded into the wire's types; an update
// outside the closed set fails t.
func typedUpdates(t *testing.T, ed *rpctest.Editor, id string) []wire.SessionUpdate {
	t.Helper()
	var out []wire.SessionUpdate
	for _, m := range ed.Messages("session/update") {
		var n wire.SessionNotification
		if err := n.UnmarshalJSON(m.Params); err != nil {
			t.Fatalf("session/update %s: %v", m.Params, err)
		}
		if n.SessionID == id {
			out = append(out, n.Update)
		}
	}
	return out
}

func agentText(ups []map[string]any) string {
	var b strings.Builder
	for _, u := range ups {
		if u["sessionUpdate"] == "agent_message_chunk" {
			b.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

// TestPlanThenActEditsOpenBuffer runs a whole task: a plan-mode answer,
// a switch to act mode, an edit of an open unsaved buffer approved through
// cline/approvalRequest, and the final answer.
func TestPlanThenActEditsOpenBuffer(t *testing.T) {
	ctx := testCtx(t)
	tr := transcript(t,
		reply(text("Looking at greet.go. "), call("c1", "plan_mode_respond", map[string]any{"response": "Plan: make Greet say hello."})),
		map[string]any{"expect": map[string]any{"last_user_contains": "go ahead", "tools": []string{"editor"}},
			"events": []any{text("Editing."), call("c2", "editor", map[string]any{"path": "greet.go", "old_text": `return "hi"`, "new_text": `return "hello"`})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited greet.go"},
			"events": []any{text("Done: Greet now says hello."), map[string]any{"usage": map[string]any{"input_tokens": 100, "output_tokens": 7}}}},
	)
	state := t.TempDir()
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true, "diffs": true}}}
	opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state}
	ed, root := editWorkspace(t, map[string]string{"greet.go": "package greet\n\nfunc Greet() string { return \"hi\" }\n"}, opts, caps)
	uri := workspace.PathToURI(filepath.Join(root, "greet.go"))
	unsaved := "package greet\n\n// Greet greets.\nfunc Greet() string { return \"hi\" }\n"
	ed.Open(ctx, uri, unsaved)

	// Approve whatever is asked.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m, err := ed.Await(ctx, "cline/approvalRequest", nil)
		if err != nil {
			t.Error(err)
			return
		}
		var req struct{ ApprovalID, Diff string }
		json.Unmarshal(m.Params, &req)
		if !strings.Contains(req.Diff, `+func Greet() string { return "hello" }`) {
			t.Errorf("approval diff = %q", req.Diff)
		}
		ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID, "outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
	}()

	var created struct {
		SessionID string
		Modes     struct {
			CurrentModeID  string
			AvailableModes []struct{ ID string }
		}
	}
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "plan", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	if created.Modes.CurrentModeID != "plan" || len(created.Modes.AvailableModes) != 5 {
		t.Fatalf("session/new = %+v", created)
	}
	id := created.SessionID
	var res struct{ StopReason string }
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "Make Greet say hello"}}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" {
		t.Fatalf("plan turn stop = %q", res.StopReason)
	}
	if got := agentText(updates(ed, id)); !strings.Contains(got, "Looking at greet.go.") || !strings.Contains(got, "Plan: make Greet say hello.") {
		t.Fatalf("plan text = %q", got)
	}
	if err := ed.Call(ctx, "session/set_mode", map[string]any{"sessionId": id, "modeId": "act"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go ahead"}}}, &res); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if res.StopReason != "end_turn" {
		t.Fatalf("act turn stop = %q", res.StopReason)
	}
	assertBuffer(t, ctx, ed, uri, strings.Replace(unsaved, `"hi"`, `"hello"`, 1))
	if disk := readFile(t, filepath.Join(root, "greet.go")); strings.Contains(disk, "hello") {
		t.Fatal("the edit reached the disk; it belongs in the unsaved buffer")
	}
	ups := updates(ed, id)
	kinds := map[string]int{}
	for _, u := range ups {
		kinds[u["sessionUpdate"].(string)]++
	}
	for _, k := range []string{"agent_message_chunk", "tool_call", "tool_call_update", "current_mode_update", "usage_update"} {
		if kinds[k] == 0 {
			t.Errorf("no %s update; got %v", k, kinds)
		}
	}
	if _, err := ed.Await(ctx, "cline/diff", nil); err != nil {
		t.Error(err)
	}
	// The history was saved: session/list finds it.
	var list struct {
		Sessions []struct{ SessionID, Title string }
	}
	if err := ed.Call(ctx, "session/list", map[string]any{"cwd": root}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Title != "Make Greet say hello" {
		t.Fatalf("session/list = %+v", list)
	}
}

// TestNoModelSaysHowForThatClient: the error names the settings of the
// client the user is in, not a generic list.
func TestNoModelSaysHowForThatClient(t *testing.T) {
	for client, want := range map[string]string{
		"Neovim":             "require('cline').setup",
		"Eglot":              "cline-initialization-options",
		"Visual Studio Code": "cline.provider",
		"cline-ls headless":  "cline-ls exec --provider",
		"SomeEditor":         "initializationOptions",
	} {
		t.Run(client, func(t *testing.T) {
			ctx := testCtx(t)
			ed := rpctest.New(t, rpc.Options{})
			ed.Initialize(ctx, t.TempDir(), map[string]any{
				"clientInfo":            map[string]any{"name": client},
				"initializationOptions": map[string]any{"stateDir": t.TempDir()},
			})
			var created struct{ SessionID string }
			if err := ed.Call(ctx, "session/new", map[string]any{}, &created); err != nil {
				t.Fatal(err)
			}
			err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CLINE_LS_MODEL") {
				t.Fatalf("err = %v, want it to mention %q", err, want)
			}
		})
	}
}

func TestPromptWithoutModelFailsClearly(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{}) // no environment: no API key to fall back on
	ed.Initialize(ctx, t.TempDir(), map[string]any{"initializationOptions": map[string]any{"stateDir": t.TempDir()}})
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{}, &created); err != nil {
		t.Fatal(err)
	}
	err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no model is configured") || !strings.Contains(err.Error(), "CLINE_LS_PROVIDER") {
		t.Fatalf("err = %v", err)
	}
	// Tools still work without a model.
	var r struct {
		Tools []map[string]any
	}
	if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "openai"}, &r); err != nil || len(r.Tools) == 0 {
		t.Fatalf("cline/tools without a model: %v %v", r, err)
	}
}
