package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

type instructionsResult struct {
	Files []struct {
		Path      string
		Chars     int
		Truncated bool
	}
	Text string
}

// TestInstructionsInPromptAndOnTheWire: the workspace's and the user's
// instruction files reach the system prompt, cline/instructions reports
// them, an edited file is in the next turn's prompt, and the turn's
// context block goes to the model in the user message but not back to
// the user when the history is replayed.
func TestInstructionsInPromptAndOnTheWire(t *testing.T) {
	ctx := testCtx(t)
	cfgHome := t.TempDir()
	writeFile(t, filepath.Join(cfgHome, "cline-ls", "AGENTS.md"), "User: be brief.\n")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "AGENTS.md"), "Root: run go vet.\n")
	writeFile(t, filepath.Join(root, "sub", "AGENTS.md"), "Sub: no globals.\n")
	writeFile(t, filepath.Join(root, "main.go"), "package main\n")
	tr := transcript(t,
		map[string]any{"expect": map[string]any{
			"system_contains":    "## AGENTS.md\nRoot: run go vet.\n\n## sub/AGENTS.md (applies to files under sub/)\nSub: no globals.\n",
			"last_user_contains": "Open in the editor (tools see their unsaved text): main.go\n</environment_details>\n\nfirst task",
		}, "events": []any{text("first answer")}},
		map[string]any{"expect": map[string]any{"system_contains": "Root: run go vet and staticcheck.\n"}, "events": []any{text("second answer")}},
	)
	state := t.TempDir()
	opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state}
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfgHome
		}
		return ""
	}
	ed := rpctest.New(t, rpc.Options{Getenv: getenv})
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID

	var got instructionsResult
	if err := ed.Call(ctx, "cline/instructions", map[string]any{"sessionId": id}, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(cfgHome, "cline-ls", "AGENTS.md"), filepath.Join(root, "AGENTS.md"), filepath.Join(root, "sub", "AGENTS.md")}
	if len(got.Files) != len(want) {
		t.Fatalf("cline/instructions files = %+v, want %v", got.Files, want)
	}
	for i, w := range want {
		if f := got.Files[i]; f.Path != w || f.Truncated || f.Chars == 0 {
			t.Errorf("files[%d] = %+v, want %s whole", i, f, w)
		}
	}
	if !strings.Contains(got.Text, "User: be brief.") || !strings.Contains(got.Text, "Sub: no globals.") {
		t.Errorf("cline/instructions text = %q", got.Text)
	}

	if err := ed.Open(ctx, workspace.PathToURI(filepath.Join(root, "main.go")), "package main\n"); err != nil {
		t.Fatal(err)
	}
	runPrompt(t, ctx, ed, id, "first task")
	writeFile(t, filepath.Join(root, "AGENTS.md"), "Root: run go vet and staticcheck.\n")
	runPrompt(t, ctx, ed, id, "second task")

	// The replayed history shows the user's words, not the context block.
	// The first daemon lets go of the session first: one writes it at a
	// time.
	if _, err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	ed2 := rpctest.New(t, rpc.Options{Getenv: getenv})
	if _, err := ed2.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	if err := ed2.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": root}, nil); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, u := range updates(ed2, id) {
		if u["sessionUpdate"] == "user_message_chunk" {
			users = append(users, u["content"].(map[string]any)["text"].(string))
		}
	}
	if strings.Join(users, "|") != "first task|second task" {
		t.Errorf("replayed user messages = %q", users)
	}

	if err := ed2.Call(ctx, "cline/instructions", map[string]any{"sessionId": "s-none"}, nil); err == nil || codeOf(t, err) != -32602 {
		t.Errorf("unknown session: %v", err)
	}
}

func runPrompt(t *testing.T, ctx context.Context, ed *rpctest.Editor, id, text string) {
	t.Helper()
	var res struct{ StopReason string }
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}, &res); err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	if res.StopReason != "end_turn" {
		t.Fatalf("prompt %q stopped with %q", text, res.StopReason)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestACPInstructions: the same method under ACP's extension name.
func TestACPInstructions(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "CLAUDE.md"), "Claude: tabs.\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rpc.NewServer(rpc.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	defer func() { inW.Close(); <-done }()
	out := bufio.NewReader(outR)
	call := func(id int, method string, params any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		go inW.Write(append(b, '\n'))
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if m["id"] == float64(id) {
				return m
			}
		}
	}
	call(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	m := call(1, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	sid, _ := m["result"].(map[string]any)["sessionId"].(string)
	m = call(2, "_cline/instructions", map[string]any{"sessionId": sid})
	var got instructionsResult
	b, _ := json.Marshal(m["result"])
	json.Unmarshal(b, &got)
	if len(got.Files) != 1 || got.Files[0].Path != filepath.Join(root, "CLAUDE.md") || !strings.Contains(got.Text, "## CLAUDE.md\nClaude: tabs.\n") {
		t.Fatalf("_cline/instructions = %v", m)
	}
}
