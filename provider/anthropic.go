package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/cline-ls/cline-ls/tools"
)

// defaultAnthropicMaxTokens is sent when a request leaves MaxTokens at 0,
// since the Messages API requires a value.
const defaultAnthropicMaxTokens = 8192

// anthropicClient speaks the Messages streaming API.
type anthropicClient struct {
	name   string
	model  string
	native bool
	client anthropic.Client
	retry  *retrier
}

func newAnthropic(cfg Config) *anthropicClient {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com/"
	}
	// WithoutEnvironmentDefaults: the key, base URL and headers come from
	// our settings only, never from ANTHROPIC_* variables or profile files
	// the SDK would otherwise consult.
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(instrument(cfg.HTTPClient)),
		option.WithMaxRetries(0),
	)
	return &anthropicClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		client: client,
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.APIKey, cfg.Logger, describeAnthropic),
	}
}

func (c *anthropicClient) Name() string      { return c.name }
func (c *anthropicClient) Model() string     { return c.model }
func (c *anthropicClient) NativeTools() bool { return c.native }

// describeAnthropic takes the API's own message from an error response or
// an in-stream error event.
func describeAnthropic(err error) string {
	var ae *anthropic.Error
	if errors.As(err, &ae) && ae.Message != "" {
		if t := ae.Type(); t != "" {
			return string(t) + ": " + ae.Message
		}
		return ae.Message
	}
	return ""
}

func (c *anthropicClient) Stream(ctx context.Context, req Request) (Stream, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// This SDK version's params have no temperature field; the API
		// still takes one for the models that allow it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return c.retry.stream(ctx, func(ctx context.Context, emit func(Event) bool) error {
		return c.attempt(ctx, params, opts, emit)
	}), nil
}

// params builds the request. Prompt caching: the system prompt, the last
// tool and the last block of the last two user turns carry cache_control
// (four breakpoints, the API's maximum). The system and tool marks cache
// the fixed prefix; the two user marks let each request read the cache the
// previous one wrote and extend it.
func (c *anthropicClient) params(req Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(c.model),
		MaxTokens: defaultAnthropicMaxTokens,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.ThinkingBudget > 0 {
		if int64(req.ThinkingBudget) >= p.MaxTokens {
			return p, fmt.Errorf("%s: thinking budget %d must be below max tokens %d", c.name, req.ThinkingBudget, p.MaxTokens)
		}
		p.Thinking = anthropic.ThinkingConfigParamUnion{OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(req.ThinkingBudget)}}
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	if c.native && len(req.Tools) > 0 {
		ts, err := anthropicTools(req.Tools)
		if err != nil {
			return p, err
		}
		ts[len(ts)-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
		p.Tools = ts
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	p.Messages = anthropicMessages(msgs)
	marked := 0
	for i := len(p.Messages) - 1; i >= 0 && marked < 2; i-- {
		m := p.Messages[i]
		if m.OfUser == nil || len(m.OfUser.Content) == 0 {
			continue
		}
		if cc := m.OfUser.Content[len(m.OfUser.Content)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
			marked++
		}
	}
	return p, nil
}

// anthropicTools converts tools.Render's Anthropic output into SDK values.
func anthropicTools(defs []ToolDef) ([]anthropic.ToolUnionParam, error) {
	raw, err := renderTools(tools.FormatAnthropic, defs)
	if err != nil {
		return nil, err
	}
	var rendered []struct {
		Name        string                     `json:"name"`
		Description string                     `json:"description"`
		InputSchema map[string]json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &rendered); err != nil {
		return nil, fmt.Errorf("provider: reading rendered tools: %w", err)
	}
	out := make([]anthropic.ToolUnionParam, 0, len(rendered))
	for _, r := range rendered {
		schema := anthropic.ToolInputSchemaParam{}
		for k, v := range r.InputSchema {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				if err := json.Unmarshal(v, &schema.Required); err != nil {
					return nil, fmt.Errorf("provider: tool %s: required: %w", r.Name, err)
				}
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
		t := &anthropic.ToolParam{Name: r.Name, InputSchema: schema}
		if r.Description != "" {
			t.Description = param.NewOpt(r.Description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: t})
	}
	return out, nil
}

// anthropicMessages converts the history. Tool results travel in user
// turns and must come first in them; consecutive turns of one role are
// merged, since the API wants them alternating.
func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	add := func(user bool, blocks []anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 {
			if prev := out[n-1]; user && prev.OfUser != nil {
				prev.OfUser.Content = append(prev.OfUser.Content, blocks...)
				return
			} else if !user && prev.OfAssistant != nil {
				prev.OfAssistant.Content = append(prev.OfAssistant.Content, blocks...)
				return
			}
		}
		if user {
			out = append(out, anthropic.NewUserMessage(blocks...))
		} else {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		}
	}
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			var blocks []anthropic.ContentBlockParamUnion
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartThinking && p.Redacted:
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(p.Signature))
				case p.Kind == PartThinking && p.Signature != "":
					blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
				case p.Kind == PartText && p.Text != "":
					blocks = append(blocks, anthropic.NewTextBlock(p.Text))
				case p.Kind == PartToolCall && p.Call != nil:
					blocks = append(blocks, anthropic.NewToolUseBlock(p.Call.ID, objectArgs(p.Call.Args), p.Call.Name))
				}
			}
			add(false, blocks)
			continue
		}
		var results, rest []anthropic.ContentBlockParamUnion
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				r := p.Result
				b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
				if r.Content != "" {
					b.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}}
				}
				if r.IsError {
					b.IsError = param.NewOpt(true)
				}
				results = append(results, anthropic.ContentBlockParamUnion{OfToolResult: &b})
			case p.Kind == PartText && p.Text != "":
				rest = append(rest, anthropic.NewTextBlock(p.Text))
			}
		}
		add(true, append(results, rest...))
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

// anthropicBlock is the state of one content block while it streams.
type anthropicBlock struct {
	kind      string // text, thinking, tool_use, ...
	id, name  string
	args      []byte
	signature string
}

func (c *anthropicClient) attempt(ctx context.Context, params anthropic.MessageNewParams, opts []option.RequestOption, emit func(Event) bool) error {
	s := c.client.Messages.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var (
		usage  Usage
		stop   StopReason
		blocks = map[int64]*anthropicBlock{}
	)
	send := func(ev Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = Usage{
				InputTokens:      int(u.InputTokens),
				OutputTokens:     int(u.OutputTokens),
				CacheReadTokens:  int(u.CacheReadInputTokens),
				CacheWriteTokens: int(u.CacheCreationInputTokens),
			}
		case "content_block_start":
			cb := ev.ContentBlock
			b := &anthropicBlock{kind: cb.Type, id: cb.ID, name: cb.Name}
			blocks[ev.Index] = b
			switch cb.Type {
			case "text":
				if cb.Text != "" {
					if err := send(Event{Kind: EventText, Text: cb.Text}); err != nil {
						return err
					}
				}
			case "thinking":
				if cb.Thinking != "" {
					if err := send(Event{Kind: EventThinking, Text: cb.Thinking}); err != nil {
						return err
					}
				}
				b.signature = cb.Signature
			case "redacted_thinking":
				if err := send(Event{Kind: EventThinking, Signature: cb.Data, Redacted: true}); err != nil {
					return err
				}
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				continue
			}
			d := ev.Delta
			var err error
			switch d.Type {
			case "text_delta":
				err = send(Event{Kind: EventText, Text: d.Text})
			case "thinking_delta":
				err = send(Event{Kind: EventThinking, Text: d.Thinking})
			case "signature_delta":
				b.signature += d.Signature
			case "input_json_delta":
				b.args = append(b.args, d.PartialJSON...)
			}
			if err != nil {
				return err
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			delete(blocks, ev.Index)
			if b == nil {
				continue
			}
			var err error
			switch b.kind {
			case "tool_use":
				err = send(Event{Kind: EventToolCall, Call: &ToolCall{ID: b.id, Name: b.name, Args: assembleArgs(b.args)}})
			case "thinking":
				if b.signature != "" {
					err = send(Event{Kind: EventThinking, Signature: b.signature})
				}
			}
			if err != nil {
				return err
			}
		case "message_delta":
			if r := ev.Delta.StopReason; r != "" {
				stop = anthropicStop(r)
			}
			// message_delta usage is cumulative; keep what it reports.
			u := ev.Usage
			if u.OutputTokens > 0 {
				usage.OutputTokens = int(u.OutputTokens)
			}
			if u.InputTokens > 0 {
				usage.InputTokens = int(u.InputTokens)
			}
			if u.CacheReadInputTokens > 0 {
				usage.CacheReadTokens = int(u.CacheReadInputTokens)
			}
			if u.CacheCreationInputTokens > 0 {
				usage.CacheWriteTokens = int(u.CacheCreationInputTokens)
			}
		case "message_stop":
			return endReply(emit, usage, stop)
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	return errIncomplete
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

func anthropicStop(r anthropic.StopReason) StopReason {
	switch r {
	case anthropic.StopReasonToolUse:
		return StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return StopMaxTokens
	case anthropic.StopReasonRefusal:
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
