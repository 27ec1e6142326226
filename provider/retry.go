package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the one retry policy all clients share.
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
// retry. Its text never holds the API key: messages from the API are
// scrubbed, and the underlying errors are not kept, since they may carry
// request URLs.
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
	// RequestID is the id the server gave the last request, when it gave
	// one: what the vendor's support asks for.
	RequestID string
	// Limit names the setting whose bound ended the reply
	// (provider.streamIdleSeconds, provider.requestTimeoutSeconds,
	// provider.maxReplyMB, provider.maxToolCallMB), or is empty.
	Limit string
	// ContextWindow is the model's context size in tokens, when a context
	// length failure said it (most do: "maximum context length is N
	// tokens"); 0 otherwise. None of the APIs reports it with a
	// successful reply.
	ContextWindow int

	cause error // a context error, or nil
	// final is the retry policy's verdict that asking again cannot help
	// (a refusal, a page in place of a stream, a reply over its bound).
	final bool
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
	case e.Partial && e.Limit != "":
		b.WriteString("reply cut off after part of it was delivered")
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
	if e.RequestID != "" {
		b.WriteString(" (request id ")
		b.WriteString(e.RequestID)
		b.WriteString(")")
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
	return e.cause == nil && !e.final
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

// attemptFunc makes one request and passes its events to emit; a call's
// arguments assembled from chunks grow through m.args. It returns
// nil once it has emitted EventDone, errStopped when emit returned false,
// or the error that ended the attempt.
type attemptFunc func(ctx context.Context, m *meter, emit func(Event) bool) error

// retrier runs attempts under the retry policy for one provider.
type retrier struct {
	provider string
	policy   RetryPolicy
	limits   Limits
	scrub    scrubber
	logger   *slog.Logger
	// sleep waits for d or until ctx is done; tests replace it to record
	// the waits instead of taking them.
	sleep func(ctx context.Context, d time.Duration) error
}

func newRetrier(provider string, policy RetryPolicy, limits Limits, apiKey string, logger *slog.Logger) *retrier {
	return &retrier{
		provider: provider,
		policy:   policy.withDefaults(),
		limits:   limits.withDefaults(),
		scrub:    newScrubber(apiKey),
		logger:   logger,
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
// already shown, so that failure is final and marked Partial. The whole
// of it, retries and their waits included, is bounded by
// Limits.RequestTimeout, and each attempt's events by the size limits.
func (r *retrier) stream(parent context.Context, run attemptFunc) Stream {
	return func(yield func(Event, error) bool) {
		ctx, cancelAll := context.WithTimeoutCause(parent, r.limits.RequestTimeout, errTimeout)
		defer cancelAll()
		delivered, stopped := false, false
		var over error // a size limit an event passed
		for attempt := 1; ; attempt++ {
			m := &meter{lim: r.limits}
			emit := func(ev Event) bool {
				if le := m.add(ev); le != nil {
					over = le
					return false
				}
				delivered = true
				if !yield(ev, nil) {
					stopped = true
				}
				return !stopped
			}
			actx, cancel := context.WithCancel(ctx)
			err := run(actx, m, emit)
			cancel()
			if stopped {
				return
			}
			if over != nil {
				err = over
			}
			if err == nil {
				return
			}
			if parent.Err() != nil {
				yield(Event{}, &Error{Provider: r.provider, Attempts: attempt, Partial: delivered, cause: parent.Err(), RequestID: m.requestID})
				return
			}
			if ctx.Err() != nil {
				err = timeoutError(r.limits.RequestTimeout)
			}
			f := r.classify(err)
			e := &Error{Provider: r.provider, Status: f.status, Attempts: attempt, Partial: delivered, Message: f.message,
				ContextLength: f.contextLength, ContextWindow: f.contextWindow, Limit: f.limit, RequestID: m.requestID, final: !f.retryable}
			if delivered || !f.retryable || attempt >= r.policy.MaxAttempts || f.once && attempt >= 2 {
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
				if parent.Err() != nil {
					yield(Event{}, &Error{Provider: r.provider, Attempts: attempt, cause: err})
				} else {
					f := r.classify(timeoutError(r.limits.RequestTimeout))
					yield(Event{}, &Error{Provider: r.provider, Attempts: attempt, Message: f.message, Limit: f.limit, final: true})
				}
				return
			}
		}
	}
}

// onceError is a reply that came back unusable in a way a second request
// usually mends (a vendor's malformed call, an empty reply): retried once,
// not as often as a broken connection, since a request that fails so
// twice will likely go on failing.
type onceError struct{ message string }

func (e *onceError) Error() string { return e.message }

// errTimeout is the cause of a Stream's context past its RequestTimeout.
var errTimeout = errors.New("request timeout")

type failure struct {
	status        int
	retryable     bool
	retryAfter    time.Duration
	contextLength bool
	contextWindow int
	limit         string
	once          bool // retried once at most
	message       string
}

// classify decides whether an attempt's failure is worth another try.
func (r *retrier) classify(err error) failure {
	f := failure{message: r.scrub.scrub(err.Error())}
	var (
		ce *connError
		se *statusError
		be *streamError
		ee *eventError
		le *limitError
		br *badReplyError
		oe *onceError
	)
	switch {
	case errors.As(err, &le):
		f.limit = le.setting
		f.retryable = le.retryable
	case errors.As(err, &oe):
		f.retryable, f.once = true, true
	case errors.As(err, &br):
		// An HTML page or a JSON answer in place of a stream comes back
		// the same however often it is asked for.
	case errors.As(err, &ce):
		// No answer at all.
		f.retryable = true
	case errors.As(err, &se):
		f.status = se.status
		f.contextLength = se.contextLength
		f.contextWindow = se.contextWindow
		f.retryable = retryableStatus(se.status) && !se.contextLength
		if se.shouldRetry != nil && !se.contextLength {
			f.retryable = *se.shouldRetry
		}
		f.retryAfter = se.retryAfter
	case errors.As(err, &be), errors.As(err, &ee), errors.Is(err, errIncomplete):
		// The reply started and then broke: a cut connection, an error
		// event inside the stream, or an early end.
		f.retryable = true
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
