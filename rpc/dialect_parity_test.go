package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/workspace"
)

// parityFiles is the workspace the parity session works in.
var parityFiles = map[string]string{
	"greet.go": "package greet\n\nfunc Greet() string { return \"hi\" }\n",
	"notes.md": "# Notes\n\nNothing yet.\n",
}

// parityTranscript scripts one turn with a call of each kind of
// decision: a read the policy allows, an edit the user allows when asked,
// a command the user rejects when asked, and a read outside the workspace
// the daemon refuses without asking.
func parityTranscript(t *testing.T) string {
	return transcript(t,
		reply(text("Reading. "), call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "greet.go"}}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "return \"hi\""},
			"events": []any{text("Editing. "), call("c2", "editor", map[string]any{"path": "greet.go", "old_text": `return "hi"`, "new_text": `return "hello"`})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited greet.go"},
			"events": []any{text("Testing. "), call("c3", "run_commands", map[string]any{"commands": []any{"echo parity > notes.md"}})}},
		reply(text("Peeking outside. "), call("c4", "read_files", map[string]any{"files": []any{map[string]any{"path": "../outside.txt"}}})),
		reply(text("Done."), map[string]any{"usage": map[string]any{"input_tokens": 100, "output_tokens": 7}}),
	)
}

// parityRejected is the call the user rejects.
const parityRejected = "c3"

// parityRun is what one dialect's run of the session left.
type parityRun struct {
	decisions map[string]string // by tool call id
	files     map[string]string // the workspace after the turn
	history   string            // the saved session, normalised
}

// parityEnv is the environment both dialects read their settings from:
// the same model, mode, state and (empty) configuration.
func parityEnv(t *testing.T, tr string) (func(string) string, string) {
	state := t.TempDir()
	env := map[string]string{"CLINE_LS_PROVIDER": "replay", "CLINE_LS_TRANSCRIPT": tr, "CLINE_LS_MODE": "act",
		"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": t.TempDir(), "HOME": t.TempDir()}
	return func(k string) string { return env[k] }, state
}

func parityWorkspace(t *testing.T) string {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	for name, text := range parityFiles {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(parent, "outside.txt"), []byte("secret outside\n"), 0o644)
	return root
}

// connect starts a server with getenv and a client on it in framing.
func connect(t *testing.T, framing jsonrpcclient.Framing, getenv func(string) string) *jsonrpcclient.Client {
	srvEnd, cliEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		rpc.NewServer(rpc.Options{Getenv: getenv}).Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	c := jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{Framing: framing})
	t.Cleanup(func() { c.Close(); <-served; <-c.Done() })
	return c
}

// runLSP runs the session through the LSP dialect: approvals through
// cline/approvalRequest, edits of closed files to disk by the daemon.
func runLSP(t *testing.T, ctx context.Context, tr string) parityRun {
	getenv, state := parityEnv(t, tr)
	root := parityWorkspace(t)
	c := connect(t, jsonrpcclient.LSP, getenv)
	init := map[string]any{"processId": nil, "rootUri": nil,
		"workspaceFolders": []any{map[string]any{"uri": workspace.PathToURI(root), "name": "ws"}},
		"capabilities":     map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}}
	if err := c.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	c.Notify(ctx, "initialized", map[string]any{})

	asked := map[string]bool{}
	var mu sync.Mutex
	answering, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		answered := map[string]bool{}
		for {
			m, err := c.Await(answering, "cline/approvalRequest", func(p json.RawMessage) bool {
				var r struct{ ApprovalID string }
				json.Unmarshal(p, &r)
				return !answered[r.ApprovalID]
			})
			if err != nil {
				return
			}
			var r struct {
				ApprovalID string
				ToolCall   struct {
					ToolCallID string `json:"toolCallId"`
				} `json:"toolCall"`
			}
			json.Unmarshal(m.Params, &r)
			answered[r.ApprovalID] = true
			mu.Lock()
			asked[r.ToolCall.ToolCallID] = true
			mu.Unlock()
			c.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": r.ApprovalID,
				"outcome": map[string]any{"outcome": "selected", "optionId": parityAnswer(r.ToolCall.ToolCallID)}}, nil)
		}
	})
	id := parityPrompt(t, ctx, c, map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}})
	stop()
	wg.Wait()
	return parityResult(t, c, asked, root, state, id)
}

// runACP runs the session through the ACP dialect: approvals through
// session/request_permission, reads and writes through the client's fs/*,
// which this client serves from the disk.
func runACP(t *testing.T, ctx context.Context, tr string) parityRun {
	getenv, state := parityEnv(t, tr)
	root := parityWorkspace(t)
	c := connect(t, jsonrpcclient.ACP, getenv)
	asked := map[string]bool{}
	var mu sync.Mutex
	c.Handle("session/request_permission", func(_ context.Context, p json.RawMessage) (any, error) {
		var r struct {
			ToolCall struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"toolCall"`
		}
		json.Unmarshal(p, &r)
		mu.Lock()
		asked[r.ToolCall.ToolCallID] = true
		mu.Unlock()
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": parityAnswer(r.ToolCall.ToolCallID)}}, nil
	})
	c.Handle("fs/read_text_file", func(_ context.Context, p json.RawMessage) (any, error) {
		var r struct{ Path string }
		json.Unmarshal(p, &r)
		b, err := os.ReadFile(r.Path)
		if err != nil {
			return nil, err
		}
		return map[string]any{"content": string(b)}, nil
	})
	c.Handle("fs/write_text_file", func(_ context.Context, p json.RawMessage) (any, error) {
		var r struct{ Path, Content string }
		json.Unmarshal(p, &r)
		return map[string]any{}, os.WriteFile(r.Path, []byte(r.Content), 0o644)
	})
	init := map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}}
	if err := c.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	id := parityPrompt(t, ctx, c, map[string]any{"cwd": root, "mcpServers": []any{}})
	mu.Lock()
	defer mu.Unlock()
	return parityResult(t, c, asked, root, state, id)
}

func parityAnswer(callID string) string {
	if callID == parityRejected {
		return "reject_once"
	}
	return "allow_once"
}

// parityPrompt opens a session with newParams and runs the scripted turn.
func parityPrompt(t *testing.T, ctx context.Context, c *jsonrpcclient.Client, newParams map[string]any) string {
	t.Helper()
	var created struct{ SessionID string }
	if err := c.Call(ctx, "session/new", newParams, &created); err != nil {
		t.Fatal(err)
	}
	var res struct{ StopReason string }
	if err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "Make Greet say hello and test it."}}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q, want end_turn", res.StopReason)
	}
	return created.SessionID
}

// parityResult gathers a run's decisions (from the tool calls' final
// status and whether they were asked about), files and saved history.
func parityResult(t *testing.T, c *jsonrpcclient.Client, asked map[string]bool, root, state, id string) parityRun {
	t.Helper()
	run := parityRun{decisions: map[string]string{}, files: map[string]string{}}
	for _, m := range c.Messages("session/update") {
		var p struct {
			Update struct {
				Kind   string `json:"sessionUpdate"`
				ID     string `json:"toolCallId"`
				Status string `json:"status"`
			} `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Update.Kind != "tool_call_update" || (p.Update.Status != "completed" && p.Update.Status != "failed") {
			continue
		}
		d := "ran"
		if p.Update.Status == "failed" {
			d = "refused"
		}
		if asked[p.Update.ID] {
			d = "asked, " + d
		}
		run.decisions[p.Update.ID] = d
	}
	for name := range parityFiles {
		run.files[name] = readFile(t, filepath.Join(root, name))
	}
	meta, recs := savedRecords(t, state, id)
	// Ids, folders and times differ between runs by nature.
	meta.SessionID, meta.Cwd, meta.CreatedAt = "", "", time.Time{}
	for i := range recs {
		recs[i].Time = time.Time{}
		recs[i].Meta = nil // compared once, as meta
	}
	b, err := json.MarshalIndent(map[string]any{"meta": meta, "records": recs}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	run.history = strings.NewReplacer(id, "<session>", root, "<root>", filepath.Dir(root), "<parent>").Replace(string(b))
	return run
}

// TestDialectParity runs one scripted session through the LSP dialect and
// once through ACP: the tool decisions, the edits and the saved history
// must be the same, and the decisions the ones the script provokes.
func TestDialectParity(t *testing.T) {
	ctx := testCtx(t)
	tr := parityTranscript(t)
	lsp, acp := runLSP(t, ctx, tr), runACP(t, ctx, tr)

	want := map[string]string{"c1": "ran", "c2": "asked, ran", "c3": "asked, refused", "c4": "refused"}
	for name, run := range map[string]parityRun{"LSP": lsp, "ACP": acp} {
		if !maps.Equal(run.decisions, want) {
			t.Errorf("%s decisions = %v, want %v", name, run.decisions, want)
		}
	}
	if !maps.Equal(lsp.files, acp.files) {
		t.Errorf("the workspaces differ:\nLSP %q\nACP %q", lsp.files, acp.files)
	}
	if got := lsp.files["greet.go"]; !strings.Contains(got, `"hello"`) {
		t.Errorf("greet.go was not edited: %q", got)
	}
	if lsp.history != acp.history {
		t.Errorf("the saved histories differ:\n%s", lineDiff(lsp.history, acp.history))
	}
	if !strings.Contains(lsp.history, "Edited greet.go") {
		t.Errorf("the saved history lacks the edit's result:\n%s", lsp.history)
	}
}

// lineDiff lists the lines where a and b first differ, for a readable
// failure.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  LSP %s\n  ACP %s", i+1, x, y))
		}
		if len(out) == 10 {
			break
		}
	}
	return strings.Join(out, "\n")
}
