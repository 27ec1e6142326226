package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Transcript is a recorded conversation for the replay provider: one
// reply per model request, in order. In JSON (see
// testdata/replay/*.json):
//
//	{
//	  "model": "demo",
//	  "native_tools": true,
//	  "chunk_size": 8,
//	  "replies": [
//	    {
//	      "expect": {"last_user_contains": "fix the test"},
//	      "events": [
//	        {"wait": {"ms": 400, "jitter_ms": 300}},
//	        {"thinking": "The test name says ..."},
//	        {"text": "Let me read it."},
//	        {"tool_call": {"id": "c1", "name": "read_files", "args": {"files": [{"path": "a_test.go"}]}}},
//	        {"usage": {"input_tokens": 1200, "output_tokens": 30}},
//	        {"stop": "tool_use"}
//	      ]
//	    }
//	  ]
//	}
//
// Each event sets exactly one field. Text and thinking are streamed in
// chunks of chunk_size bytes (default 8, never splitting a character). A
// reply without a stop event stops with tool_use if it made a call and
// end_turn otherwise; its usage, zero unless given, is sent just before
// the end, as real providers do. An error event ends the reply with an
// *Error, to rehearse broken streams. A wait event pauses the stream as a
// model's time to first token or a stall mid-reply would: ms milliseconds
// plus a random part of up to jitter_ms, so that sessions replaying one
// transcript drift apart as real ones do; a cancelled request ends the
// wait at once. An endless event repeats its text for as long as the
// reply is read and a hang event sends nothing more, to rehearse a server
// stuck in a loop and one that stopped answering: the provider's Limits
// end them as they would a real client's reply (a wait past the idle
// limit too). The optional expect checks the
// request, so that a transcript which no longer matches the code fails
// loudly instead of replaying answers to questions nobody asked.
type Transcript struct {
	Model string `json:"model,omitempty"`
	// NativeTools says whether the replies call tools natively (tool_call
	// events) or write XML in their text; unset means native.
	NativeTools *bool         `json:"native_tools,omitempty"`
	ChunkSize   int           `json:"chunk_size,omitempty"`
	Replies     []ReplayReply `json:"replies"`
}

// ReplayReply is one recorded model reply.
type ReplayReply struct {
	Expect *Expect       `json:"expect,omitempty"`
	Events []ReplayEvent `json:"events"`
}

// ReplayEvent is one recorded step of a reply; exactly one field is set.
type ReplayEvent struct {
	Text     string     `json:"text,omitempty"`
	Thinking string     `json:"thinking,omitempty"`
	ToolCall *ToolCall  `json:"tool_call,omitempty"`
	Usage    *Usage     `json:"usage,omitempty"`
	Stop     StopReason `json:"stop,omitempty"`
	Error    string     `json:"error,omitempty"`
	Wait     *Wait      `json:"wait,omitempty"`
	// Endless repeats its text as the reply's text without end, as a
	// server stuck in a loop would; Hang sends nothing more, as a server
	// that stopped answering would. Either ends the reply only through the
	// provider's Limits (or the request's cancellation), and must be last.
	Endless string `json:"endless,omitempty"`
	Hang    bool   `json:"hang,omitempty"`
}

// Wait is a pause in a replayed reply: MS milliseconds plus a uniformly
// random part of [0, JitterMS).
type Wait struct {
	MS       int `json:"ms"`
	JitterMS int `json:"jitter_ms,omitempty"`
}

// MaxWait bounds one wait (ms + jitter_ms), a minute: a transcript is a
// rehearsal, not a way to hang a session.
const MaxWait = time.Minute

const maxWaitMS = int(MaxWait / time.Millisecond)

// duration draws the pause.
func (w Wait) duration() time.Duration {
	d := time.Duration(w.MS) * time.Millisecond
	if w.JitterMS > 0 {
		d += rand.N(time.Duration(w.JitterMS) * time.Millisecond)
	}
	return d
}

// Expect is what a request must satisfy for its recorded reply to apply.
// Unset fields are not checked. It sees the request as the session built
// it: tool calls and results are parts on the XML path too, since only the
// real clients rewrite them as text.
type Expect struct {
	// SystemContains must occur in the system prompt.
	SystemContains string `json:"system_contains,omitempty"`
	// LastUserContains must occur in the text of the last user message.
	LastUserContains string `json:"last_user_contains,omitempty"`
	// LastToolResultContains must occur in the content of the last tool
	// result in the history.
	LastToolResultContains string `json:"last_tool_result_contains,omitempty"`
	// LastToolResultIsError, when set, must equal that result's IsError.
	LastToolResultIsError *bool `json:"last_tool_result_is_error,omitempty"`
	// Tools must all be among the tools the request offers.
	Tools []string `json:"tools,omitempty"`
	// Messages, when positive, is the exact length of the history.
	Messages int `json:"messages,omitempty"`
}

// LoadTranscript reads and checks a transcript file.
func LoadTranscript(path string) (Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Transcript{}, fmt.Errorf("replay: %w", err)
	}
	var t Transcript
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Transcript{}, fmt.Errorf("replay: %s: %w", path, err)
	}
	if err := t.Validate(); err != nil {
		return Transcript{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return t, nil
}

// Validate checks that every event sets exactly one field, that stop
// reasons are known and come last, and that call arguments are objects.
func (t Transcript) Validate() error {
	if len(t.Replies) == 0 {
		return errors.New("replay: transcript has no replies")
	}
	for i, r := range t.Replies {
		for j, ev := range r.Events {
			at := fmt.Sprintf("replay: reply %d, event %d", i+1, j+1)
			n := 0
			for _, set := range []bool{ev.Text != "", ev.Thinking != "", ev.ToolCall != nil, ev.Usage != nil, ev.Stop != "", ev.Error != "", ev.Wait != nil, ev.Endless != "", ev.Hang} {
				if set {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("%s: sets %d fields, want exactly one of text, thinking, tool_call, usage, stop, error, wait, endless, hang", at, n)
			}
			if w := ev.Wait; w != nil && (w.MS < 0 || w.JitterMS < 0 || w.MS > maxWaitMS || w.JitterMS > maxWaitMS-w.MS) {
				return fmt.Errorf("%s: wait of %d ms with a jitter of %d ms, want both at least 0 and at most %d ms in all", at, w.MS, w.JitterMS, maxWaitMS)
			}
			if (ev.Stop != "" || ev.Error != "" || ev.Endless != "" || ev.Hang) && j != len(r.Events)-1 {
				return fmt.Errorf("%s: stop, error, endless and hang must be the reply's last event", at)
			}
			switch ev.Stop {
			case "", StopEndTurn, StopMaxTokens, StopRefusal, StopToolUse:
			default:
				return fmt.Errorf("%s: unknown stop reason %q (want end_turn, max_tokens, refusal or tool_use)", at, ev.Stop)
			}
			if c := ev.ToolCall; c != nil {
				if c.Name == "" {
					return fmt.Errorf("%s: tool call without a name", at)
				}
				if len(c.Args) > 0 && !isObject(c.Args) {
					return fmt.Errorf("%s: tool call args must be a JSON object", at)
				}
			}
		}
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// Replay is the replay provider: each Stream plays the transcript's next
// reply. It is safe for concurrent use, though a transcript only makes
// sense for requests made in order.
type Replay struct {
	t      Transcript
	native bool
	limits Limits

	mu       sync.Mutex
	next     int
	requests []Request
}

// NewReplay returns a replay provider for a transcript.
func NewReplay(t Transcript) (*Replay, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	native := t.NativeTools == nil || *t.NativeTools
	return &Replay{t: t, native: native, limits: Limits{}.withDefaults()}, nil
}

func newReplayFromConfig(cfg Config) (Provider, error) {
	var t Transcript
	switch {
	case cfg.Replay != nil:
		t = *cfg.Replay
	case cfg.Transcript != "":
		var err error
		if t, err = LoadTranscript(cfg.Transcript); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("provider: replay needs a transcript")
	}
	r, err := NewReplay(t)
	if err != nil {
		return nil, err
	}
	if cfg.Model != "" {
		r.t.Model = cfg.Model
	}
	if cfg.NativeTools != nil {
		r.native = *cfg.NativeTools
	}
	r.limits = cfg.Limits.withDefaults()
	return r, nil
}

// Name returns "replay".
func (r *Replay) Name() string { return "replay" }

// Model returns the transcript's model name, "replay" if it has none.
func (r *Replay) Model() string {
	if r.t.Model == "" {
		return "replay"
	}
	return r.t.Model
}

// NativeTools reports whether the transcript's replies call tools natively.
func (r *Replay) NativeTools() bool { return r.native }

// Requests returns the requests streamed so far, for tests to inspect.
func (r *Replay) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Remaining returns how many replies have not been played.
func (r *Replay) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.t.Replies) - r.next
}

// Stream plays the next reply once ranged over; requests beyond the
// transcript's end, or not matching the reply's expectation, end the
// stream with an error.
func (r *Replay) Stream(ctx context.Context, req Request) (Stream, error) {
	return func(yield func(Event, error) bool) {
		r.mu.Lock()
		n := r.next
		r.requests = append(r.requests, req)
		if n < len(r.t.Replies) {
			r.next++
		}
		r.mu.Unlock()
		if n >= len(r.t.Replies) {
			yield(Event{}, fmt.Errorf("replay: request %d has no reply: the transcript has %d", n+1, len(r.t.Replies)))
			return
		}
		reply := r.t.Replies[n]
		if err := reply.Expect.check(req); err != nil {
			yield(Event{}, fmt.Errorf("replay: reply %d does not match the request: %w", n+1, err))
			return
		}
		ctx, cancel := context.WithTimeoutCause(ctx, r.limits.RequestTimeout, errTimeout)
		defer cancel()
		r.play(ctx, n, reply, yield)
	}, nil
}

func (r *Replay) play(ctx context.Context, n int, reply ReplayReply, yield func(Event, error) bool) {
	size := r.t.ChunkSize
	if size <= 0 {
		size = 8
	}
	var (
		usage     Usage
		stop      StopReason
		calls     int
		delivered bool
	)
	// cancelled ends the reply with the request's own end, as a real
	// provider's stream does, or with the limit that ended it.
	cancelled := func(err error) {
		if context.Cause(ctx) == errTimeout {
			le := timeoutError(r.limits.RequestTimeout)
			yield(Event{}, &Error{Provider: "replay", Attempts: 1, Partial: delivered, Message: le.Error(), Limit: le.setting})
			return
		}
		yield(Event{}, &Error{Provider: "replay", Attempts: 1, Partial: delivered, cause: err})
	}
	limited := func(le *limitError) {
		yield(Event{}, &Error{Provider: "replay", Attempts: 1, Partial: delivered, Message: le.Error(), Limit: le.setting})
	}
	m := &meter{lim: r.limits}
	send := func(ev Event) bool {
		if err := ctx.Err(); err != nil {
			cancelled(err)
			return false
		}
		if le := m.add(ev); le != nil {
			limited(le)
			return false
		}
		delivered = true
		return yield(ev, nil)
	}
	// pause waits as a stalled stream would: past the idle limit, the
	// limit ends it, as it would a real client's.
	pause := func(d time.Duration) bool {
		idle := d > r.limits.StreamIdle
		if idle {
			d = r.limits.StreamIdle
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			cancelled(ctx.Err())
			return false
		}
		if idle {
			limited(idleError(r.limits.StreamIdle))
			return false
		}
		return true
	}
	for _, ev := range reply.Events {
		switch {
		case ev.Text != "":
			for _, c := range chunks(ev.Text, size) {
				if !send(Event{Kind: EventText, Text: c}) {
					return
				}
			}
		case ev.Thinking != "":
			for _, c := range chunks(ev.Thinking, size) {
				if !send(Event{Kind: EventThinking, Text: c}) {
					return
				}
			}
		case ev.ToolCall != nil:
			c := *ev.ToolCall
			if c.ID == "" {
				c.ID = fmt.Sprintf("replay_%d_%d", n+1, calls+1)
			}
			if len(c.Args) == 0 {
				c.Args = json.RawMessage("{}")
			}
			calls++
			if !send(Event{Kind: EventToolCall, Call: &c}) {
				return
			}
		case ev.Usage != nil:
			usage = *ev.Usage
		case ev.Stop != "":
			stop = ev.Stop
		case ev.Error != "":
			yield(Event{}, &Error{Provider: "replay", Attempts: 1, Partial: delivered, Message: ev.Error})
			return
		case ev.Wait != nil:
			if !pause(ev.Wait.duration()) {
				return
			}
		case ev.Hang:
			pause(time.Duration(math.MaxInt64))
			return
		case ev.Endless != "":
			for send(Event{Kind: EventText, Text: ev.Endless}) {
			}
			return
		}
	}
	if stop == "" {
		stop = StopEndTurn
		if calls > 0 {
			stop = StopToolUse
		}
	}
	if send(Event{Kind: EventUsage, Usage: &usage}) {
		send(Event{Kind: EventDone, Stop: stop})
	}
}

// chunks cuts s into pieces of about size bytes without splitting a
// character.
func chunks(s string, size int) []string {
	var out []string
	for len(s) > size {
		cut := size
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (e *Expect) check(req Request) error {
	if e == nil {
		return nil
	}
	if e.SystemContains != "" && !strings.Contains(req.System, e.SystemContains) {
		return fmt.Errorf("system prompt lacks %q", e.SystemContains)
	}
	if e.Messages > 0 && len(req.Messages) != e.Messages {
		return fmt.Errorf("history has %d messages, want %d", len(req.Messages), e.Messages)
	}
	if e.LastUserContains != "" {
		text, found := "", false
		for i := len(req.Messages) - 1; i >= 0 && !found; i-- {
			if m := req.Messages[i]; m.Role == RoleUser {
				found = true
				for _, p := range m.Parts {
					if p.Kind == PartText {
						text += p.Text
					}
				}
			}
		}
		if !strings.Contains(text, e.LastUserContains) {
			return fmt.Errorf("last user message lacks %q; it was %q", e.LastUserContains, clip(text))
		}
	}
	if e.LastToolResultContains != "" || e.LastToolResultIsError != nil {
		var last *ToolResult
		for i := len(req.Messages) - 1; i >= 0 && last == nil; i-- {
			parts := req.Messages[i].Parts
			for j := len(parts) - 1; j >= 0; j-- {
				if parts[j].Kind == PartToolResult && parts[j].Result != nil {
					last = parts[j].Result
					break
				}
			}
		}
		if last == nil {
			return errors.New("history has no tool result")
		}
		if !strings.Contains(last.Content, e.LastToolResultContains) {
			return fmt.Errorf("last tool result (%s) lacks %q; it was %q", last.Name, e.LastToolResultContains, clip(last.Content))
		}
		if e.LastToolResultIsError != nil && last.IsError != *e.LastToolResultIsError {
			return fmt.Errorf("last tool result (%s) has is_error %v, want %v", last.Name, last.IsError, *e.LastToolResultIsError)
		}
	}
	for _, name := range e.Tools {
		found := false
		for _, d := range req.Tools {
			found = found || d.Name == name
		}
		if !found {
			return fmt.Errorf("request does not offer tool %s", name)
		}
	}
	return nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
