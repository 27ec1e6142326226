package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestListModels reads each vendor's models endpoint, with its key in
// its header, and refuses an answer that is not a listing or too big.
func TestListModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models" && r.Header.Get("X-Api-Key") == "ak":
			w.Write([]byte(`{"data":[{"id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5"}],"has_more":false}`))
		case r.URL.Path == "/v1beta/models" && r.Header.Get("X-Goog-Api-Key") == "gk" && r.URL.Query().Get("key") == "":
			w.Write([]byte(`{"models":[{"name":"models/gemini-2.5-pro","displayName":"Gemini 2.5 Pro","inputTokenLimit":1048576,"supportedGenerationMethods":["generateContent"]},{"name":"models/embedding-001","supportedGenerationMethods":["embedContent"]}]}`))
		case r.URL.Path == "/big/models":
			w.Write([]byte(`{"data":[` + strings.Repeat(`{"id":"x"},`, listBytes/10) + `{"id":"y"}]}`))
		case r.URL.Path == "/bad/models":
			w.Write([]byte(`<html>`))
		default:
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	got, err := ListModels(ctx, Config{Name: "anthropic", BaseURL: srv.URL, APIKey: "ak"})
	if err != nil || len(got) != 1 || got[0].Name != "Claude Sonnet 4.5" || got[0].ContextWindow != 200000 || !got[0].Vision {
		t.Errorf("anthropic: %+v, %v", got, err)
	}
	got, err = ListModels(ctx, Config{Name: "gemini", BaseURL: srv.URL, APIKey: "gk"})
	if err != nil || len(got) != 1 || got[0].ID != "gemini-2.5-pro" || got[0].ContextWindow != 1048576 {
		t.Errorf("gemini: %+v, %v", got, err)
	}
	for _, base := range []string{"/big", "/bad", "/nope"} {
		if got, err := ListModels(ctx, Config{Name: "openai-compatible", BaseURL: srv.URL + base, APIKey: "secret-key-123"}); err == nil {
			t.Errorf("%s: listed %d models", base, len(got))
		} else if strings.Contains(err.Error(), "secret-key-123") {
			t.Errorf("%s: the error shows the key: %v", base, err)
		}
	}
	if _, err := ListModels(ctx, Config{Name: "replay"}); err == nil {
		t.Error("replay listed models")
	}
	if k := KnownModels("anthropic"); len(k) == 0 || !strings.HasPrefix(k[0].ID, "claude-") {
		t.Errorf("known anthropic models: %+v", k)
	}
}
