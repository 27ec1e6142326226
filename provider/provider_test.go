package provider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestReplyAdd(t *testing.T) {
	var r Reply
	for _, ev := range []Event{
		{Kind: EventThinking, Text: "a"},
		{Kind: EventThinking, Text: "b"},
		{Kind: EventThinking, Signature: "s1"},
		{Kind: EventThinking, Text: "c"}, // a new block after a signed one
		{Kind: EventThinking, Signature: "R", Redacted: true},
		{Kind: EventText, Text: "Hel"},
		{Kind: EventText, Text: "lo"},
		{Kind: EventToolCall, Call: &ToolCall{ID: "1", Name: "x", Args: json.RawMessage(`{}`)}},
		{Kind: EventText, Text: "after"},
		{Kind: EventUsage, Usage: &Usage{InputTokens: 3, OutputTokens: 4}},
		{Kind: EventDone, Stop: StopToolUse},
	} {
		r.Add(ev)
	}
	got, _ := json.Marshal(r.Message)
	want := `{"role":"assistant","parts":[` +
		`{"kind":"thinking","text":"ab","signature":"s1"},` +
		`{"kind":"thinking","text":"c"},` +
		`{"kind":"thinking","signature":"R","redacted":true},` +
		`{"kind":"text","text":"Hello"},` +
		`{"kind":"tool_call","call":{"id":"1","name":"x","args":{}}},` +
		`{"kind":"text","text":"after"}]}`
	if string(got) != want {
		t.Errorf("message =\n%s\nwant\n%s", got, want)
	}
	if !r.Done || r.Stop != StopToolUse || r.Usage.OutputTokens != 4 || r.Text() != "Helloafter" || len(r.Calls()) != 1 {
		t.Errorf("reply = %+v", r)
	}
}

func TestToolsAsText(t *testing.T) {
	hist := []Message{
		UserText("Edit it."),
		{Role: RoleAssistant, Parts: []Part{
			ThinkingPart("hmm", "sig"),
			TextPart("Editing."),
			CallPart(ToolCall{ID: "1", Name: "editor", Args: json.RawMessage(`{"path":"a.go","old_text":"x < y && z","new_text":"line1\nline2","insert_line":3,"opts":{"b":[1, 2]}}`)}),
		}},
		{Role: RoleTool, Parts: []Part{
			ResultPart(ToolResult{CallID: "1", Name: "editor", Content: "No replacement performed: text not found in a.go.", IsError: true}),
		}},
		UserText("Try again."),
	}
	got := ToolsAsText(hist)
	if len(got) != 3 {
		t.Fatalf("%d messages, want 3 (the result and the next user words merged): %+v", len(got), got)
	}
	call := "<editor>\n<path>a.go</path>\n<old_text>x < y && z</old_text>\n<new_text>line1\nline2</new_text>\n<insert_line>3</insert_line>\n<opts>{\"b\":[1,2]}</opts>\n</editor>"
	if a := got[1]; a.Role != RoleAssistant || len(a.Parts) != 2 || a.Parts[0].Kind != PartThinking || a.Parts[1].Text != "Editing.\n\n"+call {
		t.Errorf("assistant = %+v\nwant thinking kept and text %q", a, "Editing.\n\n"+call)
	}
	wantUser := "[editor] Error:\nNo replacement performed: text not found in a.go.\n\nTry again."
	if u := got[2]; u.Role != RoleUser || len(u.Parts) != 1 || u.Parts[0].Text != wantUser {
		t.Errorf("user = %+v, want %q", u, wantUser)
	}
	// The input is untouched.
	if hist[1].Parts[2].Kind != PartToolCall || hist[2].Role != RoleTool || hist[1].Parts[1].Text != "Editing." {
		t.Error("ToolsAsText modified its input")
	}
}

func TestCallXMLNonObjectArgs(t *testing.T) {
	if got := CallXML(ToolCall{Name: "x", Args: json.RawMessage(`"{broken"`)}); got != "<x>\n</x>" {
		t.Errorf("CallXML = %q", got)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		wantErr string
		name    string
		native  bool
	}{
		{cfg: Config{Name: "nope", Model: "m"}, wantErr: `unknown provider "nope"`},
		{cfg: Config{Model: "m"}, wantErr: "no provider named"},
		{cfg: Config{Name: "anthropic", APIKey: "k"}, wantErr: "needs a model"},
		{cfg: Config{Name: "anthropic", Model: "m"}, wantErr: "needs an API key"},
		{cfg: Config{Name: "gemini", Model: "m"}, wantErr: "needs an API key"},
		{cfg: Config{Name: "openrouter", Model: "m"}, wantErr: "needs an API key"},
		{cfg: Config{Name: "openai-compatible", Model: "m"}, wantErr: "needs a base URL"},
		{cfg: Config{Name: "Claude", Model: "m", APIKey: "k"}, name: "anthropic", native: true},
		{cfg: Config{Name: "openai", Model: "m", APIKey: "k"}, name: "openai", native: true},
		{cfg: Config{Name: "ollama", Model: "m"}, name: "ollama", native: false},
		{cfg: Config{Name: "LM-Studio", Model: "m"}, name: "lmstudio", native: false},
		{cfg: Config{Name: "vllm", Model: "m"}, name: "vllm", native: false},
		{cfg: Config{Name: "openrouter", Model: "m", APIKey: "k"}, name: "openrouter", native: true},
		{cfg: Config{Name: "openai-compatible", Model: "m", BaseURL: "http://127.0.0.1:9/v1"}, name: "openai-compatible", native: false},
		{cfg: Config{Name: "gemini", Model: "m", APIKey: "k"}, name: "gemini", native: true},
	} {
		p, err := New(tc.cfg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("New(%+v) error = %v, want %q", tc.cfg, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%+v): %v", tc.cfg, err)
			continue
		}
		if p.Name() != tc.name || p.Model() != "m" || p.NativeTools() != tc.native {
			t.Errorf("New(%+v) = %s/%s native %v, want %s/m native %v", tc.cfg, p.Name(), p.Model(), p.NativeTools(), tc.name, tc.native)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	if p.MaxAttempts != 4 {
		t.Errorf("default attempts = %d, want 4", p.MaxAttempts)
	}
	for n, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 50 {
			if d := p.backoff(n); d < base/2 || d > base {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, base/2, base)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestScrubber(t *testing.T) {
	key := "sk/ab+c d"
	s := newScrubber(key)
	in := "key sk/ab+c d, query sk%2Fab%2Bc+d, path sk%2Fab+c%20d"
	got := s.scrub(in)
	if strings.Contains(got, "sk") {
		t.Errorf("scrub(%q) = %q", in, got)
	}
	if newScrubber("").scrub("text") != "text" {
		t.Error("an empty secret changed text")
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Provider: "openai", Status: 429, Attempts: 4, Message: "slow down"}, "openai: HTTP 429 Too Many Requests after 4 attempts: slow down"},
		{Error{Provider: "gemini", Status: 400, Attempts: 1, Message: "bad"}, "gemini: HTTP 400 Bad Request (1 attempt): bad"},
		{Error{Provider: "anthropic", Attempts: 1, Partial: true, Message: "stream broken: unexpected EOF"}, "anthropic: stream broken after part of the reply was delivered (not retried): stream broken: unexpected EOF"},
		{Error{Provider: "ollama", Attempts: 4, Message: "connection failed: refused"}, "ollama: request failed after 4 attempts: connection failed: refused"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
