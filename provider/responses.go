package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/internal/sse"
	"github.com/cline-ls/cline-ls/toolspec"
)

// responsesClient speaks OpenAI's Responses API, streaming, for the
// models served only there (the codex models, the -pro models). It keeps
// nothing on OpenAI's side (store false): the whole conversation goes in
// each request, reasoning included as the encrypted items the API gave
// back, so that a model keeps its reasoning across the calls of a turn
// as it does through Anthropic's signed thinking.
type responsesClient struct {
	openai *openaiClient // name, model, key, retry policy and errors are Chat Completions'
	url    string
}

// usesResponses reports whether cfg's model is reached through the
// Responses API: when the settings say so (provider.api), else for
// OpenAI's own models that Chat Completions does not serve. A compatible
// server is never sent there unless asked.
func usesResponses(cfg Config) bool {
	switch strings.ToLower(cfg.API) {
	case "responses":
		return true
	case "chat", "chat-completions":
		return false
	}
	if cfg.Name != "openai" {
		return false
	}
	m := strings.ToLower(cfg.Model)
	return strings.Contains(m, "codex") || strings.HasSuffix(m, "-pro") || strings.Contains(m, "-pro-") ||
		strings.Contains(m, "deep-research") || strings.HasPrefix(m, "computer-use")
}

func newResponses(cfg Config) *responsesClient {
	c := newOpenAI(cfg)
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	return &responsesClient{openai: c, url: joinURL(base, "responses")}
}

func (c *responsesClient) Name() string      { return c.openai.name }
func (c *responsesClient) Model() string     { return c.openai.model }
func (c *responsesClient) NativeTools() bool { return c.openai.native }

func (c *responsesClient) Stream(ctx context.Context, req Request) (Stream, error) {
	body, err := c.body(req)
	if err != nil {
		return nil, err
	}
	return c.openai.retry.stream(ctx, func(ctx context.Context, m *meter, emit func(Event) bool) error {
		return c.attempt(ctx, body, m, emit)
	}), nil
}

// responsesRequest is the body of a Responses request.
type responsesRequest struct {
	Model           string              `json:"model"`
	Instructions    string              `json:"instructions,omitempty"`
	Input           []responsesItem     `json:"input"`
	Stream          bool                `json:"stream"`
	Store           bool                `json:"store"`
	Include         []string            `json:"include,omitempty"`
	Tools           json.RawMessage     `json:"tools,omitempty"`
	MaxOutputTokens int                 `json:"max_output_tokens,omitempty"`
	Temperature     *float64            `json:"temperature,omitempty"`
	Reasoning       *responsesReasoning `json:"reasoning,omitempty"`
}

type responsesReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// responsesItem is one input item: a message (Role and Content), a
// function call or its output, or a reasoning item given back.
type responsesItem struct {
	Type    string             `json:"type,omitempty"`
	Role    string             `json:"role,omitempty"`
	Content []responsesContent `json:"content,omitempty"`
	// function_call and function_call_output
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
	// reasoning: the summary shown, and the reasoning itself, encrypted
	Summary          *[]responsesContent `json:"summary,omitempty"`
	EncryptedContent string              `json:"encrypted_content,omitempty"`
}

type responsesContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

func (c *responsesClient) body(req Request) ([]byte, error) {
	o := c.openai
	p := responsesRequest{
		Model:           o.model,
		Instructions:    req.System,
		Stream:          true,
		MaxOutputTokens: req.MaxTokens,
		Temperature:     req.Temperature,
	}
	// Every model served only here reasons; the encrypted reasoning comes
	// back so that the next request can carry it.
	p.Reasoning = &responsesReasoning{
		Effort:  (Reasoning{Effort: req.ReasoningEffort, Budget: req.ThinkingBudget}).or(o.reasoning).effort(),
		Summary: "auto",
	}
	p.Include = []string{"reasoning.encrypted_content"}
	if o.native && len(req.Tools) > 0 {
		raw, err := renderTools(toolspec.FormatResponses, req.Tools)
		if err != nil {
			return nil, err
		}
		p.Tools = raw
	}
	msgs := req.Messages
	if !o.native {
		msgs = ToolsAsText(msgs)
	}
	p.Input = responsesInput(msgs)
	return json.Marshal(p)
}

// responsesInput converts the history into input items, in the order the
// parts came: a model's reasoning before the calls it led to, each call
// as its own item, each result as a function_call_output. A result's
// images follow the turn's outputs in a user message, as on Chat
// Completions, since an output is text.
func responsesInput(msgs []Message) []responsesItem {
	var out []responsesItem
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			var text strings.Builder
			flush := func() {
				if text.Len() > 0 {
					out = append(out, responsesItem{Type: "message", Role: "assistant", Content: []responsesContent{{Type: "output_text", Text: text.String()}}})
					text.Reset()
				}
			}
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartText:
					text.WriteString(p.Text)
				case p.Kind == PartThinking && p.Signature != "" && !p.Redacted:
					flush()
					summary := []responsesContent{}
					if p.Text != "" {
						summary = append(summary, responsesContent{Type: "summary_text", Text: p.Text})
					}
					out = append(out, responsesItem{Type: "reasoning", Summary: &summary, EncryptedContent: p.Signature})
				case p.Kind == PartToolCall && p.Call != nil:
					flush()
					out = append(out, responsesItem{Type: "function_call", CallID: p.Call.ID, Name: p.Call.Name, Arguments: string(objectArgs(p.Call.Args))})
				}
			}
			flush()
			continue
		}
		var content, resultImages []responsesContent
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				output := p.Result.Content
				if p.Result.IsError {
					output = "Error: " + output
				}
				out = append(out, responsesItem{Type: "function_call_output", CallID: p.Result.CallID, Output: &output})
				if len(p.Result.Images) > 0 {
					resultImages = append(resultImages, responsesContent{Type: "input_text",
						Text: fmt.Sprintf("The images %s returned (call %s):", p.Result.Name, p.Result.CallID)})
					for _, im := range p.Result.Images {
						resultImages = append(resultImages, responsesImage(im))
					}
				}
			case p.Kind == PartText && p.Text != "":
				content = append(content, responsesContent{Type: "input_text", Text: p.Text})
			case p.Kind == PartImage && p.Image != nil:
				content = append(content, responsesImage(*p.Image))
			}
		}
		content = append(resultImages, content...)
		if len(content) > 0 {
			out = append(out, responsesItem{Type: "message", Role: "user", Content: content})
		}
	}
	return out
}

func responsesImage(im Image) responsesContent {
	return responsesContent{Type: "input_image", ImageURL: "data:" + im.MIMEType + ";base64," + im.Data}
}

// responsesEvent is one streamed event. The event's type is in its data
// as well as in the SSE event name; the data's is read.
type responsesEvent struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
	// ItemID names the output item a delta belongs to.
	ItemID string `json:"item_id"`
	// SummaryIndex numbers the parts of a reasoning summary.
	SummaryIndex int `json:"summary_index"`
	// Item is the output item of output_item.added and .done.
	Item *responsesOutputItem `json:"item"`
	// Response is the whole response of created, completed, incomplete
	// and failed.
	Response *struct {
		Status            string `json:"status"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *openaiErrorDetail `json:"error"`
		Usage *struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
	// Message and Code are an error event's.
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
}

type responsesOutputItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
}

func (c *responsesClient) attempt(ctx context.Context, body []byte, m *meter, emit func(Event) bool) error {
	resp, err := post(ctx, c.openai.http, m, c.url, c.openai.header, body, parseOpenAIError)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	send := func(ev Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	var (
		calls   int
		args    = map[string][]byte{} // a call's argument deltas, by item id
		names   = map[string]string{} // a call's name, by item id
		stopped StopReason
		usage   Usage
	)
	err = readEvents(resp, func(ev sse.Event) (bool, error) {
		var e responsesEvent
		if err := decodeEvent(ev.Data, &e); err != nil {
			return false, err
		}
		switch e.Type {
		case "response.output_text.delta":
			if e.Delta != "" {
				return false, send(Event{Kind: EventText, Text: e.Delta})
			}
		case "response.refusal.delta":
			if e.Delta != "" {
				return false, send(Event{Kind: EventText, Text: e.Delta})
			}
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			if e.Delta != "" {
				return false, send(Event{Kind: EventThinking, Text: e.Delta})
			}
		case "response.reasoning_summary_part.added":
			// The parts of one summary are its paragraphs.
			if e.SummaryIndex > 0 {
				return false, send(Event{Kind: EventThinking, Text: "\n\n"})
			}
		case "response.output_item.added":
			if e.Item != nil && e.Item.Type == "function_call" {
				names[e.Item.ID] = e.Item.Name
			}
		case "response.function_call_arguments.delta":
			var err error
			args[e.ItemID], err = m.args(args[e.ItemID], e.Delta, names[e.ItemID])
			return false, err
		case "response.output_item.done":
			it := e.Item
			if it == nil {
				return false, nil
			}
			switch it.Type {
			case "reasoning":
				if it.EncryptedContent != "" {
					return false, send(Event{Kind: EventThinking, Signature: it.EncryptedContent})
				}
			case "function_call":
				// The done item repeats the whole arguments; a stream that
				// sent no deltas has them only there, and they count
				// against the same bounds.
				a := args[it.ID]
				if len(a) == 0 && it.Arguments != "" {
					var err error
					if a, err = m.args(nil, it.Arguments, it.Name); err != nil {
						return false, err
					}
				}
				id := it.CallID
				if id == "" {
					id = fmt.Sprintf("call_%d", calls)
				}
				calls++
				return false, send(Event{Kind: EventToolCall, Call: &ToolCall{ID: id, Name: it.Name, Args: assembleArgs(a)}})
			}
		case "response.completed", "response.incomplete":
			if r := e.Response; r != nil && r.Usage != nil {
				cached := r.Usage.InputTokensDetails.CachedTokens
				usage = Usage{InputTokens: r.Usage.InputTokens - cached, OutputTokens: r.Usage.OutputTokens, CacheReadTokens: cached}
			}
			stopped = StopEndTurn
			switch {
			case e.Type == "response.incomplete" && e.Response != nil && e.Response.IncompleteDetails != nil &&
				e.Response.IncompleteDetails.Reason == "content_filter":
				stopped = StopRefusal
			case e.Type == "response.incomplete":
				stopped = StopMaxTokens
			case calls > 0:
				stopped = StopToolUse
			}
			return true, nil
		case "response.failed":
			msg := "the response failed"
			if r := e.Response; r != nil && r.Error != nil && r.Error.Message != "" {
				msg = r.Error.Message
			}
			return false, &eventError{message: msg}
		case "error":
			msg := e.Message
			if msg == "" {
				msg = "error in stream: " + bodyText(ev.Data)
			}
			return false, &eventError{message: msg}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return endReply(emit, usage, stopped)
}
