package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cline-ls/cline-ls/internal/sse"
	"github.com/cline-ls/cline-ls/toolspec"
)

// defaultAnthropicMaxTokens is sent when a request leaves MaxTokens at 0,
// since the Messages API requires a value.
const defaultAnthropicMaxTokens = 8192

// anthropicVersion is the Messages API version the client speaks.
const anthropicVersion = "2023-06-01"

// anthropicClient speaks the Messages streaming API.
type anthropicClient struct {
	name   string
	model  string
	native bool
	url    string
	header http.Header
	http   *http.Client
	retry  *retrier
	// reasoning applies to requests that set none.
	reasoning Reasoning
}

func newAnthropic(cfg Config) *anthropicClient {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com/"
	}
	// The key, base URL and headers come from our settings only, never
	// from ANTHROPIC_* variables.
	header := cfg.header()
	header.Set("X-Api-Key", cfg.APIKey)
	header.Set("Anthropic-Version", anthropicVersion)
	return &anthropicClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		url:    joinURL(base, "v1/messages"),
		header: header,
		http:   httpClient(cfg.HTTPClient),
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.Limits, cfg.APIKey, cfg.Logger),

		reasoning: cfg.Reasoning,
	}
}

func (c *anthropicClient) Name() string      { return c.name }
func (c *anthropicClient) Model() string     { return c.model }
func (c *anthropicClient) NativeTools() bool { return c.native }

// anthropicErrorBody is the API's error shape, in an error answer and in
// an in-stream error event.
type anthropicErrorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (b anthropicErrorBody) message() string {
	if b.Error.Message == "" {
		return ""
	}
	if b.Error.Type != "" {
		return b.Error.Type + ": " + b.Error.Message
	}
	return b.Error.Message
}

// parseAnthropicError reads an error answer. A prompt over the context
// window is a 400 invalid_request_error saying "prompt is too long" and
// the window's size.
func parseAnthropicError(status int, body []byte) apiError {
	var b anthropicErrorBody
	if json.Unmarshal(body, &b) != nil {
		return apiError{}
	}
	a := apiError{
		message: b.message(),
		contextLength: status == http.StatusBadRequest && b.Error.Type == "invalid_request_error" &&
			strings.Contains(strings.ToLower(b.Error.Message), "prompt is too long"),
	}
	if a.contextLength {
		// "prompt is too long: 210000 tokens > 200000 maximum"
		a.contextWindow = numberAfter(b.Error.Message, "> ")
	}
	return a
}

func (c *anthropicClient) Stream(ctx context.Context, req Request) (Stream, error) {
	body, err := c.body(req)
	if err != nil {
		return nil, err
	}
	return c.retry.stream(ctx, func(ctx context.Context, m *meter, emit func(Event) bool) error {
		return c.attempt(ctx, body, m, emit)
	}), nil
}

// anthropicRequest is the body of a Messages request.
type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	Stream      bool               `json:"stream"`
	System      []anthropicContent `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Tools       []json.RawMessage  `json:"tools,omitempty"`
	Thinking    *anthropicThinking `json:"thinking,omitempty"`
	Temperature *float64           `json:"temperature,omitempty"`
}

type anthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type anthropicMessage struct {
	Role    string             `json:"role"`
	Content []anthropicContent `json:"content"`
}

// anthropicContent is a content block; Type says which fields it uses.
type anthropicContent struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Thinking is a pointer because a thinking block must carry the
	// field even when its text is empty.
	Thinking  *string                `json:"thinking,omitempty"`
	Signature string                 `json:"signature,omitempty"`
	Data      string                 `json:"data,omitempty"`
	ID        string                 `json:"id,omitempty"`
	Name      string                 `json:"name,omitempty"`
	Input     json.RawMessage        `json:"input,omitempty"`
	ToolUseID string                 `json:"tool_use_id,omitempty"`
	Content   []anthropicResultBlock `json:"content,omitempty"`
	IsError   bool                   `json:"is_error,omitempty"`
	Source    *anthropicSource       `json:"source,omitempty"`
	// CacheControl marks a prompt caching breakpoint.
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// anthropicResultBlock is a block of a tool_result's content: text, or
// an image with its source.
type anthropicResultBlock struct {
	Type   string           `json:"type"`
	Text   string           `json:"text,omitempty"`
	Source *anthropicSource `json:"source,omitempty"`
}

type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// body builds the request. Prompt caching: the system prompt, the last
// tool and the last block of the last two user turns carry cache_control
// (four breakpoints, the API's maximum). The system and tool marks cache
// the fixed prefix; the two user marks let each request read the cache the
// previous one wrote and extend it.
func (c *anthropicClient) body(req Request) ([]byte, error) {
	p := anthropicRequest{Model: c.model, MaxTokens: defaultAnthropicMaxTokens, Stream: true, Temperature: req.Temperature}
	if req.MaxTokens > 0 {
		p.MaxTokens = req.MaxTokens
	}
	if budget := (Reasoning{Effort: req.ReasoningEffort, Budget: req.ThinkingBudget}).or(c.reasoning).budget(); budget > 0 {
		// The API's least budget; and room for the answer after the
		// thinking when the request left the reply's bound to us.
		budget = max(budget, 1024)
		if req.MaxTokens <= 0 {
			p.MaxTokens = max(p.MaxTokens, budget+defaultAnthropicMaxTokens)
		}
		if budget >= p.MaxTokens {
			return nil, fmt.Errorf("%s: thinking budget %d must be below max tokens %d", c.name, budget, p.MaxTokens)
		}
		p.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: budget}
	}
	if req.System != "" {
		p.System = []anthropicContent{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	if c.native && len(req.Tools) > 0 {
		ts, err := anthropicTools(req.Tools)
		if err != nil {
			return nil, err
		}
		p.Tools = ts
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	p.Messages = anthropicMessages(msgs)
	marked := 0
	for i := len(p.Messages) - 1; i >= 0 && marked < 2; i-- {
		if m := p.Messages[i]; m.Role == "user" {
			m.Content[len(m.Content)-1].CacheControl = ephemeral
			marked++
		}
	}
	return json.Marshal(p)
}

// anthropicTools takes toolspec.Render's Anthropic output as it is, the last
// tool marked for caching.
func anthropicTools(defs []ToolDef) ([]json.RawMessage, error) {
	raw, err := renderTools(toolspec.FormatAnthropic, defs)
	if err != nil {
		return nil, err
	}
	var ts []json.RawMessage
	if err := json.Unmarshal(raw, &ts); err != nil {
		return nil, fmt.Errorf("provider: reading rendered tools: %w", err)
	}
	if n := len(ts); n > 0 {
		last := bytes.TrimSpace(ts[n-1])
		if len(last) < 2 || last[len(last)-1] != '}' {
			return nil, fmt.Errorf("provider: rendered tool %d is not an object", n-1)
		}
		marked := append(bytes.Clone(last[:len(last)-1]), `,"cache_control":{"type":"ephemeral"}}`...)
		ts[n-1] = marked
	}
	return ts, nil
}

// anthropicMessages converts the history. Tool results travel in user
// turns and must come first in them; consecutive turns of one role are
// merged, since the API wants them alternating.
func anthropicMessages(msgs []Message) []anthropicMessage {
	var out []anthropicMessage
	add := func(role string, blocks []anthropicContent) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropicMessage{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			var blocks []anthropicContent
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartThinking && p.Redacted:
					blocks = append(blocks, anthropicContent{Type: "redacted_thinking", Data: p.Signature})
				case p.Kind == PartThinking && p.Signature != "":
					blocks = append(blocks, anthropicContent{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
				case p.Kind == PartText && p.Text != "":
					blocks = append(blocks, anthropicContent{Type: "text", Text: p.Text})
				case p.Kind == PartToolCall && p.Call != nil:
					blocks = append(blocks, anthropicContent{Type: "tool_use", ID: p.Call.ID, Name: p.Call.Name, Input: objectArgs(p.Call.Args)})
				}
			}
			add("assistant", blocks)
			continue
		}
		var results, rest []anthropicContent
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				r := p.Result
				b := anthropicContent{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				if r.Content != "" {
					b.Content = []anthropicResultBlock{{Type: "text", Text: r.Content}}
				}
				// A tool_result's content may hold image blocks beside its text.
				for _, im := range r.Images {
					b.Content = append(b.Content, anthropicResultBlock{Type: "image",
						Source: &anthropicSource{Type: "base64", MediaType: im.MIMEType, Data: im.Data}})
				}
				results = append(results, b)
			case p.Kind == PartText && p.Text != "":
				rest = append(rest, anthropicContent{Type: "text", Text: p.Text})
			case p.Kind == PartImage && p.Image != nil:
				rest = append(rest, anthropicContent{Type: "image", Source: &anthropicSource{Type: "base64", MediaType: p.Image.MIMEType, Data: p.Image.Data}})
			}
		}
		add("user", append(results, rest...))
	}
	return out
}

// objectArgs returns a call's arguments as a JSON object, which is all
// the APIs accept as recorded input; anything else (arguments a model
// wrote as invalid JSON) is sent as an empty object.
func objectArgs(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return args
}

// anthropicEvent is one streamed event; Type says which fields it uses.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
	// The error field of an error event.
	anthropicErrorBody
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// anthropicBlock is the state of one content block while it streams.
type anthropicBlock struct {
	kind      string // text, thinking, tool_use, ...
	id, name  string
	args      []byte
	signature string
}

func (c *anthropicClient) attempt(ctx context.Context, body []byte, m *meter, emit func(Event) bool) error {
	resp, err := post(ctx, c.http, m, c.url, c.header, body, parseAnthropicError)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var (
		usage  Usage
		stop   StopReason
		blocks = map[int]*anthropicBlock{}
	)
	send := func(ev Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	return readEvents(resp, func(se sse.Event) (bool, error) {
		var ev anthropicEvent
		if err := decodeEvent(se.Data, &ev); err != nil {
			return false, err
		}
		if ev.Type == "error" || se.Name == "error" {
			if m := ev.anthropicErrorBody.message(); m != "" {
				return false, &eventError{message: m}
			}
			return false, &eventError{message: "error event: " + bodyText(se.Data)}
		}
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = Usage{
				InputTokens:      u.InputTokens,
				OutputTokens:     u.OutputTokens,
				CacheReadTokens:  u.CacheReadInputTokens,
				CacheWriteTokens: u.CacheCreationInputTokens,
			}
		case "content_block_start":
			cb := ev.ContentBlock
			b := &anthropicBlock{kind: cb.Type, id: cb.ID, name: cb.Name}
			blocks[ev.Index] = b
			switch cb.Type {
			case "text":
				if cb.Text != "" {
					return false, send(Event{Kind: EventText, Text: cb.Text})
				}
			case "thinking":
				b.signature = cb.Signature
				if cb.Thinking != "" {
					return false, send(Event{Kind: EventThinking, Text: cb.Thinking})
				}
			case "redacted_thinking":
				return false, send(Event{Kind: EventThinking, Signature: cb.Data, Redacted: true})
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return false, nil
			}
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				return false, send(Event{Kind: EventText, Text: d.Text})
			case "thinking_delta":
				return false, send(Event{Kind: EventThinking, Text: d.Thinking})
			case "signature_delta":
				var err error
				if b.signature, err = m.signature(b.signature, d.Signature); err != nil {
					return false, err
				}
			case "input_json_delta":
				var err error
				if b.args, err = m.args(b.args, d.PartialJSON, b.name); err != nil {
					return false, err
				}
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			delete(blocks, ev.Index)
			if b == nil {
				return false, nil
			}
			switch b.kind {
			case "tool_use":
				return false, send(Event{Kind: EventToolCall, Call: &ToolCall{ID: b.id, Name: b.name, Args: assembleArgs(b.args)}})
			case "thinking":
				if b.signature != "" {
					return false, send(Event{Kind: EventThinking, Signature: b.signature})
				}
			}
		case "message_delta":
			if r := ev.Delta.StopReason; r != "" {
				stop = anthropicStop(r)
			}
			// message_delta usage is cumulative; keep what it reports.
			u := ev.Usage
			if u.OutputTokens > 0 {
				usage.OutputTokens = u.OutputTokens
			}
			if u.InputTokens > 0 {
				usage.InputTokens = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				usage.CacheReadTokens = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				usage.CacheWriteTokens = u.CacheCreationInputTokens
			}
		case "message_stop":
			return true, endReply(emit, usage, stop)
		}
		return false, nil
	})
}

// endReply emits the usage and the end of a reply. A reply that never
// said why it stopped was cut short.
func endReply(emit func(Event) bool, usage Usage, stop StopReason) error {
	if stop == "" {
		return errIncomplete
	}
	if !emit(Event{Kind: EventUsage, Usage: &usage}) || !emit(Event{Kind: EventDone, Stop: stop}) {
		return errStopped
	}
	return nil
}

func anthropicStop(r string) StopReason {
	switch r {
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopMaxTokens
	case "refusal":
		return StopRefusal
	}
	// end_turn, stop_sequence, pause_turn (a server tool paused; the turn
	// loop treats it as the end of this reply).
	return StopEndTurn
}

// assembleArgs turns the concatenated argument chunks of a call into
// JSON: empty means no arguments, and text that is not valid JSON is kept
// as a JSON string (see ToolCall.Args).
func assembleArgs(b []byte) json.RawMessage {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	s, _ := json.Marshal(string(b))
	return s
}
