package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testKey is planted in every client; tests check the fake servers see it
// and that no error or event ever shows it.
const testKey = "sk-test-PLANTED-7f3a9c2e41b8d6"

// guard bounds waits that must end promptly; it only catches hangs.
const guard = 10 * time.Second

// seenRequest is what a fake server received.
type seenRequest struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// fakeServer is an API server on 127.0.0.1 whose reply to the n-th
// request (0-based) is written by handle.
type fakeServer struct {
	*httptest.Server
	t      *testing.T
	handle func(n int, w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	reqs []seenRequest
}

func newFakeServer(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.handle(n, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.reqs...)
}

// body decodes the n-th request body as generic JSON.
func (f *fakeServer) body(n int) map[string]any {
	f.t.Helper()
	reqs := f.requests()
	if n >= len(reqs) {
		f.t.Fatalf("server saw %d requests, want at least %d", len(reqs), n+1)
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[n].Body, &m); err != nil {
		f.t.Fatalf("request %d body is not JSON: %v\n%s", n, err, reqs[n].Body)
	}
	return m
}

// sseWriter writes Server-Sent Events and flushes each one, so the client sees
// them as separate network reads.
type sseWriter struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return sseWriter{w: w}
}

func (s sseWriter) event(name string, data any) {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		b, _ = json.Marshal(d)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.w.(http.Flusher).Flush()
}

// cut ends the response abruptly: the connection closes in the middle of
// the chunked body, as when a network path breaks.
func cut() { panic(http.ErrAbortHandler) }

// jsonError answers with an HTTP error status and a JSON body.
func jsonError(w http.ResponseWriter, status int, body string, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// waitDone blocks until the client has gone away, or the guard passes.
func waitDone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(guard):
	}
}

// fastRetry keeps retry tests quick; waits are real but tiny.
var fastRetry = RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Second}

// drain collects a stream's events and final error, failing the test if
// the stream does not end within the guard.
func drain(t *testing.T, s Stream) ([]Event, error) {
	t.Helper()
	type result struct {
		evs []Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		for ev, err := range s {
			if err != nil {
				r.err = err
				continue
			}
			r.evs = append(r.evs, ev)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.evs, r.err
	case <-time.After(guard):
		t.Fatal("stream did not end")
		return nil, nil
	}
}

// assertNoKey fails if the planted key shows in any event or error.
func assertNoKey(t *testing.T, evs []Event, err error) {
	t.Helper()
	b, _ := json.Marshal(evs)
	if strings.Contains(string(b), testKey) {
		t.Errorf("events hold the API key: %s", b)
	}
	if err != nil && (strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testKey)) {
		t.Errorf("error holds the API key: %v", err)
	}
}

// assertKeySent fails unless the request carried the key in a header.
func assertKeySent(t *testing.T, r seenRequest) {
	t.Helper()
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, testKey) {
				return
			}
		}
	}
	t.Errorf("request headers do not carry the API key: %v", r.Header)
}

// recordSleeps replaces a provider's waits between retries by a record of
// them, so tests can check Retry-After was honoured without waiting.
func recordSleeps(t *testing.T, p Provider) *[]time.Duration {
	t.Helper()
	var r *retrier
	switch c := p.(type) {
	case *anthropicClient:
		r = c.retry
	case *openaiClient:
		r = c.retry
	case *geminiClient:
		r = c.retry
	case *responsesClient:
		r = c.openai.retry
	default:
		t.Fatalf("no retrier in %T", p)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	r.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return waits
}

func texts(evs []Event, kind EventKind) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == kind {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func countKind(evs []Event, kind EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// get walks decoded JSON by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok {
				return nil
			}
			if k < 0 {
				k += len(a) // -1 is the last element
			}
			if k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// sampleTools are what the tool-shape tests send: a nested array of
// objects, an enum and a boolean.
func sampleTools() []ToolDef {
	return []ToolDef{
		{
			Name:        "read_files",
			Description: "Read files.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer"}},"required":["path"]}}},"required":["files"]}`),
		},
		{
			Name:        "list_files",
			Description: "List a folder.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"recursive":{"type":"boolean"},"order":{"type":"string","enum":["name","mtime"]}},"required":["path"]}`),
		},
	}
}

// sampleHistory is a conversation with one tool round trip, ending in a
// user turn.
func sampleHistory() []Message {
	return []Message{
		UserText("Read main.go please."),
		{Role: RoleAssistant, Parts: []Part{
			TextPart("Reading it."),
			CallPart(ToolCall{ID: "call_1", Name: "read_files", Args: json.RawMessage(`{"files":[{"path":"main.go"}]}`)}),
		}},
		{Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: "call_1", Name: "read_files", Content: "1 | package main"})}},
		UserText("Now explain it."),
	}
}
