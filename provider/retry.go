package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RetryPolicy bounds the one retry policy all clients share; the SDKs'
// own retries are switched off so that a failing request is not retried
// by two layers at once.
type RetryPolicy struct {
	// MaxAttempts is the number of tries in all; 0 means 4.
	MaxAttempts int
	// BaseDelay is the first backoff; each retry doubles it, with jitter.
	// 0 means one second. Tests set it to a millisecond.
	BaseDelay time.Duration
	// MaxDelay caps one wait. A server asking (Retry-After) for a longer
	// wait than this is not retried: a silent wait of minutes would look
	// like a hung turn, so the error says when to try again instead.
	// 0 means 60 seconds.
	MaxDelay time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 60 * time.Second
	}
	return p
}

// backoff is the wait before retry number n (1-based): BaseDelay doubled
// n-1 times, capped, with "equal jitter" (half fixed, half random) so that
// clients rate-limited together do not retry together.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay << min(n-1, 20)
	if d > p.MaxDelay || d <= 0 {
		d = p.MaxDelay
	}
	half := d / 2
	return half + rand.N(half+1)
}

// ErrContextLength is matched (errors.Is) by an *Error whose request was
// refused because the prompt does not fit the model's context window.
// Such a request is never retried as it is: the caller must shorten the
// history first.
var ErrContextLength = errors.New("context length exceeded")

// Error is a provider failure the retry policy gave up on or would not
// retry. Its text never holds the API key: messages from the API and the
// SDKs are scrubbed, and the SDK errors themselves are not kept, since
// they carry requests (URLs, headers) that may.
type Error struct {
	// Provider is the provider's name.
	Provider string
	// Status is the HTTP status of the last attempt; 0 when there was no
	// HTTP error status (a network failure or a broken stream).
	Status int
	// Attempts is how many requests were made.
	Attempts int
	// Partial reports that events had already been yielded when the
	// stream failed: the reply is incomplete and was not retried.
	Partial bool
	// RetryAfter is the wait the server asked for, when it asked.
	RetryAfter time.Duration
	// Message says what went wrong.
	Message string
	// ContextLength reports that the prompt exceeded the model's context
	// window; errors.Is(err, ErrContextLength) tests it.
	ContextLength bool

	cause error // a context error, or nil
}

// Error says which provider failed how, after how many attempts, and
// whether part of the reply had been delivered.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	switch {
	case e.cause != nil:
		b.WriteString("request cancelled")
	case e.Partial:
		b.WriteString("stream broken after part of the reply was delivered (not retried)")
	case e.Status != 0:
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
	default:
		b.WriteString("request failed")
	}
	if e.cause == nil && !e.Partial {
		if e.Attempts == 1 {
			b.WriteString(" (1 attempt)")
		} else {
			fmt.Fprintf(&b, " after %d attempts", e.Attempts)
		}
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; server asks to retry after %s", e.RetryAfter.Round(time.Second))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap returns the context error for a cancelled request, so that
// errors.Is(err, context.Canceled) holds; otherwise nil.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether e is a context length failure when target is
// ErrContextLength.
func (e *Error) Is(target error) bool { return target == ErrContextLength && e.ContextLength }

// Retryable reports whether the same request could succeed later: a rate
// limit, a server error, or a broken connection. Callers that retry whole
// turns may use it; the stream has already retried as far as its policy
// allows.
func (e *Error) Retryable() bool {
	return e.cause == nil && (e.Status == 0 || retryableStatus(e.Status))
}

func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// scrubber removes a secret from text, in the forms it could take in a
// URL as well as verbatim.
type scrubber struct{ forms []string }

func newScrubber(secret string) scrubber {
	if secret == "" {
		return scrubber{}
	}
	forms := []string{secret}
	for _, f := range []string{url.QueryEscape(secret), url.PathEscape(secret)} {
		if f != secret {
			forms = append(forms, f)
		}
	}
	return scrubber{forms: forms}
}

func (s scrubber) scrub(text string) string {
	for _, f := range s.forms {
		text = strings.ReplaceAll(text, f, "[redacted]")
	}
	return text
}

// attemptRecord is what the instrumented transport saw of one attempt's
// HTTP exchange. It lets the retry policy classify failures the same way
// for all three SDKs, whose error types differ.
type attemptRecord struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	netErr     error // the round trip itself failed
	bodyErr    error // reading the response body failed (not io.EOF)
}

func (r *attemptRecord) snapshot() (status int, retryAfter time.Duration, netErr, bodyErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter, r.netErr, r.bodyErr
}

type recordKey struct{}

// instrument returns a copy of c whose transport records each response's
// status, Retry-After and body read errors into the attemptRecord carried
// by the request's context. A nil c gets a plain client without timeout:
// replies stream for minutes, and the context bounds them.
func instrument(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = recordingTransport{base: base}
	return &cp
}

type recordingTransport struct{ base http.RoundTripper }

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(recordKey{}).(*attemptRecord)
	resp, err := t.base.RoundTrip(req)
	if rec == nil {
		return resp, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err != nil {
		rec.netErr = err
		return resp, err
	}
	rec.status = resp.StatusCode
	rec.retryAfter = retryAfter(resp.Header, time.Now())
	resp.Body = &recordingBody{ReadCloser: resp.Body, rec: rec}
	return resp, nil
}

type recordingBody struct {
	io.ReadCloser
	rec *attemptRecord
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.rec.mu.Lock()
		if b.rec.bodyErr == nil {
			b.rec.bodyErr = err
		}
		b.rec.mu.Unlock()
	}
	return n, err
}

// retryAfter reads the wait a server asks for: retry-after-ms (sent by
// OpenAI and Anthropic), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// errStopped is returned by an attempt whose consumer stopped ranging.
var errStopped = errors.New("consumer stopped")

// errIncomplete is returned by an attempt whose stream ended without the
// API's end-of-reply marker: the connection was closed early.
var errIncomplete = errors.New("stream ended before the reply was complete")

// attemptFunc makes one request and passes its events to emit. It returns
// nil once it has emitted EventDone, errStopped when emit returned false,
// or the error that ended the attempt.
type attemptFunc func(ctx context.Context, emit func(Event) bool) error

// retrier runs attempts under the retry policy for one provider.
type retrier struct {
	provider string
	policy   RetryPolicy
	scrub    scrubber
	logger   *slog.Logger
	// describe extracts the API's own message from an SDK error, or "".
	describe func(error) string
	// sleep waits for d or until ctx is done; tests replace it to record
	// the waits instead of taking them.
	sleep func(ctx context.Context, d time.Duration) error
}

func newRetrier(provider string, policy RetryPolicy, apiKey string, logger *slog.Logger, describe func(error) string) *retrier {
	return &retrier{
		provider: provider,
		policy:   policy.withDefaults(),
		scrub:    newScrubber(apiKey),
		logger:   logger,
		describe: describe,
		sleep:    sleepCtx,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stream returns a Stream that runs attempts until one succeeds, the
// policy gives up, or events have been yielded and the attempt then
// fails. Retrying after a yield would repeat text the consumer has
// already shown, so that failure is final and marked Partial.
func (r *retrier) stream(ctx context.Context, run attemptFunc) Stream {
	return func(yield func(Event, error) bool) {
		delivered, stopped := false, false
		emit := func(ev Event) bool {
			delivered = true
			if !yield(ev, nil) {
				stopped = true
			}
			return !stopped
		}
		for attempt := 1; ; attempt++ {
			rec := &attemptRecord{}
			actx, cancel := context.WithCancel(context.WithValue(ctx, recordKey{}, rec))
			err := run(actx, emit)
			cancel()
			if stopped || err == nil {
				return
			}
			if ctx.Err() != nil {
				yield(Event{}, &Error{Provider: r.provider, Attempts: attempt, Partial: delivered, cause: ctx.Err()})
				return
			}
			f := r.classify(err, rec)
			e := &Error{Provider: r.provider, Status: f.status, Attempts: attempt, Partial: delivered, Message: f.message}
			if delivered || !f.retryable || attempt >= r.policy.MaxAttempts {
				yield(Event{}, e)
				return
			}
			wait := r.policy.backoff(attempt)
			if f.retryAfter > 0 {
				if f.retryAfter > r.policy.MaxDelay {
					e.RetryAfter = f.retryAfter
					yield(Event{}, e)
					return
				}
				wait = f.retryAfter
			}
			if r.logger != nil {
				r.logger.Warn("model request failed, retrying", "provider", r.provider,
					"status", f.status, "attempt", attempt, "of", r.policy.MaxAttempts,
					"wait", wait, "error", f.message)
			}
			if err := r.sleep(ctx, wait); err != nil {
				yield(Event{}, &Error{Provider: r.provider, Attempts: attempt, cause: err})
				return
			}
		}
	}
}

type failure struct {
	status     int
	retryable  bool
	retryAfter time.Duration
	message    string
}

// classify decides whether an attempt's failure is worth another try,
// from what the transport saw rather than from SDK error types.
func (r *retrier) classify(err error, rec *attemptRecord) failure {
	status, after, netErr, bodyErr := rec.snapshot()
	msg := ""
	if r.describe != nil {
		msg = r.describe(err)
	}
	if msg == "" {
		msg = err.Error()
	}
	f := failure{message: r.scrub.scrub(msg)}
	switch {
	case netErr != nil:
		// No answer at all: a refused or reset connection, a DNS failure.
		f.retryable = true
		f.message = r.scrub.scrub("connection failed: " + rootCause(netErr).Error())
	case status >= 400:
		f.status = status
		f.retryable = retryableStatus(status)
		f.retryAfter = after
	case status >= 200 && status < 300:
		// The reply started and then broke: a cut connection, an error
		// event inside the stream, or an early end.
		f.retryable = true
		if bodyErr != nil {
			f.message = r.scrub.scrub("stream broken: " + rootCause(bodyErr).Error())
		}
	default:
		// Nothing was sent: the request could not be built.
	}
	return f
}

// rootCause strips wrappers such as *url.Error, whose text repeats the
// request URL.
func rootCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}
