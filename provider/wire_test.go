package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// imageData is a base64 "image": the clients pass it through untouched.
const imageData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func imageRequest() Request {
	return Request{Messages: []Message{{Role: RoleUser, Parts: []Part{
		TextPart("What is in this picture?"),
		ImagePart("image/png", imageData),
	}}}}
}

// sentBody streams req through dialect d against its fake server, which
// answers with reply, and returns the request body the server got.
func sentBody(t *testing.T, d dialect, req Request, reply string) any {
	t.Helper()
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		d.reply(w, []string{reply})
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(s); err != nil {
		t.Fatal(err)
	}
	return srv.body(0)
}

func TestImagesAreSentInEachShape(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			body := sentBody(t, d, imageRequest(), "a pixel")
			switch d.name {
			case "anthropic":
				img := get(body, "messages", 0, "content", 1)
				if get(body, "messages", 0, "content", 0, "text") != "What is in this picture?" || get(img, "type") != "image" ||
					get(img, "source", "type") != "base64" || get(img, "source", "media_type") != "image/png" || get(img, "source", "data") != imageData {
					t.Errorf("user turn = %v, want the text then an image block with a base64 source", get(body, "messages", 0))
				}
			case "openai":
				msg := get(body, "messages", 0)
				if get(msg, "role") != "user" || get(msg, "content", 0, "type") != "text" || get(msg, "content", 0, "text") != "What is in this picture?" ||
					get(msg, "content", 1, "type") != "image_url" || get(msg, "content", 1, "image_url", "url") != "data:image/png;base64,"+imageData {
					t.Errorf("user message = %v, want text and image_url content parts with a data URL", msg)
				}
			case "gemini":
				parts := get(body, "contents", 0, "parts")
				if get(parts, 0, "text") != "What is in this picture?" || get(parts, 1, "inlineData", "mimeType") != "image/png" ||
					get(parts, 1, "inlineData", "data") != imageData {
					t.Errorf("user parts = %v, want the text then inlineData", parts)
				}
			default:
				t.Fatalf("no image shape known for %s", d.name)
			}
		})
	}
}

func TestOpenAITextOnlyUserTurnStaysAString(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		openaiDialect.reply(w, []string{"ok"})
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	s, _ := p.Stream(context.Background(), Request{Messages: []Message{UserText("plain")}})
	if _, err := Collect(s); err != nil {
		t.Fatal(err)
	}
	// Many compatible servers accept only a string content.
	if c := get(srv.body(0), "messages", 0, "content"); c != "plain" {
		t.Errorf("content = %#v, want the string", c)
	}
}

func TestContextLengthIsRecognisedAndNotRetried(t *testing.T) {
	cases := []struct {
		name, provider string
		status         int
		body           string
		window         int
	}{
		{"anthropic", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210123 tokens > 200000 maximum"}}`, 200000},
		{"openai", "openai", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 128000},
		{"gemini", "gemini", 400,
			`{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, 1048576},
		{"vllm", "vllm", 400,
			`{"object":"error","message":"This model's maximum context length is 4,096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`, 4096},
		{"llama.cpp", "openai-compatible", 400,
			`{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}`, 4096},
		{"openrouter", "openrouter", 400,
			`{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens.","code":400}}`, 131072},
		{"mistral", "openai-compatible", 400,
			`{"object":"error","message":"Prompt contains 40005 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}`, 32768},
		{"text-generation-inference", "openai-compatible", 422,
			"{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 1024 `max_new_tokens`\",\"error_type\":\"validation\"}", 4096},
		{"no window named", "openai-compatible", 400,
			`{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				jsonError(w, c.status, c.body)
			})
			p, err := New(Config{Name: c.provider, Model: "m", BaseURL: srv.URL, APIKey: testKey, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Stream(context.Background(), Request{Messages: []Message{UserText("long")}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = drain(t, s)
			if !errors.Is(err, ErrContextLength) {
				t.Fatalf("error = %v, want one matching ErrContextLength", err)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Attempts != 1 || pe.Retryable() || pe.ContextWindow != c.window {
				t.Errorf("error = %+v, want 1 attempt, not retryable, context window %d", pe, c.window)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

func TestOtherBadRequestsAreNotContextLength(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				jsonError(w, 400, d.errorBody(400, "messages: text content blocks must be non-empty"))
			})
			p := d.newProvider(t, srv.URL, fastRetry)
			_, err := drain(t, d.stream(t, p, context.Background()))
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != 400 || errors.Is(err, ErrContextLength) {
				t.Errorf("error = %v, want a plain 400", err)
			}
		})
	}
}

func TestErrorBodyThatIsNotJSON(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, "<html>\n  <body>upstream gone</body>\n</html>")
			})
			p := d.newProvider(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			_, err := drain(t, d.stream(t, p, context.Background()))
			if err == nil || !strings.Contains(err.Error(), "HTTP 502") || !strings.Contains(err.Error(), "<body>upstream gone</body>") {
				t.Errorf("error = %v, want the status and the body's start on one line", err)
			}
		})
	}
}

func TestOpenAIErrorChunkIsRetriedBeforeDelivery(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			s := startSSE(w)
			s.event("", `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
			return
		}
		openaiDialect.reply(w, []string{"fine"})
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, openaiDialect.stream(t, p, context.Background()))
	if err != nil || texts(evs, EventText) != "fine" {
		t.Fatalf("got %q, %v; want the retried reply", texts(evs, EventText), err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestOpenAIReplyEndingWithoutDoneIsComplete(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", openaiChunk(map[string]any{"role": "assistant", "content": "hi"}, nil))
		s.event("", openaiChunk(map[string]any{}, "stop"))
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	reply, err := Collect(openaiDialect.stream(t, p, context.Background()))
	if err != nil || !reply.Done || reply.Text() != "hi" {
		t.Errorf("reply = %+v, %v; want a complete reply", reply, err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestNumberAfter(t *testing.T) {
	for _, c := range []struct {
		s, prefix string
		want      int
	}{
		{"maximum context length is 128000 tokens", "maximum context length is ", 128000},
		{"maximum context length is 4,096 tokens", "maximum context length is ", 4096},
		{"210000 tokens > 200000 maximum", "> ", 200000},
		{"no number here", "is ", 0},
		{"is 99999999999999999999", "is ", 0},
	} {
		if got := numberAfter(c.s, c.prefix); got != c.want {
			t.Errorf("numberAfter(%q, %q) = %d, want %d", c.s, c.prefix, got, c.want)
		}
	}
}

func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			elsewhere := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				d.reply(w, []string{"stolen"})
			})
			// 127.0.0.1 and localhost are different hosts to net/http.
			target := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			})
			p := d.newProvider(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			_, err := drain(t, d.stream(t, p, context.Background()))
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != http.StatusTemporaryRedirect {
				t.Errorf("error = %v, want the 307 reported", err)
			}
			if n := len(elsewhere.requests()); n != 0 {
				t.Errorf("the other host got %d requests (with the key headers)", n)
			}
		})
	}
}

func TestOpenAIEmptyToolResultKeepsContent(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		openaiDialect.reply(w, []string{"ok"})
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	hist := []Message{
		UserText("q"),
		{Role: RoleAssistant, Parts: []Part{CallPart(ToolCall{ID: "c1", Name: "list_files", Args: []byte(`{}`)})}},
		{Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: "c1", Name: "list_files", Content: ""})}},
	}
	s, _ := p.Stream(context.Background(), Request{Messages: hist})
	if _, err := Collect(s); err != nil {
		t.Fatal(err)
	}
	msgs := get(srv.body(0), "messages").([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v", msgs)
	}
	if c, ok := msgs[2].(map[string]any)["content"]; !ok || c != "" {
		t.Errorf("tool message = %v, want content \"\" present", msgs[2])
	}
	if _, ok := msgs[1].(map[string]any)["content"]; ok {
		t.Errorf("assistant message that only calls tools = %v, want no content", msgs[1])
	}
}

// toolImageRequest is a turn whose tool result returned an image.
func toolImageRequest() Request {
	return Request{Messages: []Message{
		UserText("Look at the logo."),
		{Role: RoleAssistant, Parts: []Part{CallPart(ToolCall{ID: "c1", Name: "read_files", Args: []byte(`{"files":[{"path":"logo.png"}]}`)})}},
		{Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: "c1", Name: "read_files", Content: "File: logo.png — an image (image/png, 70 bytes)\n",
			Images: []Image{{MIMEType: "image/png", Data: imageData}}})}},
	}}
}

func TestToolResultImagesAreSentInEachShape(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			body := sentBody(t, d, toolImageRequest(), "a logo")
			switch d.name {
			case "anthropic":
				res := get(body, "messages", 2, "content", 0)
				img := get(res, "content", 1)
				if get(res, "type") != "tool_result" || get(res, "tool_use_id") != "c1" ||
					!strings.HasPrefix(get(res, "content", 0, "text").(string), "File: logo.png") ||
					get(img, "type") != "image" || get(img, "source", "type") != "base64" ||
					get(img, "source", "media_type") != "image/png" || get(img, "source", "data") != imageData {
					t.Errorf("result turn = %v, want a tool_result whose content is the text then an image block", get(body, "messages", 2))
				}
			case "openai":
				tool, user := get(body, "messages", 2), get(body, "messages", 3)
				if get(tool, "role") != "tool" || get(tool, "tool_call_id") != "c1" || !strings.HasPrefix(get(tool, "content").(string), "File: logo.png") {
					t.Errorf("tool message = %v, want the result's text", tool)
				}
				if get(user, "role") != "user" || get(user, "content", 0, "text") != "The images read_files returned (call c1):" ||
					get(user, "content", 1, "type") != "image_url" || get(user, "content", 1, "image_url", "url") != "data:image/png;base64,"+imageData {
					t.Errorf("message after the tool message = %v, want a user message naming the call, then the image", user)
				}
			case "gemini":
				parts := get(body, "contents", 2, "parts")
				if get(parts, 0, "functionResponse", "name") != "read_files" || get(parts, 1, "inlineData", "mimeType") != "image/png" ||
					get(parts, 1, "inlineData", "data") != imageData {
					t.Errorf("result parts = %v, want the functionResponse then inlineData", parts)
				}
			default:
				t.Fatalf("no image shape known for %s", d.name)
			}
		})
	}
}

// TestToolResultImagesOnTheTextPath: without native tools a result is
// user text, and its images follow it as image parts.
func TestToolResultImagesOnTheTextPath(t *testing.T) {
	msgs := ToolsAsText(toolImageRequest().Messages)
	last := msgs[len(msgs)-1]
	if last.Role != RoleUser || len(last.Parts) != 2 || last.Parts[0].Kind != PartText ||
		!strings.Contains(last.Parts[0].Text, "[read_files] Result:\nFile: logo.png") ||
		last.Parts[1].Image == nil || last.Parts[1].Image.Data != imageData {
		t.Errorf("result turn on the text path = %+v, want its text then the image", last)
	}
}
