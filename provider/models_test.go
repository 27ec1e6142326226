package provider

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/toolspec"
)

func TestContextWindow(t *testing.T) {
	for _, c := range []struct {
		name, model string
		want        int
	}{
		{"anthropic", "claude-sonnet-4-5-20250929", 200000},
		{"anthropic", "claude-opus-4-1", 200000},
		{"openrouter", "anthropic/claude-sonnet-4.5", 200000},
		{"openai", "gpt-5", 272000},
		{"openai", "gpt-5-codex", 272000},
		{"openai", "gpt-4.1-mini-2025-04-14", 1047576},
		{"openai", "gpt-4o", 128000},
		{"openai", "o4-mini", 200000},
		{"gemini", "gemini-2.5-flash", 1048576},
		{"gemini", "models/gemini-2.5-pro", 1048576},
		{"openai", "some-new-model", DefaultHostedWindow},
		{"ollama", "qwen2.5-coder:7b", DefaultLocalWindow},
		{"ollama", "gpt-oss:20b", DefaultLocalWindow},
		{"vllm", "claude-sonnet-4", DefaultLocalWindow},
		{"lm-studio", "x", DefaultLocalWindow},
	} {
		if got := ContextWindow(c.name, c.model); got != c.want {
			t.Errorf("ContextWindow(%q, %q) = %d, want %d", c.name, c.model, got, c.want)
		}
	}
}

type windowed struct {
	*Replay
	n int
}

func (w windowed) ContextWindow() int { return w.n }

func TestWindowForPrefersOverrideThenProvider(t *testing.T) {
	r := &Replay{}
	if got := WindowFor(windowed{r, 9000}, 0); got != 9000 {
		t.Errorf("reported window: got %d", got)
	}
	if got := WindowFor(windowed{r, 9000}, 4000); got != 4000 {
		t.Errorf("override: got %d", got)
	}
	if got := WindowFor(windowed{r, 0}, 0); got != DefaultHostedWindow {
		t.Errorf("no figure: got %d", got)
	}
}

func TestCost(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// Sonnet: 3 in, 15 out, 0.30 cache read, 3.75 cache write per MTok.
	got, ok := Cost("anthropic", "claude-sonnet-4-5", Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 10000, CacheWriteTokens: 2000})
	want := (1000*3 + 100*15 + 10000*0.3 + 2000*3.75) / 1e6
	if !ok || !near(got, want) {
		t.Errorf("sonnet cost = %v, %v; want %v", got, ok, want)
	}
	got, ok = Cost("openai", "gpt-5", Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000})
	if !ok || !near(got, 1.25+0.125) {
		t.Errorf("gpt-5 cost = %v, %v", got, ok)
	}
	if _, ok := Cost("ollama", "llama3", Usage{InputTokens: 5}); ok {
		t.Error("a local model has a price")
	}
	if _, ok := Cost("openai", "unheard-of", Usage{InputTokens: 5}); ok {
		t.Error("an unknown model has a price")
	}
}

// TestErrContextLengthFromServer checks the classification on what the
// OpenAI client makes of a real error response.
func TestErrContextLengthFromServer(t *testing.T) {
	f := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
			"type":    "invalid_request_error", "code": "context_length_exceeded"}})
	})
	p, err := New(Config{Name: "vllm", Model: "m", BaseURL: f.URL + "/v1", Retry: RetryPolicy{BaseDelay: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(t.Context(), Request{Messages: []Message{UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Collect(s)
	if !errors.Is(err, ErrContextLength) || WindowFromError(err) != 4096 {
		t.Fatalf("err = %v (is context length: %v, window %d)", err, errors.Is(err, ErrContextLength), WindowFromError(err))
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("a context-length error was retried: %d requests", n)
	}
}

func TestEstimateTokens(t *testing.T) {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100) // 4500 bytes
	req := Request{System: prose, Messages: []Message{UserText(prose)}}
	got := EstimateTokens(req)
	if got < 2000 || got > 2600 {
		t.Errorf("estimate for 9000 bytes of prose = %d, want about 2250", got)
	}
	args := json.RawMessage(`{"path":"a.go","old_text":"x","new_text":"y"}`)
	withCall := req
	withCall.Messages = append(withCall.Messages, Message{Role: RoleAssistant, Parts: []Part{CallPart(ToolCall{ID: "1", Name: "editor", Args: args})}})
	if d := EstimateTokens(withCall) - got; d < len(args)/4 {
		t.Errorf("a tool call adds %d tokens, want more than %d", d, len(args)/4)
	}
}

// TestEstimateCountsImages: an image counts for what a vendor charges
// for one, not for nothing (its data is no text part).
func TestEstimateCountsImages(t *testing.T) {
	req := toolImageRequest()
	without := toolImageRequest()
	without.Messages[2].Parts[0].Result.Images = nil
	if d := EstimateTokens(req) - EstimateTokens(without); d != imageTokens {
		t.Errorf("a result's image adds %d tokens to the estimate, want %d", d, imageTokens)
	}
	prompt := imageRequest()
	prompt.Messages[0].Parts = prompt.Messages[0].Parts[:1]
	if d := EstimateTokens(imageRequest()) - EstimateTokens(prompt); d != imageTokens {
		t.Errorf("a prompt's image adds %d tokens to the estimate, want %d", d, imageTokens)
	}
}

func TestFamily(t *testing.T) {
	for model, want := range map[string]toolspec.Family{
		"claude-sonnet-4-5-20250929": toolspec.FamilyNextGen,
		"anthropic/claude-opus-4.5":  toolspec.FamilyNextGen,
		"gpt-5":                      toolspec.FamilyNextGen,
		"gemini-2.5-pro":             toolspec.FamilyNextGen,
		"qwen2.5-coder:7b":           toolspec.FamilyXS,
		"llama-3.2-3b-instruct":      toolspec.FamilyXS,
		"deepseek-r1:1.5b":           toolspec.FamilyXS,
		"mistral-nemo-12B":           toolspec.FamilyXS,
		"qwen2.5-coder:32b":          toolspec.FamilyGeneric, // too big for the shortest prompt
		"gpt-oss-20b":                toolspec.FamilyGeneric,
		"gpt-4o-mini":                toolspec.FamilyGeneric,
		"claude-3-5-haiku-20241022":  toolspec.FamilyGeneric,
		"gemini-2.5-flash":           toolspec.FamilyGeneric,
		"some-local-model":           toolspec.FamilyGeneric,
		"gpt-5-mini":                 toolspec.FamilyGeneric,
		"":                           toolspec.FamilyGeneric,
	} {
		if got := Family(model); got != want {
			t.Errorf("Family(%q) = %s, want %s", model, got, want)
		}
	}
}
