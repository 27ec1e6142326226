package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// The reasoning settings reach each vendor's own request field, in the
// shape it takes.
func TestReasoningOnTheWire(t *testing.T) {
	field := map[string][]any{
		"openai":    {"reasoning_effort"},
		"anthropic": {"thinking", "budget_tokens"},
		"gemini":    {"generationConfig", "thinkingConfig", "thinkingBudget"},
	}
	cases := []struct {
		name    string
		cfg     Reasoning
		req     Request
		want    map[string]any
		anthMax float64 // Anthropic's max_tokens
	}{
		{"effort", Reasoning{Effort: "high"}, Request{},
			map[string]any{"openai": "high", "anthropic": 24576.0, "gemini": 24576.0}, 24576 + 8192},
		{"budget", Reasoning{Budget: 3000}, Request{},
			map[string]any{"openai": "low", "anthropic": 3000.0, "gemini": 3000.0}, 3000 + 8192},
		{"the request's own over the settings", Reasoning{Effort: "low"}, Request{ReasoningEffort: "medium"},
			map[string]any{"openai": "medium", "anthropic": 8192.0, "gemini": 8192.0}, 8192 + 8192},
		{"none", Reasoning{}, Request{},
			map[string]any{"openai": nil, "anthropic": nil, "gemini": nil}, 8192},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { d.reply(w, []string{"ok"}) })
			for i, tc := range cases {
				p, err := New(Config{Name: d.name, Model: "m", BaseURL: srv.URL, APIKey: testKey, Reasoning: tc.cfg})
				if err != nil {
					t.Fatal(err)
				}
				req := tc.req
				req.Messages = []Message{UserText("think")}
				s, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := drain(t, s); err != nil {
					t.Fatal(err)
				}
				body := srv.body(i)
				if got := get(body, field[d.name]...); got != tc.want[d.name] {
					t.Errorf("%s: %v = %v, want %v", tc.name, field[d.name], got, tc.want[d.name])
				}
				if d.name == "anthropic" && get(body, "max_tokens") != tc.anthMax {
					t.Errorf("%s: max_tokens = %v, want %v: room for the answer after the thinking", tc.name, get(body, "max_tokens"), tc.anthMax)
				}
				if d.name == "gemini" && tc.want["gemini"] != nil && get(body, "generationConfig", "thinkingConfig", "includeThoughts") != true {
					t.Errorf("%s: thought summaries not asked for", tc.name)
				}
			}
		})
	}
}

func TestReasoningSettingRefused(t *testing.T) {
	_, err := New(Config{Name: "openai", Model: "m", APIKey: testKey, Reasoning: Reasoning{Effort: "max"}})
	if err == nil || !strings.Contains(err.Error(), `"max"`) {
		t.Errorf("New = %v, want the effort refused", err)
	}
}
