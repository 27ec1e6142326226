package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

var anthropicDialect = dialect{
	name: "anthropic",
	newProvider: func(t *testing.T, baseURL string, policy RetryPolicy) Provider {
		t.Helper()
		p, err := New(Config{Name: "anthropic", Model: "claude-test", BaseURL: baseURL, APIKey: testKey, Retry: policy})
		if err != nil {
			t.Fatal(err)
		}
		return p
	},
	reply: func(w http.ResponseWriter, chunks []string) {
		s := anthropicStart(w)
		anthropicText(s, 0, chunks...)
		anthropicEnd(s, "end_turn", 12)
	},
	begin: func(w http.ResponseWriter, chunk string) sseWriter {
		s := anthropicStart(w)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": chunk}})
		return s
	},
	preamble: anthropicStart,
	errorBody: func(status int, message string) string {
		typ := "api_error"
		switch status {
		case 429:
			typ = "rate_limit_error"
		case 401:
			typ = "authentication_error"
		}
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
		return string(b)
	},
}

func anthropicStart(w http.ResponseWriter) sseWriter {
	s := startSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200},
	}})
	s.event("ping", map[string]any{"type": "ping"})
	return s
}

func anthropicText(s sseWriter, index int, chunks ...string) {
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
	for _, c := range chunks {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": c}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

func anthropicEnd(s sseWriter, stop string, output int) {
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

func TestAnthropicToolCallsAndThinking(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := anthropicStart(w)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, c := range []string{"The user wants ", "main.go."} {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": c}})
		}
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "sig-abc"}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		anthropicText(s, 1, "Reading.")
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 2, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "read_files", "input": map[string]any{}}})
		// The arguments arrive cut in the middle of a string and of a key.
		for _, c := range []string{``, `{"files": [{"pa`, `th": "cmd/ma`, `in.go", "start_`, `line": 3}]}`} {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 2, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 2})
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 3, "content_block": map[string]any{"type": "tool_use", "id": "toolu_2", "name": "list_files", "input": map[string]any{}}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 3})
		anthropicEnd(s, "tool_use", 80)
	})
	p := anthropicDialect.newProvider(t, srv.URL, fastRetry)
	temp := 0.25
	s, err := p.Stream(context.Background(), Request{
		System:         "SYSTEM PROMPT",
		Messages:       sampleHistory(),
		Tools:          sampleTools(),
		MaxTokens:      4096,
		ThinkingBudget: 2048,
		Temperature:    &temp,
	})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if reply.Stop != StopToolUse || !reply.Done {
		t.Errorf("stop = %q done = %v, want tool_use, done", reply.Stop, reply.Done)
	}
	want := Usage{InputTokens: 25, OutputTokens: 80, CacheReadTokens: 1000, CacheWriteTokens: 200}
	if reply.Usage != want {
		t.Errorf("usage = %+v, want %+v", reply.Usage, want)
	}
	parts := reply.Message.Parts
	if len(parts) != 4 || parts[0].Kind != PartThinking || parts[1].Kind != PartText || parts[2].Kind != PartToolCall || parts[3].Kind != PartToolCall {
		t.Fatalf("parts = %+v, want thinking, text, two calls", parts)
	}
	if parts[0].Text != "The user wants main.go." || parts[0].Signature != "sig-abc" {
		t.Errorf("thinking = %+v", parts[0])
	}
	calls := reply.Calls()
	assertJSON(t, calls[0].Args, `{"files":[{"path":"cmd/main.go","start_line":3}]}`)
	if calls[0].ID != "toolu_1" || calls[0].Name != "read_files" {
		t.Errorf("call = %+v", calls[0])
	}
	assertJSON(t, calls[1].Args, `{}`)

	body := srv.body(0)
	if get(body, "stream") != true || get(body, "model") != "claude-test" || get(body, "max_tokens") != 4096.0 {
		t.Errorf("stream/model/max_tokens wrong: %v %v %v", get(body, "stream"), get(body, "model"), get(body, "max_tokens"))
	}
	if get(body, "temperature") != 0.25 {
		t.Errorf("temperature = %v, want 0.25", get(body, "temperature"))
	}
	if get(body, "thinking", "type") != "enabled" || get(body, "thinking", "budget_tokens") != 2048.0 {
		t.Errorf("thinking = %v", get(body, "thinking"))
	}
	// System prompt as a cached text block.
	if get(body, "system", 0, "text") != "SYSTEM PROMPT" || get(body, "system", 0, "cache_control", "type") != "ephemeral" {
		t.Errorf("system = %v, want one cached text block", get(body, "system"))
	}
	// Tools in the Anthropic shape, the last one cached.
	if get(body, "tools", 0, "name") != "read_files" || get(body, "tools", 0, "input_schema", "type") != "object" ||
		get(body, "tools", 0, "input_schema", "properties", "files", "items", "properties", "path", "type") != "string" ||
		get(body, "tools", 0, "input_schema", "required", 0) != "files" {
		t.Errorf("tool 0 not in the Anthropic shape: %v", get(body, "tools", 0))
	}
	if get(body, "tools", 0, "cache_control") != nil || get(body, "tools", -1, "cache_control", "type") != "ephemeral" {
		t.Errorf("cache_control should be on the last tool only: %v", get(body, "tools"))
	}
	if get(body, "tools", 1, "input_schema", "properties", "order", "enum", 1) != "mtime" {
		t.Errorf("enum lost: %v", get(body, "tools", 1))
	}
	// History: user, assistant (text + tool_use), user (tool_result + text merged).
	msgs, _ := get(body, "messages").([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v, want 3 (tool results merged into the last user turn)", msgs)
	}
	if get(msgs[1], "content", 1, "type") != "tool_use" || get(msgs[1], "content", 1, "input", "files", 0, "path") != "main.go" {
		t.Errorf("assistant turn = %v", msgs[1])
	}
	last := msgs[2]
	if get(last, "role") != "user" || get(last, "content", 0, "type") != "tool_result" || get(last, "content", 0, "tool_use_id") != "call_1" ||
		get(last, "content", 1, "text") != "Now explain it." {
		t.Errorf("last user turn = %v, want the tool result first, then the text", last)
	}
	if get(last, "content", -1, "cache_control", "type") != "ephemeral" || get(msgs[0], "content", -1, "cache_control", "type") != "ephemeral" {
		t.Errorf("the last two user turns should end with cache_control: %v", msgs)
	}
	if get(msgs[1], "content", -1, "cache_control") != nil {
		t.Errorf("assistant turns get no cache_control: %v", msgs[1])
	}
}

func TestAnthropicThinkingRoundTrip(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := anthropicStart(w)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "redacted_thinking", "data": "ENCRYPTED"}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		anthropicText(s, 1, "done")
		anthropicEnd(s, "max_tokens", 5)
	})
	p := anthropicDialect.newProvider(t, srv.URL, fastRetry)
	hist := []Message{
		UserText("q"),
		{Role: RoleAssistant, Parts: []Part{
			ThinkingPart("signed thought", "sig-1"),
			ThinkingPart("unsigned thought", ""),
			{Kind: PartThinking, Signature: "OPAQUE", Redacted: true},
			TextPart("a"),
		}},
		UserText("go on"),
	}
	s, err := p.Stream(context.Background(), Request{Messages: hist})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Stop != StopMaxTokens {
		t.Errorf("stop = %q, want max_tokens", reply.Stop)
	}
	if p := reply.Message.Parts[0]; !p.Redacted || p.Signature != "ENCRYPTED" {
		t.Errorf("redacted thinking = %+v", p)
	}
	body := srv.body(0)
	content := get(body, "messages", 1, "content").([]any)
	if len(content) != 3 {
		t.Fatalf("assistant content = %v, want signed thinking, redacted thinking, text (unsigned dropped)", content)
	}
	if get(content[0], "type") != "thinking" || get(content[0], "signature") != "sig-1" || get(content[1], "type") != "redacted_thinking" || get(content[1], "data") != "OPAQUE" {
		t.Errorf("thinking blocks = %v", content)
	}
	if get(body, "max_tokens") != float64(defaultAnthropicMaxTokens) {
		t.Errorf("max_tokens = %v, want the default", get(body, "max_tokens"))
	}
	if get(body, "system") != nil || get(body, "tools") != nil {
		t.Errorf("empty system and tools should be omitted: %v %v", get(body, "system"), get(body, "tools"))
	}
}

func TestAnthropicThinkingBudgetMustFit(t *testing.T) {
	p := anthropicDialect.newProvider(t, "http://127.0.0.1:1", fastRetry)
	_, err := p.Stream(context.Background(), Request{Messages: []Message{UserText("x")}, MaxTokens: 1000, ThinkingBudget: 1024})
	if err == nil || !strings.Contains(err.Error(), "thinking budget") {
		t.Errorf("error = %v, want the budget refused before sending", err)
	}
}

func TestAnthropicInStreamErrorIsRetriedBeforeDelivery(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			s := anthropicStart(w)
			s.event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		anthropicDialect.reply(w, []string{"fine"})
	})
	p := anthropicDialect.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, anthropicDialect.stream(t, p, context.Background()))
	if err != nil || texts(evs, EventText) != "fine" {
		t.Fatalf("got %q, %v; want the retried reply", texts(evs, EventText), err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestAnthropicXMLPath(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		anthropicDialect.reply(w, []string{"<read_files>"})
	})
	off := false
	p, err := New(Config{Name: "anthropic", Model: "m", BaseURL: srv.URL, APIKey: testKey, NativeTools: &off})
	if err != nil {
		t.Fatal(err)
	}
	if p.NativeTools() {
		t.Fatal("NativeTools() = true, want false as configured")
	}
	s, _ := p.Stream(context.Background(), Request{Messages: sampleHistory(), Tools: sampleTools()})
	if _, err := Collect(s); err != nil {
		t.Fatal(err)
	}
	body := srv.body(0)
	if get(body, "tools") != nil {
		t.Errorf("tools sent natively on the XML path: %v", get(body, "tools"))
	}
	raw := fmt.Sprint(get(body, "messages"))
	if strings.Contains(raw, "tool_use") || strings.Contains(raw, "tool_result") {
		t.Errorf("native tool blocks on the XML path: %s", raw)
	}
	if !strings.Contains(raw, "<read_files>") || !strings.Contains(raw, "[read_files] Result:") {
		t.Errorf("tool call and result not rendered as text: %s", raw)
	}
}

// assertJSON compares JSON semantically.
func assertJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("invalid JSON %s: %v", got, err)
		return
	}
	_ = json.Unmarshal([]byte(want), &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("JSON = %s, want %s", gb, wb)
	}
}
