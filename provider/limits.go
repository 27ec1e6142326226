package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Limits bound one model reply in time and size. A server that streams
// forever, stalls, or never answers would otherwise hold a turn, its
// memory and its session file without end. Each bound names the setting
// that sets it, so the error tells the user which one ended the reply.
type Limits struct {
	// StreamIdle ends a request that receives nothing for this long,
	// from the request's start to its last byte (provider.streamIdleSeconds;
	// 0 means 90 seconds). Nothing shown yet, it is retried.
	StreamIdle time.Duration
	// RequestTimeout bounds one Stream, retries included
	// (provider.requestTimeoutSeconds; 0 means 30 minutes).
	RequestTimeout time.Duration
	// MaxReplyBytes bounds the text, thinking and tool-call arguments of
	// one reply (provider.maxReplyMB; 0 means 4 MiB).
	MaxReplyBytes int
	// MaxToolCallBytes bounds the arguments of one tool call
	// (provider.maxToolCallMB; 0 means 2 MiB).
	MaxToolCallBytes int
}

// The defaults are generous: a reply of a large model at its output limit
// is well under a megabyte (a replayed transcript's edit may be larger),
// and a minute and a half without a byte, not even a keep-alive, is taken
// for a hang. A model that thinks longer than that in silence needs
// provider.streamIdleSeconds raised.
const (
	DefaultStreamIdle       = 90 * time.Second
	DefaultRequestTimeout   = 30 * time.Minute
	DefaultMaxReplyBytes    = 4 << 20
	DefaultMaxToolCallBytes = 2 << 20
)

func (l Limits) withDefaults() Limits {
	if l.StreamIdle <= 0 {
		l.StreamIdle = DefaultStreamIdle
	}
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = DefaultRequestTimeout
	}
	if l.MaxReplyBytes <= 0 {
		l.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if l.MaxToolCallBytes <= 0 {
		l.MaxToolCallBytes = DefaultMaxToolCallBytes
	}
	return l
}

// limitError is a reply ended by one of the Limits.
type limitError struct {
	setting   string // the setting that sets the bound
	message   string
	retryable bool // only a stall: the next try may not stall
}

func (e *limitError) Error() string { return e.message + " (limit: " + e.setting + ")" }

func idleError(d time.Duration) *limitError {
	return &limitError{setting: "provider.streamIdleSeconds", retryable: true,
		message: fmt.Sprintf("no data from the model for %s", roundWait(d))}
}

func timeoutError(d time.Duration) *limitError {
	return &limitError{setting: "provider.requestTimeoutSeconds",
		message: fmt.Sprintf("no complete reply within %s", roundWait(d))}
}

// roundWait shows a wait to the second, or to the millisecond below one
// (tests set short ones).
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

func replySizeError(n int) *limitError {
	return &limitError{setting: "provider.maxReplyMB",
		message: fmt.Sprintf("the reply passed %s of text, thinking and tool-call arguments", sizeText(n))}
}

func callSizeError(name string, n int) *limitError {
	what := "a tool call's arguments"
	if name != "" {
		what = "the arguments of a call of " + name
	}
	return &limitError{setting: "provider.maxToolCallMB",
		message: fmt.Sprintf("%s passed %s", what, sizeText(n))}
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// meter is one attempt's account: what its reply has produced against
// the size limits, and the request id its answer carried. The
// retrier counts every event it passes on; clients that assemble a call's
// arguments from chunks grow them through args, so that an endless call
// is cut before it is held whole.
type meter struct {
	lim   Limits
	total int
	// pending counts the argument bytes of calls still being assembled.
	pending int
	// requestID is the id the server gave the attempt's request.
	requestID string
}

// add counts an event; a non-nil error means it must not be passed on.
func (m *meter) add(ev Event) *limitError {
	n := len(ev.Text) + len(ev.Signature)
	if ev.Call != nil {
		if len(ev.Call.Args) > m.lim.MaxToolCallBytes {
			return callSizeError(ev.Call.Name, m.lim.MaxToolCallBytes)
		}
		n += len(ev.Call.Args) + len(ev.Call.Name) + len(ev.Call.Signature)
		m.pending = max(0, m.pending-len(ev.Call.Args))
	}
	m.total += n
	if m.total > m.lim.MaxReplyBytes {
		return replySizeError(m.lim.MaxReplyBytes)
	}
	return nil
}

// args appends a chunk of a call's arguments, failing once the call or
// the reply as a whole would pass its bound.
func (m *meter) args(dst []byte, chunk string, name string) ([]byte, error) {
	if len(dst)+len(chunk) > m.lim.MaxToolCallBytes {
		return dst, callSizeError(name, m.lim.MaxToolCallBytes)
	}
	if m.total+m.pending+len(chunk) > m.lim.MaxReplyBytes {
		return dst, replySizeError(m.lim.MaxReplyBytes)
	}
	m.pending += len(chunk)
	return append(dst, chunk...), nil
}

// signature appends a chunk of an opaque signature, within the reply's
// bound.
func (m *meter) signature(dst, chunk string) (string, error) {
	if m.total+m.pending+len(dst)+len(chunk) > m.lim.MaxReplyBytes {
		return dst, replySizeError(m.lim.MaxReplyBytes)
	}
	return dst + chunk, nil
}

// errIdle is the cause of an attempt's context cancelled for a stall.
var errIdle = errors.New("stream idle")

// idleWatch cancels an attempt that receives nothing for d: it is armed
// when the request goes out and re-armed by every read that returns data,
// so a server's keep-alive pings count as life, as they should.
type idleWatch struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
}

// watchIdle derives the attempt's context and starts the watch.
func watchIdle(ctx context.Context, d time.Duration) (context.Context, *idleWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &idleWatch{d: d, cancel: cancel}
	w.timer = time.AfterFunc(d, func() { cancel(errIdle) })
	return ctx, w
}

func (w *idleWatch) poke() {
	w.mu.Lock()
	w.timer.Reset(w.d)
	w.mu.Unlock()
}

func (w *idleWatch) stop() {
	w.mu.Lock()
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// idleBody is a response body under an idleWatch. A read cut short by the
// watch says so, instead of a bare "context canceled".
type idleBody struct {
	io.ReadCloser
	ctx context.Context
	w   *idleWatch
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.poke()
	}
	if err != nil && err != io.EOF && context.Cause(b.ctx) == errIdle {
		return n, idleError(b.w.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.w.stop()
	return b.ReadCloser.Close()
}
