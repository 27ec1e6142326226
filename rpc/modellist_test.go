package rpc_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

type modelsAnswer struct {
	Current string
	Models  []struct {
		ID, Name      string
		ContextWindow int
		Vision        bool
	}
}

// TestModelsFromTheProvidersEndpoint: cline/models lists the provider's
// models from its models endpoint (an OpenAI-compatible /v1/models here,
// on 127.0.0.1), the current model first, with windows and vision; the
// listing is asked once and cached. With the endpoint failing, the
// daemon's table and the settings' choices are offered instead; a
// session's current model is the one its next turn uses.
func TestModelsFromTheProvidersEndpoint(t *testing.T) {
	ctx := testCtx(t)
	var asked atomic.Int32
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/v1/models") {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"o3-mini","object":"model"},{"id":"local-7b","context_length":8192}]}`))
	}))
	t.Cleanup(srv.Close)
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-list"
		}
		return ""
	}})
	root := t.TempDir()
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": openAISettings(srv.URL, t.TempDir())}); err != nil {
		t.Fatal(err)
	}
	var res modelsAnswer
	for range 2 {
		res = modelsAnswer{}
		if err := ed.Call(ctx, "cline/models", map[string]any{}, &res); err != nil {
			t.Fatal(err)
		}
	}
	if asked.Load() != 1 || auth.Load() != "Bearer sk-list" {
		t.Errorf("the endpoint was asked %d times with %v, want once with the key", asked.Load(), auth.Load())
	}
	ids := []string{}
	for _, m := range res.Models {
		ids = append(ids, m.ID)
	}
	if res.Current != "test-model" || strings.Join(ids, ",") != "test-model,gpt-4o,o3-mini,local-7b" {
		t.Fatalf("cline/models = %+v", res)
	}
	if m := res.Models[3]; m.ContextWindow != 8192 || !m.Vision {
		t.Errorf("local-7b = %+v, want the endpoint's window", m)
	}
	if m := res.Models[2]; m.Vision {
		t.Errorf("o3-mini = %+v, want no vision", m)
	}

	// A session's current model follows the settings; an endpoint that
	// fails leaves the table and the settings' choices.
	id := newSessionIn(t, ctx, ed, root)
	srv.Close()
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"provider": map[string]any{"name": "openai", "model": "gpt-5", "baseUrl": srv.URL + "/v1", "apiKeyEnv": "TEST_API_KEY"}}})
	ed.Sync(ctx)
	res = modelsAnswer{}
	if err := ed.Call(ctx, "cline/models", map[string]any{"sessionId": id}, &res); err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, m := range res.Models {
		ids = append(ids, m.ID)
	}
	if res.Current != "gpt-5" || len(ids) < 3 || ids[0] != "gpt-5" || !strings.Contains(strings.Join(ids, ","), "gpt-4.1") {
		t.Errorf("with the endpoint down, cline/models = %q current %q, want gpt-5 first and the table's openai models", ids, res.Current)
	}
	if err := ed.Call(ctx, "cline/models", map[string]any{"sessionId": "nope"}, &res); err == nil {
		t.Error("cline/models of an unknown session did not fail")
	}
}

// TestModelsWithoutAModelNamed: without a session, cline/models names the
// model a new session would use even when the settings name none (a
// replay transcript's own here), so that a client tells a configured
// provider from none; with no provider at all it answers no current model
// and no models.
func TestModelsWithoutAModelNamed(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.json")
	if err := os.WriteFile(tr, []byte(`{"model":"replay-listed","replies":[{"events":[{"text":"hi"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		settings map[string]any
		current  string
	}{
		{"nothing configured", map[string]any{"stateDir": dir}, ""},
		{"a transcript alone", map[string]any{"stateDir": dir, "provider": map[string]any{"transcript": tr}}, "replay-listed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ed := rpctest.New(t, rpc.Options{Getenv: func(string) string { return "" }})
			if _, err := ed.Initialize(ctx, t.TempDir(), map[string]any{"initializationOptions": c.settings}); err != nil {
				t.Fatal(err)
			}
			var res modelsAnswer
			if err := ed.Call(ctx, "cline/models", map[string]any{}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Current != c.current {
				t.Errorf("current = %q, want %q", res.Current, c.current)
			}
			if c.current == "" && len(res.Models) != 0 || c.current != "" && (len(res.Models) == 0 || res.Models[0].ID != c.current) {
				t.Errorf("models = %+v", res.Models)
			}
		})
	}
}
