package provider

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
)

// Provider is one configured model behind one API. Implementations are
// safe for concurrent use: each Stream call is an independent request.
type Provider interface {
	// Name is the provider's canonical name ("anthropic", "openai",
	// "ollama", "gemini", "replay", ...); each client sends its tools in
	// its API's shape (toolspec.Render).
	Name() string
	// Model is the model identifier sent to the API.
	Model() string
	// NativeTools reports whether tool definitions are sent through the
	// API's own tool calling. When false the system prompt documents the
	// tools as XML, the reply is plain text the session parses with
	// package prompt, and tool calls and results in the history are sent
	// as text (see ToolsAsText).
	NativeTools() bool
	// Stream starts a model reply. The returned error is for requests that
	// cannot be sent at all (an invalid tool schema, an unsatisfiable
	// option); everything that happens on the wire arrives through the
	// Stream. Nothing is sent until the Stream is ranged over.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Compile-time checks that every client is a Provider.
var (
	_ Provider = (*anthropicClient)(nil)
	_ Provider = (*openaiClient)(nil)
	_ Provider = (*geminiClient)(nil)
	_ Provider = (*Replay)(nil)
)

// Stream yields the events of one model reply, in order. It is single-use
// and lazy: the HTTP request is made when ranging starts. Ranging to the
// end, breaking out of the loop, or cancelling the context passed to
// Provider.Stream closes the HTTP response at once.
//
// A successful reply ends with an EventDone. A failure ends the stream
// with one final pair whose error is non-nil and whose Event is zero: an
// *Error for what happened on the wire (errors.Is(err, context.Canceled)
// holds when the context was cancelled), a plain error for a replay
// transcript that does not fit the request. Rate limits, 5xx
// answers and streams broken before any event was yielded are retried
// inside the Stream with backoff; a stream cut after events were yielded is
// never retried, since the consumer has already shown that text, and is
// reported as an *Error with Partial set.
type Stream iter.Seq2[Event, error]

// Role says who wrote a message.
type Role string

// Message roles. Tool results travel in RoleTool messages; providers whose
// APIs put them in user turns convert them.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartKind says what a Part holds.
type PartKind string

// Part kinds.
const (
	PartText       PartKind = "text"
	PartThinking   PartKind = "thinking"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
	// PartImage is an image the user attached; only user messages carry
	// one. Images a tool returns ride on its ToolResult.
	PartImage PartKind = "image"
)

// Message is one turn of a conversation. It is plain data with JSON tags,
// so sessions can persist histories as they are.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a message. Kind says which fields are used: Text
// for text; Text, Signature and Redacted for thinking; Call for a tool
// call; Result for a tool result; Image for an image.
type Part struct {
	Kind PartKind `json:"kind"`
	Text string   `json:"text,omitempty"`
	// Signature is an opaque token a provider attaches to its thinking
	// (Anthropic, Gemini) and wants back unchanged in later requests; a
	// thinking part without one cannot be replayed to Anthropic and is
	// dropped there.
	Signature string `json:"signature,omitempty"`
	// Redacted marks encrypted thinking: Signature holds the data and
	// Text is empty.
	Redacted bool        `json:"redacted,omitempty"`
	Call     *ToolCall   `json:"call,omitempty"`
	Result   *ToolResult `json:"result,omitempty"`
	Image    *Image      `json:"image,omitempty"`
}

// Image is an image sent inline with a message.
type Image struct {
	// MIMEType is the image's media type, such as "image/png".
	MIMEType string `json:"mime_type"`
	// Data is the image file, base64-encoded (standard alphabet, padded).
	Data string `json:"data"`
}

// ToolCall is a complete call of a tool by the model.
type ToolCall struct {
	// ID pairs the call with its result. Providers that do not number
	// calls (Gemini) get a generated one.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is the JSON object of arguments. Arguments a model wrote as
	// invalid JSON arrive as a JSON string holding the raw text, so that
	// validation tells the model what is wrong instead of the call being
	// lost.
	Args json.RawMessage `json:"args"`
	// Signature is an opaque token (Gemini's thought signature) that must
	// be sent back with the call.
	Signature string `json:"signature,omitempty"`
}

// ToolResult is what a tool call produced, as the model will see it.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Images are images the tool returned (read_files on a picture), in
	// the order the content names them; each client puts them where its
	// API lets a result carry images.
	Images []Image `json:"images,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// ThinkingPart returns a thinking part with its provider signature.
func ThinkingPart(text, signature string) Part {
	return Part{Kind: PartThinking, Text: text, Signature: signature}
}

// CallPart returns a tool call part.
func CallPart(c ToolCall) Part { return Part{Kind: PartToolCall, Call: &c} }

// ResultPart returns a tool result part.
func ResultPart(r ToolResult) Part { return Part{Kind: PartToolResult, Result: &r} }

// ImagePart returns an image part from a media type and base64 data.
func ImagePart(mimeType, data string) Part {
	return Part{Kind: PartImage, Image: &Image{MIMEType: mimeType, Data: data}}
}

// UserText returns a user message holding one text part.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart(text)}}
}

// ToolDef describes a tool to the model: its name, its description with
// placeholders already filled, and the JSON Schema of its arguments.
// Providers convert it to their API's shape with toolspec.Render.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model request in neutral form.
type Request struct {
	// System is the system prompt. Anthropic marks it for prompt caching.
	System   string
	Messages []Message
	// Tools are sent natively when the provider's NativeTools is true and
	// ignored otherwise (the system prompt documents them as XML then).
	Tools []ToolDef
	// MaxTokens bounds the reply, thinking included; 0 takes the
	// provider's default (8192 for Anthropic, which requires a value; the
	// server's own default elsewhere).
	MaxTokens int
	// Temperature, when set, overrides the model's default.
	Temperature *float64
	// ThinkingBudget, when positive, enables extended thinking with that
	// many tokens (Anthropic: must be at least 1024 and below MaxTokens;
	// Gemini: also asks for thought summaries). Chat Completions endpoints
	// take it as the nearest reasoning_effort; reasoning text they
	// volunteer (reasoning_content) is streamed as thinking either way.
	ThinkingBudget int
	// ReasoningEffort, "low", "medium" or "high", asks for that effort
	// (OpenAI's reasoning_effort; a budget of tokens elsewhere). With
	// neither set, the provider's configured Reasoning applies.
	ReasoningEffort string
}

// EventKind says what an Event holds.
type EventKind int

// Event kinds.
const (
	// EventText carries a delta of the reply's text in Text.
	EventText EventKind = iota + 1
	// EventThinking carries a delta of the model's thinking in Text, or,
	// at the end of a thinking block, its Signature (and Redacted for
	// encrypted thinking).
	EventThinking
	// EventToolCall carries one complete tool call in Call, its arguments
	// assembled from however many chunks they arrived in.
	EventToolCall
	// EventUsage carries the reply's token counts in Usage; it comes once,
	// just before EventDone.
	EventUsage
	// EventDone ends a successful reply; Stop says why the model stopped.
	EventDone
)

// String names the kind, for test failures and logs.
func (k EventKind) String() string {
	switch k {
	case EventText:
		return "text"
	case EventThinking:
		return "thinking"
	case EventToolCall:
		return "tool_call"
	case EventUsage:
		return "usage"
	case EventDone:
		return "done"
	}
	return "unknown"
}

// Event is one step of a streamed reply.
type Event struct {
	Kind      EventKind
	Text      string
	Signature string
	Redacted  bool
	Call      *ToolCall
	Usage     *Usage
	Stop      StopReason
}

// Usage counts a reply's tokens. InputTokens excludes the tokens read from
// or written to the prompt cache, so the whole prompt is the sum of the
// three input counts (Anthropic's convention; the others are converted).
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, mapped from each API's own.
const (
	StopEndTurn   StopReason = "end_turn"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopToolUse   StopReason = "tool_use"
)

// Reply is a model reply assembled from its events.
type Reply struct {
	// Message is the assistant message to append to the history: thinking,
	// text and tool call parts in the order they began, consecutive deltas
	// of one kind merged.
	Message Message
	Usage   Usage
	Stop    StopReason
	// Done reports whether EventDone arrived, i.e. the reply is complete.
	Done bool
}

// Add folds one event into the reply. Sessions call it while forwarding
// deltas to the client, so the history gets exactly what was shown.
func (r *Reply) Add(ev Event) {
	r.Message.Role = RoleAssistant
	parts := r.Message.Parts
	last := func(kind PartKind) *Part {
		if n := len(parts); n > 0 && parts[n-1].Kind == kind && !parts[n-1].Redacted {
			return &parts[n-1]
		}
		return nil
	}
	switch ev.Kind {
	case EventText:
		if p := last(PartText); p != nil {
			p.Text += ev.Text
		} else if ev.Text != "" {
			parts = append(parts, TextPart(ev.Text))
		}
	case EventThinking:
		switch p := last(PartThinking); {
		case ev.Redacted:
			parts = append(parts, Part{Kind: PartThinking, Signature: ev.Signature, Redacted: true})
		case p != nil && p.Signature == "":
			// A signature closes its block: deltas after it start a new one.
			p.Text += ev.Text
			p.Signature = ev.Signature
		default:
			parts = append(parts, ThinkingPart(ev.Text, ev.Signature))
		}
	case EventToolCall:
		if ev.Call != nil {
			parts = append(parts, CallPart(*ev.Call))
		}
	case EventUsage:
		if ev.Usage != nil {
			r.Usage = *ev.Usage
		}
	case EventDone:
		r.Stop = ev.Stop
		r.Done = true
	}
	r.Message.Parts = parts
}

// Text returns the reply's text parts joined.
func (r *Reply) Text() string {
	var b strings.Builder
	for _, p := range r.Message.Parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Calls returns the reply's tool calls in order.
func (r *Reply) Calls() []ToolCall {
	var calls []ToolCall
	for _, p := range r.Message.Parts {
		if p.Kind == PartToolCall && p.Call != nil {
			calls = append(calls, *p.Call)
		}
	}
	return calls
}

// Collect drains a stream into a Reply. On error the reply holds what
// arrived before it.
func Collect(s Stream) (Reply, error) {
	var r Reply
	for ev, err := range s {
		if err != nil {
			return r, err
		}
		r.Add(ev)
	}
	return r, nil
}
