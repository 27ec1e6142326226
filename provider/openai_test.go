package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

var openaiDialect = dialect{
	name: "openai",
	newProvider: func(t *testing.T, baseURL string, policy RetryPolicy) Provider {
		t.Helper()
		p, err := New(Config{Name: "openai", Model: "gpt-test", BaseURL: baseURL, APIKey: testKey, Retry: policy})
		if err != nil {
			t.Fatal(err)
		}
		return p
	},
	reply: func(w http.ResponseWriter, chunks []string) {
		s := startSSE(w)
		for i, c := range chunks {
			delta := map[string]any{"content": c}
			if i == 0 {
				delta["role"] = "assistant"
			}
			s.event("", openaiChunk(delta, nil))
		}
		s.event("", openaiChunk(map[string]any{}, "stop"))
		s.event("", openaiUsage(40, 7, 10))
		s.event("", "[DONE]")
	},
	begin: func(w http.ResponseWriter, chunk string) sseWriter {
		s := startSSE(w)
		s.event("", openaiChunk(map[string]any{"role": "assistant", "content": chunk}, nil))
		return s
	},
	preamble: func(w http.ResponseWriter) sseWriter {
		s := startSSE(w)
		s.event("", openaiChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		return s
	},
	errorBody: func(status int, message string) string {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error", "param": nil, "code": nil}})
		return string(b)
	},
}

func openaiChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

func openaiUsage(prompt, completion, cached int) map[string]any {
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}},
	}
}

func openaiToolDelta(index int, id, name, args string) map[string]any {
	tc := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
		tc["function"].(map[string]any)["name"] = name
	}
	return map[string]any{"tool_calls": []any{tc}}
}

func TestOpenAIToolCallsSplitAcrossChunks(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", openaiChunk(map[string]any{"role": "assistant", "content": "Reading both."}, nil))
		s.event("", openaiChunk(openaiToolDelta(0, "call_a", "read_files", ""), nil))
		s.event("", openaiChunk(openaiToolDelta(1, "call_b", "list_files", `{"pa`), nil))
		for _, c := range []string{`{"files":[{"pa`, `th":"cmd/ma`, `in.go","start_`, `line":3}]}`} {
			s.event("", openaiChunk(openaiToolDelta(0, "", "", c), nil))
		}
		s.event("", openaiChunk(openaiToolDelta(1, "", "", `th":"."}`), nil))
		s.event("", openaiChunk(map[string]any{}, "tool_calls"))
		s.event("", openaiUsage(100, 20, 60))
		s.event("", "[DONE]")
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	s, err := p.Stream(context.Background(), Request{System: "SYS", Messages: sampleHistory(), Tools: sampleTools(), MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if reply.Stop != StopToolUse {
		t.Errorf("stop = %q, want tool_use", reply.Stop)
	}
	if want := (Usage{InputTokens: 40, OutputTokens: 20, CacheReadTokens: 60}); reply.Usage != want {
		t.Errorf("usage = %+v, want %+v", reply.Usage, want)
	}
	calls := reply.Calls()
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Name != "read_files" || calls[1].ID != "call_b" || calls[1].Name != "list_files" {
		t.Fatalf("calls = %+v", calls)
	}
	assertJSON(t, calls[0].Args, `{"files":[{"path":"cmd/main.go","start_line":3}]}`)
	assertJSON(t, calls[1].Args, `{"path":"."}`)

	body := srv.body(0)
	if get(body, "stream") != true || get(body, "stream_options", "include_usage") != true || get(body, "max_completion_tokens") != 2000.0 {
		t.Errorf("stream options wrong: %v", body)
	}
	tool := get(body, "tools", 0)
	if get(tool, "type") != "function" || get(tool, "function", "name") != "read_files" || get(tool, "function", "strict") != false ||
		get(tool, "function", "parameters", "type") != "object" || get(tool, "function", "parameters", "additionalProperties") != false ||
		get(tool, "function", "parameters", "properties", "files", "items", "properties", "path", "type") != "string" {
		t.Errorf("tool not in the OpenAI shape: %v", tool)
	}
	msgs := get(body, "messages").([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, fmt.Sprint(get(m, "role")))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Fatalf("roles = %v", roles)
	}
	if get(msgs[0], "content") != "SYS" {
		t.Errorf("system message = %v", msgs[0])
	}
	if get(msgs[2], "tool_calls", 0, "id") != "call_1" || get(msgs[2], "tool_calls", 0, "function", "arguments") != `{"files":[{"path":"main.go"}]}` {
		t.Errorf("assistant tool call = %v", msgs[2])
	}
	if get(msgs[3], "tool_call_id") != "call_1" || get(msgs[3], "content") != "1 | package main" {
		t.Errorf("tool message = %v", msgs[3])
	}
}

func TestOpenAICompatibleQuirks(t *testing.T) {
	// An older Ollama: every call at index 0, whole arguments per chunk,
	// finish_reason "stop" after calls, reasoning in "reasoning".
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", openaiChunk(map[string]any{"role": "assistant", "content": "", "reasoning": "Need two reads."}, nil))
		s.event("", openaiChunk(map[string]any{"reasoning_content": " Then answer."}, nil))
		s.event("", openaiChunk(openaiToolDelta(0, "c1", "read_files", `{"files":[{"path":"a"}]}`), nil))
		s.event("", openaiChunk(openaiToolDelta(0, "c2", "read_files", `{"files":[{"path":"b"}]}`), nil))
		s.event("", openaiChunk(openaiToolDelta(1, "c3", "list_files", `{not json`), nil))
		s.event("", openaiChunk(map[string]any{}, "stop"))
		s.event("", "[DONE]")
	})
	on := true
	p, err := New(Config{Name: "ollama", Model: "qwen3", BaseURL: srv.URL, NativeTools: &on})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.Stream(context.Background(), Request{Messages: []Message{UserText("x")}, MaxTokens: 500})
	reply, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Stop != StopToolUse {
		t.Errorf("stop = %q, want tool_use: calls were made", reply.Stop)
	}
	if th := reply.Message.Parts[0]; th.Kind != PartThinking || th.Text != "Need two reads. Then answer." {
		t.Errorf("thinking = %+v", th)
	}
	calls := reply.Calls()
	if len(calls) != 3 || calls[0].ID != "c1" || calls[1].ID != "c2" || calls[2].ID != "c3" {
		t.Fatalf("calls = %+v, want three distinct calls", calls)
	}
	assertJSON(t, calls[1].Args, `{"files":[{"path":"b"}]}`)
	var raw string
	if err := json.Unmarshal(calls[2].Args, &raw); err != nil || raw != "{not json" {
		t.Errorf("invalid arguments = %s, want them kept as a JSON string", calls[2].Args)
	}
	body := srv.body(0)
	if get(body, "max_tokens") != 500.0 || get(body, "max_completion_tokens") != nil {
		t.Errorf("a compatible server gets max_tokens: %v", body)
	}
	if h := srv.requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("no key configured, yet Authorization = %q", h)
	}
}

func TestOpenAICompatibleDefaultsToXMLPath(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		openaiDialect.reply(w, []string{"<list_files>\n<path>.</path>\n</list_files>"})
	})
	p, err := New(Config{Name: "openai-compatible", Model: "local", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if p.NativeTools() {
		t.Fatal("a local server defaults to the XML path")
	}
	s, _ := p.Stream(context.Background(), Request{Messages: sampleHistory(), Tools: sampleTools()})
	reply, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Calls()) != 0 || !strings.Contains(reply.Text(), "<list_files>") {
		t.Errorf("the XML path streams text for the session to parse: %+v", reply)
	}
	body := srv.body(0)
	if get(body, "tools") != nil {
		t.Errorf("tools sent natively: %v", get(body, "tools"))
	}
	msgs := get(body, "messages").([]any)
	for _, m := range msgs {
		if get(m, "role") == "tool" || get(m, "tool_calls") != nil {
			t.Errorf("native tool message on the XML path: %v", m)
		}
	}
	if len(msgs) != 3 || !strings.Contains(fmt.Sprint(get(msgs[1], "content")), "<read_files>\n<files>[{\"path\":\"main.go\"}]</files>\n</read_files>") ||
		!strings.Contains(fmt.Sprint(get(msgs[2], "content")), "[read_files] Result:\n1 | package main") {
		t.Errorf("history not rendered as text: %v", msgs)
	}
}
