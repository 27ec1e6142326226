package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dialect is what the shared client tests need to know of one API: how
// to build its client and how its server writes replies and errors.
type dialect struct {
	name        string
	newProvider func(t *testing.T, baseURL string, policy RetryPolicy) Provider
	// reply writes a complete, successful reply made of these text chunks.
	reply func(w http.ResponseWriter, chunks []string)
	// begin starts a reply and streams one text chunk, leaving it open.
	begin func(w http.ResponseWriter, chunk string) sseWriter
	// preamble starts a reply with events that carry nothing to yield.
	preamble func(w http.ResponseWriter) sseWriter
	// errorBody is the JSON body of an error response.
	errorBody func(status int, message string) string
}

var dialects = []dialect{anthropicDialect, openaiDialect, geminiDialect}

func TestClients(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
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
		})
	}
}

func (d dialect) stream(t *testing.T, p Provider, ctx context.Context) Stream {
	t.Helper()
	s, err := p.Stream(ctx, Request{System: "You are terse.", Messages: []Message{UserText("Say hello.")}})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return s
}

func (d dialect) testText(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		d.reply(w, []string{"Hel", "lo, ", "wörld"})
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if got := texts(evs, EventText); got != "Hello, wörld" {
		t.Errorf("text = %q, want %q", got, "Hello, wörld")
	}
	if n := countKind(evs, EventText); n != 3 {
		t.Errorf("%d text events, want one per chunk (3)", n)
	}
	if len(evs) < 2 || evs[len(evs)-2].Kind != EventUsage || evs[len(evs)-1].Kind != EventDone {
		t.Fatalf("stream does not end with usage then done: %+v", evs)
	}
	if u := evs[len(evs)-2].Usage; u == nil || u.InputTokens == 0 || u.OutputTokens == 0 {
		t.Errorf("usage = %+v, want input and output counts", u)
	}
	if stop := evs[len(evs)-1].Stop; stop != StopEndTurn {
		t.Errorf("stop = %q, want end_turn", stop)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	assertKeySent(t, reqs[0])
	if !strings.Contains(string(reqs[0].Body), "You are terse.") || !strings.Contains(string(reqs[0].Body), "Say hello.") {
		t.Errorf("request lacks the system prompt or the message: %s", reqs[0].Body)
	}
	assertNoKey(t, evs, err)
}

func (d dialect) testRetry429(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			jsonError(w, http.StatusTooManyRequests, d.errorBody(429, "slow down, "+testKey), "Retry-After", "2")
			return
		}
		d.reply(w, []string{"ok"})
	})
	p := d.newProvider(t, srv.URL, RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Minute})
	waits := recordSleeps(t, p)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	if err != nil {
		t.Fatalf("stream error after retry: %v", err)
	}
	if got := texts(evs, EventText); got != "ok" {
		t.Errorf("text = %q, want the second reply's", got)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2 (429, then success)", n)
	}
	if len(*waits) != 1 || (*waits)[0] != 2*time.Second {
		t.Errorf("waits = %v, want [2s] from Retry-After", *waits)
	}
}

func (d dialect) testExhausted(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		jsonError(w, http.StatusInternalServerError, d.errorBody(500, "backend exploded; your key "+testKey+" is fine"))
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want *Error", err, err)
	}
	if pe.Status != 500 || pe.Attempts != 4 || pe.Partial || pe.Provider != p.Name() {
		t.Errorf("error = %+v, want status 500 after 4 attempts from %s", pe, p.Name())
	}
	msg := err.Error()
	for _, want := range []string{p.Name(), "500", "4 attempts", "backend exploded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if n := len(srv.requests()); n != 4 {
		t.Errorf("server saw %d requests, want 4", n)
	}
	if len(evs) != 0 {
		t.Errorf("events before the error: %+v", evs)
	}
	assertNoKey(t, evs, err)
}

func (d dialect) testNotRetried(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		jsonError(w, http.StatusUnauthorized, d.errorBody(401, "invalid key "+testKey))
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Attempts != 1 || pe.Retryable() {
		t.Fatalf("error = %v, want a non-retryable 401 after 1 attempt", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
	if !strings.Contains(err.Error(), "invalid key [redacted]") {
		t.Errorf("error %q does not keep the API's message with the key scrubbed", err)
	}
	assertNoKey(t, evs, err)
}

func (d dialect) testLongRetryAfter(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		jsonError(w, http.StatusTooManyRequests, d.errorBody(429, "quota"), "Retry-After", "3600")
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	waits := recordSleeps(t, p)
	_, err := drain(t, d.stream(t, p, context.Background()))
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 429 || pe.RetryAfter != time.Hour {
		t.Fatalf("error = %v, want a 429 saying to retry after 1h", err)
	}
	if n := len(srv.requests()); n != 1 || len(*waits) != 0 {
		t.Errorf("%d requests and waits %v, want 1 request and no wait", n, *waits)
	}
	if !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Errorf("error %q does not say when to retry", err)
	}
}

func (d dialect) testCutBeforeEvents(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			d.preamble(w)
			cut()
		}
		d.reply(w, []string{"second ", "try"})
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if got := texts(evs, EventText); got != "second try" {
		t.Errorf("text = %q, want only the retried reply", got)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func (d dialect) testCutMidReply(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		d.begin(w, "partial ")
		cut()
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	if got := texts(evs, EventText); got != "partial " {
		t.Errorf("text = %q, want the part delivered before the cut", got)
	}
	var pe *Error
	if !errors.As(err, &pe) || !pe.Partial {
		t.Fatalf("error = %v, want a partial-reply *Error", err)
	}
	if !strings.Contains(err.Error(), "not retried") {
		t.Errorf("error %q does not say it was not retried", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1: a cut after delivery must not be retried", n)
	}
	for _, ev := range evs {
		if ev.Kind == EventDone {
			t.Errorf("a cut reply reported done")
		}
	}
	assertNoKey(t, evs, err)
}

func (d dialect) testCancel(t *testing.T) {
	gone := make(chan struct{})
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		d.begin(w, "first ")
		waitDone(r)
		if r.Context().Err() != nil {
			close(gone)
		}
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := d.stream(t, p, ctx)
	done := make(chan error, 1)
	go func() {
		var last error
		for ev, err := range s {
			if ev.Kind == EventText {
				cancel()
			}
			if err != nil {
				last = err
			}
		}
		done <- last
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want one wrapping context.Canceled", err)
		}
	case <-time.After(guard):
		t.Fatal("stream did not end after cancel")
	}
	select {
	case <-gone:
	case <-time.After(guard):
		t.Fatal("server never saw the client go away")
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1: a cancelled request is not retried", n)
	}
}

func (d dialect) testBreak(t *testing.T) {
	gone := make(chan struct{})
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		d.begin(w, "first ")
		waitDone(r)
		if r.Context().Err() != nil {
			close(gone)
		}
	})
	p := d.newProvider(t, srv.URL, fastRetry)
	s := d.stream(t, p, context.Background())
	got := 0
	for ev, err := range s {
		if err != nil {
			t.Fatalf("error before break: %v", err)
		}
		got++
		if ev.Kind == EventText {
			break
		}
	}
	if got != 1 {
		t.Errorf("%d events before break, want 1", got)
	}
	select {
	case <-gone:
	case <-time.After(guard):
		t.Fatal("breaking out of the stream did not close the connection")
	}
}

func (d dialect) testRefused(t *testing.T) {
	srv := newFakeServer(t, func(int, http.ResponseWriter, *http.Request) {})
	url := srv.URL
	srv.Close() // nothing listens there now
	p := d.newProvider(t, url, fastRetry)
	evs, err := drain(t, d.stream(t, p, context.Background()))
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 0 || pe.Attempts != 4 {
		t.Fatalf("error = %v, want a connection failure after 4 attempts", err)
	}
	if !strings.Contains(err.Error(), "connection failed") {
		t.Errorf("error %q does not say the connection failed", err)
	}
	assertNoKey(t, evs, err)
}
