package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// modelShown is the model the latest config_option_update of session id
// says its next turn uses, or "".
func modelShown(ed *rpctest.Editor, id string) string {
	shown := ""
	for _, u := range updates(ed, id) {
		if u["sessionUpdate"] != "config_option_update" {
			continue
		}
		opts, _ := u["configOptions"].([]any)
		for _, o := range opts {
			if o, _ := o.(map[string]any); o["id"] == "model" {
				shown, _ = o["currentValue"].(string)
			}
		}
	}
	return shown
}

// TestSettingsReachLiveSession: a session opened before any model was
// set fails its prompt with the no-model message; once the settings name
// a model, the next prompt of the same session goes to it, and the
// client is told the session's model. A later model change reaches the
// session's next turn too, while a turn running as the settings change
// ends on the model it started with.
func TestSettingsReachLiveSession(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	fake := newFakeOpenAI(t,
		fakeReply{text: []string{"Hello from the first model."}},
		fakeReply{calls: []fakeCall{{"c1", "editor", `{"path":"a.txt","old_text":"one","new_text":"two"}`}}},
		fakeReply{text: []string{"Edited."}},
		fakeReply{text: []string{"Hello from the second model."}},
	)
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{"stateDir": state}}); err != nil {
		t.Fatal(err)
	}
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "hi"); err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Fatalf("a prompt with no model = %v, want the no-model message", err)
	}

	settings := openAISettings(fake.URL, state)
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": settings})
	ed.Sync(ctx)
	if got := modelShown(ed, id); got != "test-model" {
		t.Errorf("the client was told model %q, want test-model", got)
	}
	if stop, err := promptText(ctx, ed, id, "hi again"); err != nil || stop != "end_turn" {
		t.Fatalf("the prompt after the settings named a model = %q, %v", stop, err)
	}

	// The model changes while a turn waits for an approval: the turn ends
	// on the first model, the next on the second.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m, err := ed.Await(ctx, "cline/approvalRequest", nil)
		if err != nil {
			t.Error(err)
			return
		}
		var req struct{ ApprovalID string }
		json.Unmarshal(m.Params, &req)
		ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
			"provider": map[string]any{"model": "second-model"}}})
		ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID, "outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
	}()
	if _, err := promptText(ctx, ed, id, "edit a.txt"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := modelShown(ed, id); got != "second-model" {
		t.Errorf("the client was told model %q, want second-model", got)
	}
	if _, err := promptText(ctx, ed, id, "and now?"); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	want := []string{"test-model", "test-model", "test-model", "second-model"}
	if !slices.Equal(fake.models, want) {
		t.Errorf("the provider's requests named %q, want %q", fake.models, want)
	}
}

// TestACPModelOptionReachesNextRequest: the ACP model option makes the
// session's next request go to the model chosen, and the answer shows it.
func TestACPModelOptionReachesNextRequest(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	fake := newFakeOpenAI(t, fakeReply{text: []string{"one"}}, fakeReply{text: []string{"two"}})
	fake.listed = []string{"listed-model"}
	os.MkdirAll(filepath.Join(dir, "config", "cline-ls"), 0o755)
	cfg, _ := json.Marshal(map[string]any{"provider": map[string]any{"name": "openai-compatible", "model": "test-model",
		"baseUrl": fake.URL + "/v1", "apiKeyEnv": "TEST_API_KEY", "nativeTools": true, "models": []string{"other-model"}}})
	os.WriteFile(filepath.Join(dir, "config", "cline-ls", "config.json"), cfg, 0o644)
	env := map[string]string{"TEST_API_KEY": "sk-test", "XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	c := inProcessACP(t, ctx, env)
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ SessionID string }
	json.Unmarshal(res, &s)
	prompt := func(text string) {
		t.Helper()
		if _, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}); err != nil {
			t.Fatal(err)
		}
	}
	prompt("first")
	// A model only the provider's listing has is a choice of the model
	// option, as _cline/models lists it.
	if res, err := c.Call(ctx, "_cline/models", map[string]any{"sessionId": s.SessionID}); err != nil || !strings.Contains(string(res), `"id":"listed-model"`) {
		t.Fatalf("_cline/models = %s, %v", res, err)
	}
	if res, err := c.Call(ctx, "session/set_config_option", map[string]any{"sessionId": s.SessionID, "configId": "model", "value": "listed-model"}); err != nil || !strings.Contains(string(res), `"value":"listed-model"`) {
		t.Errorf("the listed model is not a choice of the model option: %s, %v", res, err)
	}
	res, err = c.Call(ctx, "session/set_config_option", map[string]any{"sessionId": s.SessionID, "configId": "model", "value": "other-model"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), `"currentValue":"other-model"`) {
		t.Errorf("set_config_option = %s, want other-model current", res)
	}
	prompt("second")
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if want := []string{"test-model", "other-model"}; !slices.Equal(fake.models, want) {
		t.Errorf("the provider's requests named %q, want %q", fake.models, want)
	}
}

// inProcessACP serves ACP from a server in this process, its environment
// env, to a minimal client.
func inProcessACP(t testing.TB, ctx context.Context, env map[string]string) *rpctest.ACPClient {
	srv := rpc.NewServer(rpc.Options{Getenv: func(k string) string { return env[k] }})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ctx, bufio.NewReader(inR), outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); <-served })
	return rpctest.NewACPClient(outR, inW)
}
