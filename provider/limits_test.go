package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// withLimits sets a client's limits, as Config.Limits would.
func withLimits(t *testing.T, p Provider, lim Limits) Provider {
	t.Helper()
	lim = lim.withDefaults()
	switch c := p.(type) {
	case *anthropicClient:
		c.retry.limits = lim
	case *openaiClient:
		c.retry.limits = lim
	case *geminiClient:
		c.retry.limits = lim
	default:
		t.Fatalf("no limits in %T", p)
	}
	return p
}

// moreText streams one more text chunk of a reply begin started.
var moreText = map[string]func(s sseWriter, chunk string){
	"anthropic": func(s sseWriter, chunk string) {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": chunk}})
	},
	"openai": func(s sseWriter, chunk string) { s.event("", openaiChunk(map[string]any{"content": chunk}, nil)) },
	"gemini": func(s sseWriter, chunk string) {
		s.event("", geminiChunk([]any{map[string]any{"text": chunk}}, nil, nil))
	},
}

// endless streams text until the client goes away, as a server stuck in a
// loop would; it reports how many bytes of text it wrote.
func endless(d dialect, sent *atomic.Int64) func(n int, w http.ResponseWriter, r *http.Request) {
	chunk := strings.Repeat("loop ", 200)
	return func(n int, w http.ResponseWriter, r *http.Request) {
		s := d.begin(w, chunk)
		sent.Add(int64(len(chunk)))
		for r.Context().Err() == nil && sent.Load() < 1<<30 {
			moreText[d.name](s, chunk)
			sent.Add(int64(len(chunk)))
		}
	}
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want a *provider.Error", err, err)
	}
	return pe
}

func TestEndlessReplyIsCut(t *testing.T) {
	const max = 64 << 10
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			var sent atomic.Int64
			srv := newFakeServer(t, endless(d, &sent))
			p := withLimits(t, d.newProvider(t, srv.URL, fastRetry), Limits{MaxReplyBytes: max})
			evs, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			if pe.Limit != "provider.maxReplyMB" || !pe.Partial || pe.Retryable() {
				t.Errorf("error = %v (limit %q, partial %v, retryable %v), want the reply size limit after a partial reply, final", err, pe.Limit, pe.Partial, pe.Retryable())
			}
			if got := len(texts(evs, EventText)); got == 0 || got > max {
				t.Errorf("%d bytes of text passed on, want some and at most %d", got, max)
			}
			if !strings.Contains(err.Error(), d.name) || !strings.Contains(err.Error(), "64 KiB") {
				t.Errorf("error %q does not name the provider and the bound", err)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1: a reply cut by its size is not asked again", n)
			}
			assertNoKey(t, evs, err)
		})
	}
}

// endlessCall streams one tool call whose arguments never end.
var endlessCall = map[string]func(w http.ResponseWriter, r *http.Request){
	"anthropic": func(w http.ResponseWriter, r *http.Request) {
		s := anthropicStart(w)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "write_to_file", "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": `{"content":"`}})
		for i := 0; r.Context().Err() == nil && i < 1<<20; i++ {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": strings.Repeat("x", 1000)}})
		}
	},
	"openai": func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", openaiChunk(openaiToolDelta(0, "call_1", "write_to_file", `{"content":"`), nil))
		for i := 0; r.Context().Err() == nil && i < 1<<20; i++ {
			s.event("", openaiChunk(openaiToolDelta(0, "", "", strings.Repeat("x", 1000)), nil))
		}
	},
	// Gemini sends a call whole, in one chunk.
	"gemini": func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("", geminiChunk([]any{map[string]any{"functionCall": map[string]any{"name": "write_to_file",
			"args": map[string]any{"content": strings.Repeat("x", 200<<10)}}}}, nil, nil))
		waitDone(r)
	},
}

func TestEndlessToolCallIsCut(t *testing.T) {
	const max = 100 << 10
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { endlessCall[d.name](w, r) })
			p := withLimits(t, d.newProvider(t, srv.URL, fastRetry), Limits{MaxToolCallBytes: max})
			evs, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			if pe.Limit != "provider.maxToolCallMB" {
				t.Errorf("error = %v (limit %q), want the tool call size limit", err, pe.Limit)
			}
			if !strings.Contains(err.Error(), "write_to_file") || !strings.Contains(err.Error(), "100 KiB") {
				t.Errorf("error %q does not name the tool and the bound", err)
			}
			if n := countKind(evs, EventToolCall); n != 0 {
				t.Errorf("%d tool calls passed on, want none", n)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1: a call cut by its size is not asked again", n)
			}
		})
	}
}

func TestUnansweredRequestIsRetriedThenReported(t *testing.T) {
	const idle = 150 * time.Millisecond
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { waitDone(r) })
			p := withLimits(t, d.newProvider(t, srv.URL, fastRetry), Limits{StreamIdle: idle})
			evs, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			if pe.Limit != "provider.streamIdleSeconds" || pe.Partial || pe.Attempts != fastRetry.MaxAttempts || !pe.Retryable() {
				t.Errorf("error = %v (limit %q, partial %v, %d attempts), want the idle limit after %d attempts", err, pe.Limit, pe.Partial, pe.Attempts, fastRetry.MaxAttempts)
			}
			// A request the bound ended before the server read it is not
			// counted there: the client's attempts are what was retried.
			if n := len(srv.requests()); n == 0 || n > fastRetry.MaxAttempts {
				t.Errorf("server saw %d requests, want 1 to %d", n, fastRetry.MaxAttempts)
			}
			if !strings.Contains(err.Error(), d.name+": ") || !strings.Contains(err.Error(), "no data from the model for") {
				t.Errorf("error %q does not name the provider and the wait", err)
			}
			if len(evs) != 0 {
				t.Errorf("events %+v from requests never answered", evs)
			}
		})
	}
}

func TestStallMidReplyIsReportedNotRetried(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			// A stall before the text reaches the client may be retried (on
			// a loaded machine the idle bound can pass first); one after
			// it never is.
			var shown, again atomic.Bool
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if shown.Load() {
					again.Store(true)
				}
				d.begin(w, "Half a thou")
				waitDone(r)
			})
			p := withLimits(t, d.newProvider(t, srv.URL, fastRetry), Limits{StreamIdle: 100 * time.Millisecond})
			s := d.stream(t, p, context.Background())
			var evs []Event
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				for ev, e := range s {
					if e != nil {
						err = e
						continue
					}
					shown.Store(true)
					evs = append(evs, ev)
				}
			}()
			select {
			case <-done:
			case <-time.After(guard):
				t.Fatal("stream did not end")
			}
			pe := asError(t, err)
			if pe.Limit != "provider.streamIdleSeconds" || !pe.Partial {
				t.Errorf("error = %v (limit %q, partial %v), want the idle limit after a partial reply", err, pe.Limit, pe.Partial)
			}
			if got := texts(evs, EventText); got != "Half a thou" {
				t.Errorf("text = %q, want what came before the stall, once", got)
			}
			if again.Load() {
				t.Error("the request was made again after part of the reply was shown")
			}
		})
	}
}

// A server's keep-alives are life: a slow reply that pings is not idle.
func TestPingsKeepAStreamAlive(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		s := anthropicStart(w)
		// Pings well inside the idle bound, for far longer than it.
		for i := 0; i < 300 && r.Context().Err() == nil; i++ {
			time.Sleep(10 * time.Millisecond)
			s.event("ping", map[string]any{"type": "ping"})
		}
		anthropicText(s, 0, "done")
		anthropicEnd(s, "end_turn", 3)
	})
	p := withLimits(t, anthropicDialect.newProvider(t, srv.URL, fastRetry), Limits{StreamIdle: time.Second})
	evs, err := drain(t, anthropicDialect.stream(t, p, context.Background()))
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if got := texts(evs, EventText); got != "done" {
		t.Errorf("text = %q, want the reply after the pings", got)
	}
}

func TestRequestTimeoutEndsAPingingStream(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				s := d.preamble(w)
				for r.Context().Err() == nil {
					time.Sleep(5 * time.Millisecond)
					s.w.Write([]byte(": keep-alive\n\n"))
					s.w.(http.Flusher).Flush()
				}
			})
			p := withLimits(t, d.newProvider(t, srv.URL, fastRetry), Limits{RequestTimeout: 200 * time.Millisecond})
			_, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			if pe.Limit != "provider.requestTimeoutSeconds" || errors.Is(err, context.Canceled) {
				t.Errorf("error = %v (limit %q), want the request time limit, not a cancellation", err, pe.Limit)
			}
			if n := len(srv.requests()); n > 1 {
				t.Errorf("server saw %d requests, want 1 at most: the time bound covers retries", n)
			}
		})
	}
}

func TestHTMLPageOn200IsReportedNotRetried(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte("\n  <!DOCTYPE html><html><head><title>Sign in to the corporate proxy</title></head><body>" + testKey + strings.Repeat("<p>filler</p>", 500) + "</body></html>"))
			})
			p := d.newProvider(t, srv.URL+"/wrong", fastRetry)
			evs, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			msg := err.Error()
			for _, want := range []string{"text/html", "<!DOCTYPE html>", "base URL", srv.URL + "/wrong"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "stream ended before") || len(msg) > 600 {
				t.Errorf("error %q (%d bytes) is not a short account of what came back", msg, len(msg))
			}
			if pe.Attempts != 1 || len(srv.requests()) != 1 || pe.Retryable() {
				t.Errorf("%d attempts, %d requests, retryable %v; want 1, final: a page comes back the same when asked again", pe.Attempts, len(srv.requests()), pe.Retryable())
			}
			assertNoKey(t, evs, err)
		})
	}
}

func TestJSONErrorOn200IsParsed(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(d.errorBody(400, "model gpt-nope does not exist")))
			})
			p := d.newProvider(t, srv.URL, fastRetry)
			_, err := drain(t, d.stream(t, p, context.Background()))
			pe := asError(t, err)
			if !strings.Contains(err.Error(), "model gpt-nope does not exist") || !strings.Contains(err.Error(), "application/json") {
				t.Errorf("error %q does not report the JSON error and what came back", err)
			}
			if pe.Attempts != 1 {
				t.Errorf("%d attempts, want 1", pe.Attempts)
			}
		})
	}
}

// A JSON body that is no error (a non-streamed completion) is named too.
func TestJSONAnswerToStreamedRequest(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"message":{"content":"hi"}}]}`))
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	_, err := drain(t, openaiDialect.stream(t, p, context.Background()))
	if err == nil || !strings.Contains(err.Error(), "application/json instead of an event stream") || !strings.Contains(err.Error(), `chat.completion`) {
		t.Errorf("error = %v, want what came back named", err)
	}
}

// A stream under the wrong label (or none) is still a stream.
func TestMislabelledStreamIsRead(t *testing.T) {
	for _, ct := range []string{"text/plain", "application/octet-stream", ""} {
		srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			s := sseWriter{w: w}
			s.event("", openaiChunk(map[string]any{"role": "assistant", "content": "fine"}, nil))
			s.event("", openaiChunk(map[string]any{}, "stop"))
			s.event("", "[DONE]")
		})
		p := openaiDialect.newProvider(t, srv.URL, fastRetry)
		evs, err := drain(t, openaiDialect.stream(t, p, context.Background()))
		if err != nil || texts(evs, EventText) != "fine" {
			t.Errorf("content type %q: text %q, error %v; want the stream read", ct, texts(evs, EventText), err)
		}
	}
}

// The replay provider rehearses both faults under the same limits.
func TestReplayEndlessAndHang(t *testing.T) {
	play := func(t *testing.T, ev ReplayEvent, lim Limits) ([]Event, *Error) {
		t.Helper()
		p, err := New(Config{Name: "replay", Limits: lim, Replay: &Transcript{Replies: []ReplayReply{{Events: []ReplayEvent{{Text: "start "}, ev}}}}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Stream(context.Background(), Request{Messages: []Message{UserText("go")}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(t, s)
		return evs, asError(t, err)
	}
	t.Run("endless", func(t *testing.T) {
		evs, pe := play(t, ReplayEvent{Endless: "again "}, Limits{MaxReplyBytes: 10 << 10})
		if pe.Limit != "provider.maxReplyMB" || !pe.Partial {
			t.Errorf("error = %v, want the reply size limit", pe)
		}
		if n := len(texts(evs, EventText)); n == 0 || n > 10<<10 {
			t.Errorf("%d bytes of text, want some and at most 10 KiB", n)
		}
	})
	t.Run("hang", func(t *testing.T) {
		_, pe := play(t, ReplayEvent{Hang: true}, Limits{StreamIdle: 20 * time.Millisecond})
		if pe.Limit != "provider.streamIdleSeconds" || !pe.Partial || !strings.Contains(pe.Error(), "20ms") {
			t.Errorf("error = %v, want the idle limit naming the wait", pe)
		}
	})
	t.Run("hangPastTheRequestTime", func(t *testing.T) {
		_, pe := play(t, ReplayEvent{Hang: true}, Limits{RequestTimeout: 20 * time.Millisecond})
		if pe.Limit != "provider.requestTimeoutSeconds" || errors.Is(pe, context.Canceled) {
			t.Errorf("error = %v, want the request time limit", pe)
		}
	})
	t.Run("mustBeLast", func(t *testing.T) {
		tr := Transcript{Replies: []ReplayReply{{Events: []ReplayEvent{{Hang: true}, {Text: "never"}}}}}
		if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "last event") {
			t.Errorf("Validate = %v, want hang refused before other events", err)
		}
	})
}

// x-should-retry decides over the status, both ways.
func TestShouldRetryHeader(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			for _, tc := range []struct {
				status int
				header string
				want   int // requests
			}{
				{500, "false", 1},
				{400, "true", 2},
				{500, "", 2},
			} {
				srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
					if n == 0 {
						h := []string{}
						if tc.header != "" {
							h = []string{"X-Should-Retry", tc.header}
						}
						jsonError(w, tc.status, d.errorBody(tc.status, "conflict in the lock"), h...)
						return
					}
					d.reply(w, []string{"ok"})
				})
				p := d.newProvider(t, srv.URL, fastRetry)
				drain(t, d.stream(t, p, context.Background()))
				if n := len(srv.requests()); n != tc.want {
					t.Errorf("HTTP %d with x-should-retry %q: %d requests, want %d", tc.status, tc.header, n, tc.want)
				}
			}
		})
	}
}

// The server's request id is in every error a user sees, whatever ended
// the request.
func TestRequestIDInErrors(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			for _, tc := range []struct {
				name, header string
				handle       func(w http.ResponseWriter, r *http.Request)
			}{
				{"error status", "Request-Id", func(w http.ResponseWriter, r *http.Request) {
					jsonError(w, 401, d.errorBody(401, "bad key"))
				}},
				{"cut mid-reply", "X-Request-Id", func(w http.ResponseWriter, r *http.Request) {
					d.begin(w, "Half")
					cut()
				}},
				{"HTML page", "X-Request-Id", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte("<html>proxy</html>"))
				}},
			} {
				srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
					w.Header().Set(tc.header, "req_0123abc")
					tc.handle(w, r)
				})
				p := d.newProvider(t, srv.URL, fastRetry)
				_, err := drain(t, d.stream(t, p, context.Background()))
				if pe := asError(t, err); pe.RequestID != "req_0123abc" || !strings.Contains(err.Error(), "(request id req_0123abc)") {
					t.Errorf("%s: error %q (request id %q), want the request id in it", tc.name, err, pe.RequestID)
				}
			}
		})
	}
}

func TestUserAgent(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) { d.reply(w, []string{"ok"}) })
			for _, tc := range []struct{ version, want string }{{"1.2.3", "cline-ls/1.2.3"}, {"", "cline-ls/dev"}} {
				p, err := New(Config{Name: d.name, Model: "m", BaseURL: srv.URL, APIKey: testKey, Version: tc.version})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := drain(t, d.stream(t, p, context.Background())); err != nil {
					t.Fatal(err)
				}
				reqs := srv.requests()
				if got := reqs[len(reqs)-1].Header.Get("User-Agent"); got != tc.want {
					t.Errorf("User-Agent = %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// A mislabelled stream whose first event is short and whose next comes
// later is read as it comes, not held until more bytes arrive.
func TestMislabelledStreamShortFirstEvent(t *testing.T) {
	next := make(chan struct{})
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		s := sseWriter{w: w}
		s.event("", map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "a"}}}})
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		s.event("", openaiChunk(map[string]any{}, "stop"))
		s.event("", "[DONE]")
	})
	p := openaiDialect.newProvider(t, srv.URL, fastRetry)
	s := openaiDialect.stream(t, p, context.Background())
	got := make(chan string, 4)
	go func() {
		for ev, err := range s {
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			if ev.Kind == EventText {
				got <- ev.Text
			}
		}
		close(got)
	}()
	select {
	case first := <-got:
		if first != "a" {
			t.Fatalf("first = %q, want the first event's text", first)
		}
	case <-time.After(guard):
		t.Fatal("the first event was held back")
	}
	close(next)
	for range got {
	}
}
