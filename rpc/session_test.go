package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
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

// TestNoModelSaysHowForThatClient: the error names the settings of the
// client the user is in, not a generic list.
func TestNoModelSaysHowForThatClient(t *testing.T) {
	t.Parallel()
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
