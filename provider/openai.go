package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cline-ls/cline-ls/tools"
)

// openaiClient speaks Chat Completions streaming, to OpenAI itself or to
// any server that imitates it (Ollama, LM Studio, vLLM, OpenRouter).
type openaiClient struct {
	name   string
	model  string
	native bool
	chat   openai.ChatCompletionService
	retry  *retrier
}

func newOpenAI(cfg Config) *openaiClient {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	// The service is built from our options alone, not through
	// openai.NewClient, which would add OPENAI_* environment settings: an
	// OPENAI_API_KEY must never be sent to a local server that did not
	// ask for it.
	chat := openai.NewChatCompletionService(
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(instrument(cfg.HTTPClient)),
		option.WithMaxRetries(0),
	)
	return &openaiClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		chat:   chat,
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.APIKey, cfg.Logger, describeOpenAI),
	}
}

func (c *openaiClient) Name() string      { return c.name }
func (c *openaiClient) Model() string     { return c.model }
func (c *openaiClient) NativeTools() bool { return c.native }

// describeOpenAI takes the API's own message from an error response or an
// error event inside the stream.
func describeOpenAI(err error) string {
	var ae *openai.Error
	if errors.As(err, &ae) && ae.Message != "" {
		return ae.Message
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return se.Message
	}
	return ""
}

func (c *openaiClient) Stream(ctx context.Context, req Request) (Stream, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	return c.retry.stream(ctx, func(ctx context.Context, emit func(Event) bool) error {
		return c.attempt(ctx, params, emit)
	}), nil
}

func (c *openaiClient) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(c.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models reject max_tokens; most compatible
		// servers know only max_tokens.
		if c.name == "openai" {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if c.native && len(req.Tools) > 0 {
		ts, err := openaiTools(req.Tools)
		if err != nil {
			return p, err
		}
		p.Tools = ts
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	p.Messages = append(p.Messages, openaiMessages(msgs)...)
	return p, nil
}

// openaiTools converts tools.Render's OpenAI output into SDK values. The
// top level of each parameters schema becomes a map (the SDK's type);
// nested schemas stay raw JSON, keeping their authors' key order.
func openaiTools(defs []ToolDef) ([]openai.ChatCompletionToolUnionParam, error) {
	raw, err := renderTools(tools.FormatOpenAI, defs)
	if err != nil {
		return nil, err
	}
	var rendered []struct {
		Function struct {
			Name        string                     `json:"name"`
			Description string                     `json:"description"`
			Strict      *bool                      `json:"strict"`
			Parameters  map[string]json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &rendered); err != nil {
		return nil, fmt.Errorf("provider: reading rendered tools: %w", err)
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(rendered))
	for _, r := range rendered {
		fn := shared.FunctionDefinitionParam{Name: r.Function.Name}
		if r.Function.Description != "" {
			fn.Description = openai.String(r.Function.Description)
		}
		if r.Function.Strict != nil {
			fn.Strict = openai.Bool(*r.Function.Strict)
		}
		if r.Function.Parameters != nil {
			fn.Parameters = shared.FunctionParameters{}
			for k, v := range r.Function.Parameters {
				fn.Parameters[k] = v
			}
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}

// openaiMessages converts the history: tool results become one tool
// message each (before any text of the same turn), assistant tool calls
// ride on the assistant message, and thinking is dropped, since Chat
// Completions takes no reasoning back.
func openaiMessages(msgs []Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	for _, m := range msgs {
		var text strings.Builder
		if m.Role == RoleAssistant {
			var calls []openai.ChatCompletionMessageToolCallUnionParam
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartText:
					text.WriteString(p.Text)
				case p.Kind == PartToolCall && p.Call != nil:
					calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
							ID: p.Call.ID,
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
								Name:      p.Call.Name,
								Arguments: string(objectArgs(p.Call.Args)),
							},
						},
					})
				}
			}
			if text.Len() == 0 && len(calls) == 0 {
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
			if text.Len() > 0 {
				a.Content.OfString = openai.String(text.String())
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				content := p.Result.Content
				if p.Result.IsError {
					// Chat Completions has no error flag for results.
					content = "Error: " + content
				}
				out = append(out, openai.ToolMessage(content, p.Result.CallID))
			case p.Kind == PartText:
				text.WriteString(p.Text)
			}
		}
		if text.Len() > 0 {
			out = append(out, openai.UserMessage(text.String()))
		}
	}
	return out
}

// openaiCall is one tool call while its chunks arrive.
type openaiCall struct {
	id, name string
	args     []byte
}

func (c *openaiClient) attempt(ctx context.Context, params openai.ChatCompletionNewParams, emit func(Event) bool) error {
	s := c.chat.NewStreaming(ctx, params)
	defer s.Close()
	var (
		usage   Usage
		finish  string
		current = map[int64]*openaiCall{} // the call being built at each index
		calls   []*openaiCall             // in order of appearance
		flushed bool
	)
	send := func(ev Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	// flush emits the calls once they are complete (at the finish reason):
	// their arguments may arrive in any number of chunks.
	flush := func() error {
		if flushed {
			return nil
		}
		flushed = true
		for i, oc := range calls {
			id := oc.id
			if id == "" {
				id = fmt.Sprintf("call_%d", i)
			}
			if err := send(Event{Kind: EventToolCall, Call: &ToolCall{ID: id, Name: oc.name, Args: assembleArgs(oc.args)}}); err != nil {
				return err
			}
		}
		return nil
	}
	for s.Next() {
		chunk := s.Current()
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			cached := int(u.PromptTokensDetails.CachedTokens)
			usage = Usage{
				InputTokens:      int(u.PromptTokens) - cached,
				OutputTokens:     int(u.CompletionTokens),
				CacheReadTokens:  cached,
				CacheWriteTokens: int(u.PromptTokensDetails.CacheWriteTokens),
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if t := reasoningText(d); t != "" {
				if err := send(Event{Kind: EventThinking, Text: t}); err != nil {
					return err
				}
			}
			if d.Content != "" {
				if err := send(Event{Kind: EventText, Text: d.Content}); err != nil {
					return err
				}
			}
			for _, tc := range d.ToolCalls {
				oc := current[tc.Index]
				// Some servers (older Ollama) give every call index 0: a
				// new ID at a used index starts a new call.
				if oc == nil || (tc.ID != "" && oc.id != "" && tc.ID != oc.id) {
					oc = &openaiCall{}
					current[tc.Index] = oc
					calls = append(calls, oc)
				}
				if tc.ID != "" {
					oc.id = tc.ID
				}
				if tc.Function.Name != "" {
					oc.name = tc.Function.Name
				}
				oc.args = append(oc.args, tc.Function.Arguments...)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if finish == "" {
		return errIncomplete
	}
	return endReply(emit, usage, openaiStop(finish, len(calls) > 0))
}

// reasoningText returns the reasoning a compatible server streams next to
// the content: reasoning_content (DeepSeek, vLLM) or reasoning
// (OpenRouter, Ollama).
func reasoningText(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		// The SDK marks fields outside its schema as not Valid; their raw
		// JSON is still there.
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func openaiStop(reason string, calls bool) StopReason {
	switch reason {
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	case "content_filter":
		return StopRefusal
	}
	// Some servers say "stop" after tool calls.
	if calls {
		return StopToolUse
	}
	return StopEndTurn
}
