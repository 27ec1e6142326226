package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cline-ls/cline-ls/internal/sse"
	"github.com/cline-ls/cline-ls/toolspec"
)

// geminiIDPrefix marks call IDs we made up because Gemini sent none; they
// are not sent back, since the API never issued them.
const geminiIDPrefix = "gemini_call_"

// geminiClient speaks the Gemini API's streamGenerateContent (SSE).
type geminiClient struct {
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

func newGemini(cfg Config) (*geminiClient, error) {
	base := cfg.BaseURL
	if base == "" {
		base = "https://generativelanguage.googleapis.com/"
	}
	// A tuned model is named "tunedModels/x"; a bare name is a base model.
	model := cfg.Model
	if !strings.Contains(model, "/") {
		model = "models/" + model
	}
	// The key goes in a header, never in the URL, where proxies and error
	// messages would show it. Nothing is read from GOOGLE_* or GEMINI_*
	// variables.
	header := cfg.header()
	header.Set("X-Goog-Api-Key", cfg.APIKey)
	return &geminiClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		url:    joinURL(base, "v1beta/"+model+":streamGenerateContent?alt=sse"),
		header: header,
		http:   httpClient(cfg.HTTPClient),
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.Limits, cfg.APIKey, cfg.Logger),

		reasoning: cfg.Reasoning,
	}, nil
}

func (c *geminiClient) Name() string      { return c.name }
func (c *geminiClient) Model() string     { return c.model }
func (c *geminiClient) NativeTools() bool { return c.native }

// geminiErrorBody is the API's error shape, in an error answer and in an
// error inside the stream.
type geminiErrorBody struct {
	Error *struct {
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

func (b geminiErrorBody) message() string {
	if b.Error == nil || b.Error.Message == "" {
		return ""
	}
	if b.Error.Status != "" {
		return b.Error.Status + ": " + b.Error.Message
	}
	return b.Error.Message
}

// parseGeminiError reads an error answer. A prompt over the context window
// is a 400 saying the input "exceeds the maximum number of tokens allowed
// (N)". Some proxies wrap the error in an array.
func parseGeminiError(status int, body []byte) apiError {
	var b geminiErrorBody
	if json.Unmarshal(body, &b) != nil {
		var bs []geminiErrorBody
		if json.Unmarshal(body, &bs) != nil || len(bs) == 0 {
			return apiError{}
		}
		b = bs[0]
	}
	a := apiError{message: b.message()}
	if status == http.StatusBadRequest && b.Error != nil &&
		strings.Contains(strings.ToLower(b.Error.Message), "exceeds the maximum number of tokens") {
		a.contextLength = true
		a.contextWindow = numberAfter(b.Error.Message, "allowed (")
	}
	return a
}

func (c *geminiClient) Stream(ctx context.Context, req Request) (Stream, error) {
	body, err := c.body(req)
	if err != nil {
		return nil, err
	}
	return c.retry.stream(ctx, func(ctx context.Context, m *meter, emit func(Event) bool) error {
		return c.attempt(ctx, body, m, emit)
	}), nil
}

// geminiRequest is the body of a streamGenerateContent request.
type geminiRequest struct {
	Contents          []geminiContent  `json:"contents"`
	SystemInstruction *geminiContent   `json:"systemInstruction,omitempty"`
	GenerationConfig  *geminiGenConfig `json:"generationConfig,omitempty"`
	Tools             json.RawMessage  `json:"tools,omitempty"`
}

type geminiGenConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	ThinkingConfig  *geminiThinking `json:"thinkingConfig,omitempty"`
}

type geminiThinking struct {
	IncludeThoughts bool `json:"includeThoughts"`
	ThinkingBudget  int  `json:"thinkingBudget"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is one part, sent and received; which fields are set says
// what it is.
type geminiPart struct {
	Text             string                  `json:"text,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
	InlineData       *geminiBlob             `json:"inlineData,omitempty"`
}

type geminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiFunctionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

type geminiBlob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

func (c *geminiClient) body(req Request) ([]byte, error) {
	var p geminiRequest
	if req.System != "" {
		p.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: req.System}}}
	}
	var g geminiGenConfig
	if req.MaxTokens > 0 {
		g.MaxOutputTokens = req.MaxTokens
	}
	g.Temperature = req.Temperature
	if budget := (Reasoning{Effort: req.ReasoningEffort, Budget: req.ThinkingBudget}).or(c.reasoning).budget(); budget > 0 {
		g.ThinkingConfig = &geminiThinking{IncludeThoughts: true, ThinkingBudget: budget}
	}
	if g != (geminiGenConfig{}) {
		p.GenerationConfig = &g
	}
	if c.native && len(req.Tools) > 0 {
		raw, err := renderTools(toolspec.FormatGemini, req.Tools)
		if err != nil {
			return nil, err
		}
		p.Tools = raw
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	p.Contents = geminiContents(msgs)
	return json.Marshal(p)
}

// geminiContents converts the history: roles user and model, tool results
// as functionResponse parts of user turns (first in them), consecutive
// turns of one role merged. Thinking is sent back only when signed, and
// signatures ride on the parts they came with.
func geminiContents(msgs []Message) []geminiContent {
	out := []geminiContent{}
	add := func(role string, parts []geminiPart) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, geminiContent{Role: role, Parts: parts})
	}
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			var parts []geminiPart
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartThinking && p.Signature != "" && !p.Redacted:
					parts = append(parts, geminiPart{Text: p.Text, Thought: true, ThoughtSignature: validSignature(p.Signature)})
				case p.Kind == PartText && p.Text != "":
					parts = append(parts, geminiPart{Text: p.Text})
				case p.Kind == PartToolCall && p.Call != nil:
					parts = append(parts, geminiPart{
						FunctionCall:     &geminiFunctionCall{ID: sentID(p.Call.ID), Name: p.Call.Name, Args: objectArgs(p.Call.Args)},
						ThoughtSignature: validSignature(p.Call.Signature),
					})
				}
			}
			add("model", parts)
			continue
		}
		var results, images, rest []geminiPart
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				key := "output"
				if p.Result.IsError {
					key = "error"
				}
				results = append(results, geminiPart{FunctionResponse: &geminiFunctionResponse{
					ID:       sentID(p.Result.CallID),
					Name:     p.Result.Name,
					Response: map[string]string{key: p.Result.Content},
				}})
				// The images results returned follow the turn's
				// functionResponse parts as inlineData parts.
				for _, im := range p.Result.Images {
					images = append(images, geminiPart{InlineData: &geminiBlob{MIMEType: im.MIMEType, Data: im.Data}})
				}
			case p.Kind == PartText && p.Text != "":
				rest = append(rest, geminiPart{Text: p.Text})
			case p.Kind == PartImage && p.Image != nil:
				rest = append(rest, geminiPart{InlineData: &geminiBlob{MIMEType: p.Image.MIMEType, Data: p.Image.Data}})
			}
		}
		add("user", append(append(results, images...), rest...))
	}
	return out
}

func sentID(id string) string {
	if strings.HasPrefix(id, geminiIDPrefix) {
		return ""
	}
	return id
}

// validSignature returns a thought signature to send back: the API's
// bytes in base64, as they came. One that is not base64 cannot be the
// API's and is not sent.
func validSignature(s string) string {
	if s == "" {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return ""
	}
	return s
}

// geminiStreamChunk is one streamed response.
type geminiStreamChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason  string `json:"finishReason"`
		FinishMessage string `json:"finishMessage"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	geminiErrorBody
}

func (c *geminiClient) attempt(ctx context.Context, body []byte, m *meter, emit func(Event) bool) error {
	resp, err := post(ctx, c.http, m, c.url, c.header, body, parseGeminiError)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var (
		usage   Usage
		finish  string
		note    string // the finish message
		calls   int
		chunks  int
		emitted bool
	)
	send := func(ev Event) error {
		emitted = true
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	err = readEvents(resp, func(ev sse.Event) (bool, error) {
		var chunk geminiStreamChunk
		if err := decodeEvent(ev.Data, &chunk); err != nil {
			return false, err
		}
		chunks++
		if m := chunk.message(); m != "" {
			return false, &eventError{message: m}
		}
		if u := chunk.UsageMetadata; u != nil {
			usage = Usage{
				InputTokens:     u.PromptTokenCount - u.CachedContentTokenCount,
				OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
				CacheReadTokens: u.CachedContentTokenCount,
			}
		}
		if pf := chunk.PromptFeedback; pf != nil && pf.BlockReason != "" {
			// The prompt itself was blocked: no candidates will come.
			finish = "SAFETY"
		}
		if len(chunk.Candidates) == 0 {
			return false, nil
		}
		cand := chunk.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				var err error
				switch {
				case p.FunctionCall != nil:
					fc := p.FunctionCall
					id := fc.ID
					if id == "" {
						id = fmt.Sprintf("%s%d", geminiIDPrefix, calls)
					}
					calls++
					err = send(Event{Kind: EventToolCall, Call: &ToolCall{ID: id, Name: fc.Name, Args: objectArgs(fc.Args), Signature: p.ThoughtSignature}})
				case p.Thought:
					if p.Text != "" || p.ThoughtSignature != "" {
						err = send(Event{Kind: EventThinking, Text: p.Text, Signature: p.ThoughtSignature})
					}
				case p.Text != "":
					err = send(Event{Kind: EventText, Text: p.Text})
				}
				if err != nil {
					return false, err
				}
			}
		}
		if cand.FinishReason != "" {
			finish = cand.FinishReason
			note = cand.FinishMessage
		}
		return false, nil
	})
	// The stream has no end marker: the body ends after the chunk that
	// carries the finish reason.
	if err != nil && err != errIncomplete {
		return err
	}
	if err := geminiOddEnd(finish, note, chunks, emitted); err != nil {
		return err
	}
	if finish == "" {
		return errIncomplete
	}
	return endReply(emit, usage, geminiStop(finish, calls > 0))
}

// geminiOddEnd is the error of a reply Gemini ended without an answer:
// a function call it could not write (MALFORMED_FUNCTION_CALL), or a
// finished stream with no candidate content at all. Both happen now and
// then and a second request usually succeeds; neither may end a turn
// silently.
func geminiOddEnd(finish, note string, chunks int, emitted bool) error {
	switch {
	case finish == "MALFORMED_FUNCTION_CALL":
		msg := "the model wrote a function call that could not be read (MALFORMED_FUNCTION_CALL)"
		if note = strings.Join(strings.Fields(note), " "); note != "" {
			msg += ": " + cutText(note, 200)
		}
		return &onceError{message: msg}
	case emitted || chunks == 0:
		return nil
	case finish == "":
		return &onceError{message: "the model sent an empty reply (no candidates)"}
	case geminiStop(finish, false) == StopEndTurn:
		return &onceError{message: "the model sent an empty reply (no content, finish reason " + finish + ")"}
	}
	return nil
}

func geminiStop(r string, calls bool) StopReason {
	switch r {
	case "MAX_TOKENS":
		return StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT":
		return StopRefusal
	}
	if calls {
		return StopToolUse
	}
	return StopEndTurn
}
