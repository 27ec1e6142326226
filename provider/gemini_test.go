package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

var geminiDialect = dialect{
	name: "gemini",
	newProvider: func(t *testing.T, baseURL string, policy RetryPolicy) Provider {
		t.Helper()
		p, err := New(Config{Name: "gemini", Model: "gemini-test", BaseURL: baseURL, APIKey: testKey, Retry: policy})
		if err != nil {
			t.Fatal(err)
		}
		return p
	},
	reply: func(w http.ResponseWriter, chunks []string) {
		s := startSSE(w)
		for i, c := range chunks {
			var finish any
			var usage map[string]any
			if i == len(chunks)-1 {
				finish = "STOP"
				usage = geminiUsage(30, 6, 10, 0)
			}
			s.event("", geminiChunk([]any{map[string]any{"text": c}}, finish, usage))
		}
	},
	begin: func(w http.ResponseWriter, chunk string) sseWriter {
		s := startSSE(w)
		s.event("", geminiChunk([]any{map[string]any{"text": chunk}}, nil, nil))
		return s
	},
	preamble: func(w http.ResponseWriter) sseWriter {
		s := startSSE(w)
		s.event("", map[string]any{"candidates": []any{}, "usageMetadata": geminiUsage(30, 0, 0, 0)})
		return s
	},
	errorBody: func(status int, message string) string {
		st := "INTERNAL"
		switch status {
		case 429:
			st = "RESOURCE_EXHAUSTED"
		case 401:
			st = "UNAUTHENTICATED"
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": message, "status": st}})
		return string(b)
	},
}

func geminiChunk(parts []any, finish any, usage map[string]any) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != nil {
		cand["finishReason"] = finish
	}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-test"}
	if usage != nil {
		c["usageMetadata"] = usage
	}
	return c
}

func geminiUsage(prompt, candidates, cached, thoughts int) map[string]any {
	return map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": candidates, "cachedContentTokenCount": cached,
		"thoughtsTokenCount": thoughts, "totalTokenCount": prompt + candidates + thoughts}
}

func TestGeminiToolCallsThinkingAndShapes(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString([]byte("thought-signature"))
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", geminiChunk([]any{map[string]any{"text": "Weighing ", "thought": true}}, nil, nil))
		s.event("", geminiChunk([]any{map[string]any{"text": "options.", "thought": true}}, nil, nil))
		s.event("", geminiChunk([]any{map[string]any{"text": "Reading."}}, nil, nil))
		// Gemini sends each call whole; two arrive in separate chunks, the
		// first with a thought signature and without an ID.
		s.event("", geminiChunk([]any{map[string]any{"functionCall": map[string]any{"name": "read_files", "args": map[string]any{"files": []any{map[string]any{"path": "main.go"}}}}, "thoughtSignature": sig}}, nil, nil))
		s.event("", geminiChunk([]any{map[string]any{"functionCall": map[string]any{"id": "fc-2", "name": "list_files", "args": map[string]any{"path": "."}}}}, "STOP", geminiUsage(200, 30, 120, 15)))
	})
	p := geminiDialect.newProvider(t, srv.URL, fastRetry)
	s, err := p.Stream(context.Background(), Request{System: "SYS", Messages: sampleHistory(), Tools: sampleTools(), MaxTokens: 1000, ThinkingBudget: 512})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if reply.Stop != StopToolUse {
		t.Errorf("stop = %q, want tool_use (Gemini says STOP after calls)", reply.Stop)
	}
	if want := (Usage{InputTokens: 80, OutputTokens: 45, CacheReadTokens: 120}); reply.Usage != want {
		t.Errorf("usage = %+v, want %+v", reply.Usage, want)
	}
	if th := reply.Message.Parts[0]; th.Kind != PartThinking || th.Text != "Weighing options." {
		t.Errorf("thinking = %+v", th)
	}
	calls := reply.Calls()
	if len(calls) != 2 || calls[0].Name != "read_files" || calls[1].ID != "fc-2" || calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].Signature != sig {
		t.Errorf("signature = %q, want %q", calls[0].Signature, sig)
	}
	assertJSON(t, calls[0].Args, `{"files":[{"path":"main.go"}]}`)

	req := srv.requests()[0]
	if !strings.HasSuffix(req.Path, "/models/gemini-test:streamGenerateContent") || req.Query != "alt=sse" {
		t.Errorf("request to %s?%s, want models/gemini-test:streamGenerateContent?alt=sse", req.Path, req.Query)
	}
	if req.Header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("key not sent in x-goog-api-key")
	}
	if strings.Contains(req.Path+req.Query, testKey) {
		t.Errorf("key sent in the URL")
	}
	body := srv.body(0)
	if get(body, "systemInstruction", "parts", 0, "text") != "SYS" {
		t.Errorf("systemInstruction = %v", get(body, "systemInstruction"))
	}
	if get(body, "generationConfig", "maxOutputTokens") != 1000.0 || get(body, "generationConfig", "thinkingConfig", "includeThoughts") != true ||
		get(body, "generationConfig", "thinkingConfig", "thinkingBudget") != 512.0 {
		t.Errorf("generationConfig = %v", get(body, "generationConfig"))
	}
	decl := get(body, "tools", 0, "functionDeclarations", 0)
	if get(decl, "name") != "read_files" || get(decl, "parameters", "type") != "OBJECT" ||
		get(decl, "parameters", "properties", "files", "type") != "ARRAY" ||
		get(decl, "parameters", "properties", "files", "items", "type") != "OBJECT" ||
		get(decl, "parameters", "properties", "files", "items", "properties", "start_line", "type") != "INTEGER" {
		t.Errorf("declaration not in the Gemini shape with upper-case types and nested items: %v", decl)
	}
	if get(body, "tools", 0, "functionDeclarations", 1, "parameters", "properties", "recursive", "type") != "BOOLEAN" {
		t.Errorf("boolean type = %v", get(body, "tools", 0, "functionDeclarations", 1))
	}
	contents := get(body, "contents").([]any)
	if len(contents) != 3 || get(contents[1], "role") != "model" || get(contents[2], "role") != "user" {
		t.Fatalf("contents = %v, want user, model, user", contents)
	}
	if get(contents[1], "parts", 1, "functionCall", "name") != "read_files" || get(contents[1], "parts", 1, "functionCall", "args", "files", 0, "path") != "main.go" {
		t.Errorf("model turn = %v", contents[1])
	}
	if get(contents[2], "parts", 0, "functionResponse", "name") != "read_files" ||
		get(contents[2], "parts", 0, "functionResponse", "response", "output") != "1 | package main" ||
		get(contents[2], "parts", 1, "text") != "Now explain it." {
		t.Errorf("last user turn = %v, want the function response first, then the text", contents[2])
	}
}

func TestGeminiSendsSignaturesBack(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		geminiDialect.reply(w, []string{"ok"})
	})
	p := geminiDialect.newProvider(t, srv.URL, fastRetry)
	sig := base64.StdEncoding.EncodeToString([]byte("sig"))
	hist := []Message{
		UserText("q"),
		{Role: RoleAssistant, Parts: []Part{
			CallPart(ToolCall{ID: geminiIDPrefix + "0", Name: "list_files", Args: json.RawMessage(`{"path":"."}`), Signature: sig}),
		}},
		{Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: geminiIDPrefix + "0", Name: "list_files", Content: "no such folder", IsError: true})}},
	}
	s, _ := p.Stream(context.Background(), Request{Messages: hist})
	if _, err := Collect(s); err != nil {
		t.Fatal(err)
	}
	body := srv.body(0)
	call := get(body, "contents", 1, "parts", 0)
	if get(call, "thoughtSignature") != sig {
		t.Errorf("thought signature not sent back: %v", call)
	}
	if get(call, "functionCall", "id") != nil {
		t.Errorf("a generated call ID was sent to the API: %v", call)
	}
	resp := get(body, "contents", 2, "parts", 0, "functionResponse")
	if get(resp, "response", "error") != "no such folder" || get(resp, "id") != nil {
		t.Errorf("error result = %v, want response.error and no generated ID", resp)
	}
}

func TestGeminiSafetyStopIsRefusal(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", geminiChunk([]any{map[string]any{"text": "I can"}}, nil, nil))
		s.event("", geminiChunk([]any{}, "SAFETY", geminiUsage(5, 2, 0, 0)))
	})
	p := geminiDialect.newProvider(t, srv.URL, fastRetry)
	s, _ := p.Stream(context.Background(), Request{Messages: []Message{UserText("x")}})
	reply, err := Collect(s)
	if err != nil || reply.Stop != StopRefusal {
		t.Errorf("stop = %q, err = %v; want refusal", reply.Stop, err)
	}
}

// A malformed function call or an empty reply is asked once more, and
// reported, never taken as a silent end of the turn.
func TestGeminiOddEndsRetriedOnce(t *testing.T) {
	malformed := func(s sseWriter) {
		s.event("", map[string]any{"candidates": []any{map[string]any{"finishReason": "MALFORMED_FUNCTION_CALL",
			"finishMessage": "Malformed function call: print(default_api.read_files(", "index": 0}}})
	}
	noCandidates := func(s sseWriter) {
		s.event("", map[string]any{"candidates": []any{}, "usageMetadata": geminiUsage(30, 0, 0, 0)})
	}
	noContent := func(s sseWriter) {
		s.event("", map[string]any{"candidates": []any{map[string]any{"finishReason": "STOP", "index": 0}}, "usageMetadata": geminiUsage(30, 0, 0, 0)})
	}
	for _, tc := range []struct {
		name string
		odd  func(s sseWriter)
		want string
	}{
		{"malformed call", malformed, "(MALFORMED_FUNCTION_CALL): Malformed function call"},
		{"no candidates", noCandidates, "empty reply (no candidates)"},
		{"no content", noContent, "empty reply (no content, finish reason STOP)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Odd once, then a good reply: the retry mends it.
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 0 {
					tc.odd(startSSE(w))
					return
				}
				geminiDialect.reply(w, []string{"fine"})
			})
			p := geminiDialect.newProvider(t, srv.URL, fastRetry)
			evs, err := drain(t, geminiDialect.stream(t, p, context.Background()))
			if err != nil || texts(evs, EventText) != "fine" || len(srv.requests()) != 2 {
				t.Errorf("after one odd reply: text %q, error %v, %d requests; want the second reply", texts(evs, EventText), err, len(srv.requests()))
			}
			// Odd every time: reported after two requests, not four.
			srv = newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { tc.odd(startSSE(w)) })
			p = geminiDialect.newProvider(t, srv.URL, fastRetry)
			evs, err = drain(t, geminiDialect.stream(t, p, context.Background()))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "after 2 attempts") || len(srv.requests()) != 2 {
				t.Errorf("always odd: events %+v, error %v, %d requests; want an error saying %q after 2", evs, err, len(srv.requests()), tc.want)
			}
		})
	}
}
