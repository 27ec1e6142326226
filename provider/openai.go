package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cline-ls/cline-ls/internal/sse"
	"github.com/cline-ls/cline-ls/toolspec"
)

// openaiClient speaks Chat Completions streaming, to OpenAI itself or to
// any server that imitates it (Ollama, LM Studio, vLLM, OpenRouter).
type openaiClient struct {
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

func newOpenAI(cfg Config) *openaiClient {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	// The key comes from our settings alone, never from OPENAI_*
	// variables: an OPENAI_API_KEY must never be sent to a local server
	// that did not ask for it. No key, no Authorization header.
	header := cfg.header()
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &openaiClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		url:    joinURL(base, "chat/completions"),
		header: header,
		http:   httpClient(cfg.HTTPClient),
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.Limits, cfg.APIKey, cfg.Logger),

		reasoning: cfg.Reasoning,
	}
}

func (c *openaiClient) Name() string      { return c.name }
func (c *openaiClient) Model() string     { return c.model }
func (c *openaiClient) NativeTools() bool { return c.native }

// openaiErrorDetail is the error object of an error answer or an error
// chunk. Compatible servers fill it unevenly: code may be a string
// (OpenAI) or a number (llama.cpp), and llama.cpp adds the context size.
type openaiErrorDetail struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	NCtx    int             `json:"n_ctx"`
}

// openaiContextWords are what compatible servers say when a prompt does
// not fit: vLLM and OpenRouter "maximum context length is N tokens",
// Mistral "too large for model with N maximum context length", others
// "context length exceeded", llama.cpp "exceeds the available context
// size", text-generation-inference (with a 422) "`inputs` tokens +
// `max_new_tokens` must be <= N".
var openaiContextWords = []string{"context length", "maximum context", "context size", "context window", "`inputs` tokens + `max_new_tokens` must be"}

// openaiWindowPrefixes precede the window's size in those messages.
var openaiWindowPrefixes = []string{"maximum context length is ", "too large for model with ", "`max_new_tokens` must be <= "}

// contextLengthExceeded reports whether an OpenAI-shaped error means the
// prompt is over the context window.
func (d openaiErrorDetail) contextLengthExceeded() bool {
	if jsonString(d.Code) == "context_length_exceeded" || d.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(d.Message)
	for _, w := range openaiContextWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// parseOpenAIError reads an error answer. Some compatible servers send
// the error object at the top level, or a bare string.
func parseOpenAIError(status int, body []byte) apiError {
	var b struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil {
		return apiError{}
	}
	var d openaiErrorDetail
	if s := jsonString(b.Error); s != "" {
		d.Message = s
	} else if json.Unmarshal(b.Error, &d) != nil || d.Message == "" {
		_ = json.Unmarshal(body, &d)
	}
	a := apiError{
		message: d.Message,
		contextLength: (status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge ||
			status == http.StatusUnprocessableEntity) && d.contextLengthExceeded(),
	}
	if a.contextLength {
		a.contextWindow = d.NCtx
		for _, prefix := range openaiWindowPrefixes {
			if a.contextWindow != 0 {
				break
			}
			a.contextWindow = numberAfter(d.Message, prefix)
		}
	}
	return a
}

func (c *openaiClient) Stream(ctx context.Context, req Request) (Stream, error) {
	body, err := c.body(req)
	if err != nil {
		return nil, err
	}
	return c.retry.stream(ctx, func(ctx context.Context, m *meter, emit func(Event) bool) error {
		return c.attempt(ctx, body, m, emit)
	}), nil
}

// openaiRequest is the body of a Chat Completions request.
type openaiRequest struct {
	Model               string              `json:"model"`
	Messages            []openaiMessage     `json:"messages"`
	Stream              bool                `json:"stream"`
	StreamOptions       openaiStreamOptions `json:"stream_options"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	Tools               json.RawMessage     `json:"tools,omitempty"`
	ReasoningEffort     string              `json:"reasoning_effort,omitempty"`
}

type openaiStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openaiMessage is one chat message. Content is a string, or for a user
// turn with images an array of content parts.
type openaiMessage struct {
	Role string `json:"role"`
	// Content is a JSON string, or an array of content parts; it is left
	// out of an assistant message that only calls tools, and always sent
	// in a tool message, even empty.
	Content    json.RawMessage  `json:"content,omitempty"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiContentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	ImageURL *openaiImageURL `json:"image_url,omitempty"`
}

type openaiImageURL struct {
	URL string `json:"url"`
}

func (c *openaiClient) body(req Request) ([]byte, error) {
	p := openaiRequest{
		Model:         c.model,
		Stream:        true,
		StreamOptions: openaiStreamOptions{IncludeUsage: true},
		Temperature:   req.Temperature,
		// Sent only when asked for: models that do not reason refuse it.
		ReasoningEffort: (Reasoning{Effort: req.ReasoningEffort, Budget: req.ThinkingBudget}).or(c.reasoning).effort(),
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models reject max_tokens; most compatible
		// servers know only max_tokens.
		if c.name == "openai" {
			p.MaxCompletionTokens = req.MaxTokens
		} else {
			p.MaxTokens = req.MaxTokens
		}
	}
	if c.native && len(req.Tools) > 0 {
		raw, err := renderTools(toolspec.FormatOpenAI, req.Tools)
		if err != nil {
			return nil, err
		}
		p.Tools = raw
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openaiMessage{Role: "system", Content: rawJSON(req.System)})
	}
	p.Messages = append(p.Messages, openaiMessages(msgs)...)
	return json.Marshal(p)
}

// openaiMessages converts the history: tool results become one tool
// message each (before any text of the same turn), assistant tool calls
// ride on the assistant message, and thinking is dropped, since Chat
// Completions takes no reasoning back. A user turn with images sends its
// text and images as content parts, in their order.
func openaiMessages(msgs []Message) []openaiMessage {
	var out []openaiMessage
	for _, m := range msgs {
		var text strings.Builder
		if m.Role == RoleAssistant {
			var calls []openaiToolCall
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartText:
					text.WriteString(p.Text)
				case p.Kind == PartToolCall && p.Call != nil:
					tc := openaiToolCall{ID: p.Call.ID, Type: "function"}
					tc.Function.Name = p.Call.Name
					tc.Function.Arguments = string(objectArgs(p.Call.Args))
					calls = append(calls, tc)
				}
			}
			if text.Len() == 0 && len(calls) == 0 {
				continue
			}
			a := openaiMessage{Role: "assistant", ToolCalls: calls}
			if text.Len() > 0 {
				a.Content = rawJSON(text.String())
			}
			out = append(out, a)
			continue
		}
		var parts, resultImages []openaiContentPart
		images := false
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				content := p.Result.Content
				if p.Result.IsError {
					// Chat Completions has no error flag for results.
					content = "Error: " + content
				}
				out = append(out, openaiMessage{Role: "tool", Content: rawJSON(content), ToolCallID: p.Result.CallID})
				// A tool message's content can only be text in Chat
				// Completions, so the images a result returned follow the
				// turn's tool messages in a user message, each named by
				// the call it came from.
				if len(p.Result.Images) > 0 {
					resultImages = append(resultImages, openaiContentPart{Type: "text",
						Text: fmt.Sprintf("The images %s returned (call %s):", p.Result.Name, p.Result.CallID)})
					for _, im := range p.Result.Images {
						resultImages = append(resultImages, openaiImagePart(im))
					}
				}
			case p.Kind == PartText:
				text.WriteString(p.Text)
				if p.Text != "" {
					parts = append(parts, openaiContentPart{Type: "text", Text: p.Text})
				}
			case p.Kind == PartImage && p.Image != nil:
				images = true
				parts = append(parts, openaiImagePart(*p.Image))
			}
		}
		if len(resultImages) > 0 {
			parts = append(resultImages, parts...)
			images = true
		}
		switch {
		case images:
			out = append(out, openaiMessage{Role: "user", Content: rawJSON(parts)})
		case text.Len() > 0:
			out = append(out, openaiMessage{Role: "user", Content: rawJSON(text.String())})
		}
	}
	return out
}

// openaiImagePart is an image as a data URL content part.
func openaiImagePart(im Image) openaiContentPart {
	return openaiContentPart{Type: "image_url", ImageURL: &openaiImageURL{URL: "data:" + im.MIMEType + ";base64," + im.Data}}
}

// rawJSON encodes v, which is a string or content parts and always
// encodes.
func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// openaiStreamChunk is one streamed chunk. Fields whose type varies between
// servers are kept raw.
type openaiStreamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string          `json:"content"`
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// openaiCall is one tool call while its chunks arrive.
type openaiCall struct {
	id, name string
	args     []byte
}

func (c *openaiClient) attempt(ctx context.Context, body []byte, m *meter, emit func(Event) bool) error {
	resp, err := post(ctx, c.http, m, c.url, c.header, body, parseOpenAIError)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var (
		usage   Usage
		finish  string
		current = map[int]*openaiCall{} // the call being built at each index
		calls   []*openaiCall           // in order of appearance
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
	err = readEvents(resp, func(ev sse.Event) (bool, error) {
		if string(ev.Data) == "[DONE]" {
			return true, nil
		}
		var chunk openaiStreamChunk
		if err := decodeEvent(ev.Data, &chunk); err != nil {
			return false, err
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return false, &eventError{message: openaiEventMessage(chunk.Error)}
		}
		if u := chunk.Usage; u != nil {
			cached := u.PromptTokensDetails.CachedTokens
			usage.InputTokens = u.PromptTokens - cached
			usage.OutputTokens = u.CompletionTokens
			usage.CacheReadTokens = cached
			usage.CacheWriteTokens = u.PromptTokensDetails.CacheWriteTokens
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if t := reasoningText(d.ReasoningContent, d.Reasoning); t != "" {
				if err := send(Event{Kind: EventThinking, Text: t}); err != nil {
					return false, err
				}
			}
			if d.Content != "" {
				if err := send(Event{Kind: EventText, Text: d.Content}); err != nil {
					return false, err
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
				var err error
				if oc.args, err = m.args(oc.args, tc.Function.Arguments, oc.name); err != nil {
					return false, err
				}
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
				if err := flush(); err != nil {
					return false, err
				}
			}
		}
		return false, nil
	})
	// A server may end the body without [DONE] once it has said why the
	// reply stopped; that reply is complete.
	if err != nil && !(err == errIncomplete && finish != "") {
		return err
	}
	if finish == "" {
		return errIncomplete
	}
	return endReply(emit, usage, openaiStop(finish, len(calls) > 0))
}

// openaiEventMessage is the message of an error chunk, whose error is an
// object with a message or a bare string.
func openaiEventMessage(raw json.RawMessage) string {
	if s := jsonString(raw); s != "" {
		return s
	}
	var d openaiErrorDetail
	if json.Unmarshal(raw, &d) == nil && d.Message != "" {
		return d.Message
	}
	return "error in stream: " + bodyText(raw)
}

// reasoningText returns the reasoning a compatible server streams next to
// the content: reasoning_content (DeepSeek, vLLM) or reasoning
// (OpenRouter, Ollama). Either may be something other than a string on
// some server; that is ignored.
func reasoningText(fields ...json.RawMessage) string {
	for _, f := range fields {
		if s := jsonString(f); s != "" {
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
