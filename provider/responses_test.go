package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// responsesDialect is OpenAI's Responses API as its documented stream
// shapes it: every event named, its type repeated in the data, a
// sequence number on each.
var responsesDialect = dialect{
	name: "openai-responses",
	newProvider: func(t *testing.T, baseURL string, policy RetryPolicy) Provider {
		t.Helper()
		p, err := New(Config{Name: "openai", Model: "gpt-5-codex", BaseURL: baseURL, APIKey: testKey, Retry: policy})
		if err != nil {
			t.Fatal(err)
		}
		return p
	},
	reply: func(w http.ResponseWriter, chunks []string) {
		s := responsesBegin(w)
		responsesMessage(s, chunks)
		responsesCompleted(s, "response.completed", 40, 7, 10)
	},
	begin: func(w http.ResponseWriter, chunk string) sseWriter {
		s := responsesBegin(w)
		sendResponsesEvent(s, "response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": []any{}}})
		sendResponsesEvent(s, "response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": chunk})
		return s
	},
	preamble: responsesBegin,
	errorBody: func(status int, message string) string {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error", "param": nil, "code": nil}})
		return string(b)
	},
}

var responsesSeq int

func sendResponsesEvent(s sseWriter, typ string, data map[string]any) {
	responsesSeq++
	data["type"] = typ
	data["sequence_number"] = responsesSeq
	s.event(typ, data)
}

func responsesBegin(w http.ResponseWriter) sseWriter {
	s := startSSE(w)
	resp := map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5-codex", "output": []any{}}
	sendResponsesEvent(s, "response.created", map[string]any{"response": resp})
	sendResponsesEvent(s, "response.in_progress", map[string]any{"response": resp})
	return s
}

func responsesMessage(s sseWriter, chunks []string) {
	sendResponsesEvent(s, "response.output_item.added", map[string]any{"output_index": 1, "item": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": []any{}}})
	for _, c := range chunks {
		sendResponsesEvent(s, "response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": c})
	}
	sendResponsesEvent(s, "response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": 1, "content_index": 0, "text": strings.Join(chunks, "")})
	sendResponsesEvent(s, "response.output_item.done", map[string]any{"output_index": 1, "item": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}})
}

func responsesCompleted(s sseWriter, typ string, input, output, cached int) {
	resp := map[string]any{"id": "resp_1", "object": "response", "status": strings.TrimPrefix(typ, "response."),
		"usage": map[string]any{"input_tokens": input, "output_tokens": output, "total_tokens": input + output,
			"input_tokens_details": map[string]any{"cached_tokens": cached}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	if typ == "response.incomplete" {
		resp["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	sendResponsesEvent(s, typ, map[string]any{"response": resp})
}

func TestResponsesClientConformance(t *testing.T) {
	d := responsesDialect
	t.Run("TextStreams", d.testText)
	t.Run("RetriesRateLimitHonouringRetryAfter", d.testRetry429)
	t.Run("ServerErrorsExhaustRetries", d.testExhausted)
	t.Run("ClientErrorNotRetried", d.testNotRetried)
	t.Run("LongRetryAfterGivesUp", d.testLongRetryAfter)
	t.Run("CutBeforeEventsIsRetried", d.testCutBeforeEvents)
	t.Run("CutMidReplyIsReportedNotRetried", d.testCutMidReply)
	t.Run("CancelMidStreamReturnsPromptly", d.testCancel)
	t.Run("BreakClosesConnection", d.testBreak)
	t.Run("ConnectionRefusedIsRetried", d.testRefused)
}

// TestResponsesTurnKeepsReasoning streams a reply as a codex model gives
// it (a reasoning item with a two-part summary and its encrypted
// content, a call whose arguments arrive in pieces, a second call whose
// arguments come only whole), then sends the next request: the
// reasoning goes back, encrypted, before the calls it led to, and each
// result answers its call.
func TestResponsesTurnKeepsReasoning(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := responsesBegin(w)
		if n > 0 {
			responsesMessage(s, []string{"Done."})
			responsesCompleted(s, "response.completed", 300, 4, 200)
			return
		}
		sendResponsesEvent(s, "response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "rs_1", "type": "reasoning", "summary": []any{}}})
		sendResponsesEvent(s, "response.reasoning_summary_part.added", map[string]any{"item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		sendResponsesEvent(s, "response.reasoning_summary_text.delta", map[string]any{"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Look at main."})
		sendResponsesEvent(s, "response.reasoning_summary_part.added", map[string]any{"item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": map[string]any{"type": "summary_text", "text": ""}})
		sendResponsesEvent(s, "response.reasoning_summary_text.delta", map[string]any{"item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "Then list."})
		sendResponsesEvent(s, "response.output_item.done", map[string]any{"output_index": 0, "item": map[string]any{"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA-secret-blob",
			"summary": []any{map[string]any{"type": "summary_text", "text": "Look at main."}, map[string]any{"type": "summary_text", "text": "Then list."}}}})
		sendResponsesEvent(s, "response.output_item.added", map[string]any{"output_index": 1, "item": map[string]any{"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "read_files", "arguments": ""}})
		for _, c := range []string{`{"files":[{"pa`, `th":"main.go"}]}`} {
			sendResponsesEvent(s, "response.function_call_arguments.delta", map[string]any{"item_id": "fc_1", "output_index": 1, "delta": c})
		}
		sendResponsesEvent(s, "response.function_call_arguments.done", map[string]any{"item_id": "fc_1", "output_index": 1, "arguments": `{"files":[{"path":"main.go"}]}`})
		sendResponsesEvent(s, "response.output_item.done", map[string]any{"output_index": 1, "item": map[string]any{"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "read_files", "arguments": `{"files":[{"path":"main.go"}]}`, "status": "completed"}})
		sendResponsesEvent(s, "response.output_item.done", map[string]any{"output_index": 2, "item": map[string]any{"id": "fc_2", "type": "function_call", "call_id": "call_b", "name": "list_files", "arguments": `{"path":"."}`, "status": "completed"}})
		responsesCompleted(s, "response.completed", 120, 30, 0)
	})
	p := responsesDialect.newProvider(t, srv.URL, fastRetry)
	history := []Message{UserText("Read main.go and list the folder.")}
	s, err := p.Stream(context.Background(), Request{System: "SYS", Messages: history, Tools: sampleTools(), ReasoningEffort: "high"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Collect(s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if reply.Stop != StopToolUse {
		t.Errorf("stop = %q, want tool_use", reply.Stop)
	}
	if want := (Usage{InputTokens: 120, OutputTokens: 30}); reply.Usage != want {
		t.Errorf("usage = %+v, want %+v", reply.Usage, want)
	}
	parts := reply.Message.Parts
	if len(parts) != 3 || parts[0].Kind != PartThinking || parts[0].Text != "Look at main.\n\nThen list." || parts[0].Signature != "gAAAA-secret-blob" {
		t.Fatalf("parts = %+v, want the reasoning (summary and encrypted content) then two calls", parts)
	}
	calls := reply.Calls()
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Name != "read_files" || calls[1].ID != "call_b" {
		t.Fatalf("calls = %+v", calls)
	}
	assertJSON(t, calls[0].Args, `{"files":[{"path":"main.go"}]}`)
	assertJSON(t, calls[1].Args, `{"path":"."}`)

	first := srv.body(0)
	if get(first, "store") != false || get(first, "stream") != true || get(first, "instructions") != "SYS" ||
		get(first, "reasoning", "effort") != "high" || get(first, "include", 0) != "reasoning.encrypted_content" {
		t.Errorf("first request = %v", first)
	}
	if get(first, "tools", 0, "type") != "function" || get(first, "tools", 0, "name") == nil || get(first, "tools", 0, "function") != nil {
		t.Errorf("tools = %v, want Responses' flat function tools", get(first, "tools"))
	}
	if get(first, "input", 0, "role") != "user" || get(first, "input", 0, "content", 0, "type") != "input_text" {
		t.Errorf("input = %v", get(first, "input"))
	}

	history = append(history, reply.Message, Message{Role: RoleUser, Parts: []Part{
		ResultPart(ToolResult{CallID: "call_a", Name: "read_files", Content: "package main"}),
		ResultPart(ToolResult{CallID: "call_b", Name: "list_files", Content: "no such folder", IsError: true}),
	}})
	s, err = p.Stream(context.Background(), Request{System: "SYS", Messages: history, Tools: sampleTools()})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err = Collect(s); err != nil || reply.Text() != "Done." || reply.Stop != StopEndTurn {
		t.Fatalf("second reply = %+v, %v", reply, err)
	}
	if want := (Usage{InputTokens: 100, OutputTokens: 4, CacheReadTokens: 200}); reply.Usage != want {
		t.Errorf("usage = %+v, want cached tokens apart: %+v", reply.Usage, want)
	}
	second := srv.body(1)
	in := get(second, "input")
	items, _ := in.([]any)
	var types []string
	for _, it := range items {
		types = append(types, get(it, "type").(string))
	}
	if strings.Join(types, " ") != "message reasoning function_call function_call function_call_output function_call_output" {
		t.Fatalf("input item types = %v", types)
	}
	if get(items[1], "encrypted_content") != "gAAAA-secret-blob" || get(items[1], "summary", 0, "text") != "Look at main.\n\nThen list." {
		t.Errorf("reasoning item = %v", items[1])
	}
	if get(items[2], "call_id") != "call_a" || get(items[2], "name") != "read_files" {
		t.Errorf("call item = %v", items[2])
	}
	if get(items[4], "call_id") != "call_a" || get(items[4], "output") != "package main" || get(items[5], "output") != "Error: no such folder" {
		t.Errorf("outputs = %v %v", items[4], items[5])
	}
}

// TestResponsesStreamErrors: the errors the API reports inside a stream,
// each as the user would read it, and a reply cut by its token limit.
func TestResponsesStreamErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(s sseWriter)
		want string
	}{
		{"error event", func(s sseWriter) {
			sendResponsesEvent(s, "error", map[string]any{"code": "server_error", "message": "The server had an error while processing your request.", "param": nil})
		}, "The server had an error"},
		{"failed response", func(s sseWriter) {
			sendResponsesEvent(s, "response.failed", map[string]any{"response": map[string]any{"id": "resp_1", "status": "failed",
				"error": map[string]any{"code": "rate_limit_exceeded", "message": "Rate limit reached for gpt-5-codex."}}})
		}, "Rate limit reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				s := responsesDialect.begin(w, "Partial ")
				tc.send(s)
			})
			p := responsesDialect.newProvider(t, srv.URL, fastRetry)
			s, err := p.Stream(context.Background(), Request{Messages: []Message{UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Collect(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("max output tokens", func(t *testing.T) {
		srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			s := responsesBegin(w)
			responsesMessage(s, []string{"cut"})
			responsesCompleted(s, "response.incomplete", 10, 5, 0)
		})
		p := responsesDialect.newProvider(t, srv.URL, fastRetry)
		s, _ := p.Stream(context.Background(), Request{Messages: []Message{UserText("hi")}, MaxTokens: 5})
		reply, err := Collect(s)
		if err != nil || reply.Stop != StopMaxTokens {
			t.Fatalf("reply = %+v, %v; want max_tokens", reply, err)
		}
		if get(srv.body(0), "max_output_tokens") != float64(5) {
			t.Errorf("max_output_tokens not sent: %v", srv.body(0))
		}
	})
}

// TestResponsesOnlyWhereServed: the codex and -pro models of OpenAI go to
// the Responses API, everything else stays on Chat Completions, and the
// setting overrides both ways.
func TestResponsesOnlyWhereServed(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Name: "openai", Model: "gpt-5-codex"}, true},
		{Config{Name: "openai", Model: "gpt-5.1-codex-mini"}, true},
		{Config{Name: "openai", Model: "codex-mini-latest"}, true},
		{Config{Name: "openai", Model: "o3-pro"}, true},
		{Config{Name: "openai", Model: "gpt-5-pro-2025-10-06"}, true},
		{Config{Name: "openai", Model: "gpt-5"}, false},
		{Config{Name: "openai", Model: "gpt-4o-mini"}, false},
		{Config{Name: "openai", Model: "gpt-5-codex", API: "chat"}, false},
		{Config{Name: "openai", Model: "gpt-5", API: "Responses"}, true},
		{Config{Name: "openrouter", Model: "openai/gpt-5-codex"}, false},
		{Config{Name: "openai-compatible", Model: "codex", BaseURL: "http://127.0.0.1:9/v1"}, false},
		{Config{Name: "vllm", Model: "gpt-oss-120b", API: "responses"}, true},
	} {
		cfg := tc.cfg
		if cfg.APIKey == "" {
			cfg.APIKey = "k"
		}
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		if _, got := p.(*responsesClient); got != tc.want {
			t.Errorf("%s %s api %q: Responses = %v, want %v", cfg.Name, cfg.Model, cfg.API, got, tc.want)
		}
	}
	if _, err := New(Config{Name: "openai", Model: "gpt-5", APIKey: "k", API: "completions"}); err == nil || !strings.Contains(err.Error(), "want responses or chat") {
		t.Errorf("an unknown API = %v", err)
	}
}
