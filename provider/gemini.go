package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/cline-ls/cline-ls/tools"
)

// geminiIDPrefix marks call IDs we made up because Gemini sent none; they
// are not sent back, since the API never issued them.
const geminiIDPrefix = "gemini_call_"

// geminiClient speaks the Gemini API's streamGenerateContent (SSE).
type geminiClient struct {
	name   string
	model  string
	native bool
	client *genai.Client
	retry  *retrier
}

func newGemini(cfg Config) (*geminiClient, error) {
	base := cfg.BaseURL
	if base == "" {
		base = "https://generativelanguage.googleapis.com/"
	}
	// An explicit backend, key and base URL keep the SDK from consulting
	// GOOGLE_* and GEMINI_* variables.
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  instrument(cfg.HTTPClient),
		HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	if err != nil {
		// The SDK's errors print the whole client config, key included.
		return nil, fmt.Errorf("provider: gemini: %s", newScrubber(cfg.APIKey).scrub(err.Error()))
	}
	return &geminiClient{
		name:   cfg.Name,
		model:  cfg.Model,
		native: cfg.native(),
		client: client,
		retry:  newRetrier(cfg.Name, cfg.Retry, cfg.APIKey, cfg.Logger, describeGemini),
	}, nil
}

func (c *geminiClient) Name() string      { return c.name }
func (c *geminiClient) Model() string     { return c.model }
func (c *geminiClient) NativeTools() bool { return c.native }

func describeGemini(err error) string {
	var ae genai.APIError
	if errors.As(err, &ae) && ae.Message != "" {
		if ae.Status != "" {
			return ae.Status + ": " + ae.Message
		}
		return ae.Message
	}
	return ""
}

func (c *geminiClient) Stream(ctx context.Context, req Request) (Stream, error) {
	contents, config, err := c.params(req)
	if err != nil {
		return nil, err
	}
	return c.retry.stream(ctx, func(ctx context.Context, emit func(Event) bool) error {
		return c.attempt(ctx, contents, config, emit)
	}), nil
}

func (c *geminiClient) params(req Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	// Automatic continuation would resume broken streams inside the SDK,
	// a second retry policy beside ours.
	no := false
	config := &genai.GenerateContentConfig{AutomaticContinuation: &no}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxTokens > 0 {
		config.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		config.Temperature = &t
	}
	if req.ThinkingBudget > 0 {
		b := int32(req.ThinkingBudget)
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
	}
	if c.native && len(req.Tools) > 0 {
		raw, err := renderTools(tools.FormatGemini, req.Tools)
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(raw, &config.Tools); err != nil {
			return nil, nil, fmt.Errorf("provider: reading rendered tools: %w", err)
		}
	}
	msgs := req.Messages
	if !c.native {
		msgs = ToolsAsText(msgs)
	}
	return geminiContents(msgs), config, nil
}

// geminiContents converts the history: roles user and model, tool results
// as functionResponse parts of user turns (first in them), consecutive
// turns of one role merged. Thinking is sent back only when signed, and
// signatures ride on the parts they came with.
func geminiContents(msgs []Message) []*genai.Content {
	var out []*genai.Content
	add := func(role string, parts []*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range msgs {
		if m.Role == RoleAssistant {
			var parts []*genai.Part
			for _, p := range m.Parts {
				switch {
				case p.Kind == PartThinking && p.Signature != "" && !p.Redacted:
					parts = append(parts, &genai.Part{Text: p.Text, Thought: true, ThoughtSignature: decodeSignature(p.Signature)})
				case p.Kind == PartText && p.Text != "":
					parts = append(parts, &genai.Part{Text: p.Text})
				case p.Kind == PartToolCall && p.Call != nil:
					var args map[string]any
					_ = json.Unmarshal(objectArgs(p.Call.Args), &args) // always an object
					parts = append(parts, &genai.Part{
						FunctionCall:     &genai.FunctionCall{ID: sentID(p.Call.ID), Name: p.Call.Name, Args: args},
						ThoughtSignature: decodeSignature(p.Call.Signature),
					})
				}
			}
			add(genai.RoleModel, parts)
			continue
		}
		var results, rest []*genai.Part
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolResult && p.Result != nil:
				key := "output"
				if p.Result.IsError {
					key = "error"
				}
				results = append(results, &genai.Part{FunctionResponse: &genai.FunctionResponse{
					ID:       sentID(p.Result.CallID),
					Name:     p.Result.Name,
					Response: map[string]any{key: p.Result.Content},
				}})
			case p.Kind == PartText && p.Text != "":
				rest = append(rest, &genai.Part{Text: p.Text})
			}
		}
		add(genai.RoleUser, append(results, rest...))
	}
	return out
}

func sentID(id string) string {
	if strings.HasPrefix(id, geminiIDPrefix) {
		return ""
	}
	return id
}

func decodeSignature(s string) []byte {
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

func (c *geminiClient) attempt(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig, emit func(Event) bool) error {
	var (
		usage  Usage
		finish genai.FinishReason
		calls  int
	)
	send := func(ev Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	}
	for resp, err := range c.client.Models.GenerateContentStream(ctx, c.model, contents, config) {
		if err != nil {
			return err
		}
		if u := resp.UsageMetadata; u != nil {
			usage = Usage{
				InputTokens:     int(u.PromptTokenCount - u.CachedContentTokenCount),
				OutputTokens:    int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
				CacheReadTokens: int(u.CachedContentTokenCount),
			}
		}
		if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			// The prompt itself was blocked: no candidates will come.
			finish = genai.FinishReasonSafety
		}
		if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
			continue
		}
		cand := resp.Candidates[0]
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
					args, _ := json.Marshal(fc.Args) // a map of decoded JSON
					if fc.Args == nil {
						args = []byte("{}")
					}
					calls++
					err = send(Event{Kind: EventToolCall, Call: &ToolCall{ID: id, Name: fc.Name, Args: args, Signature: encodeSignature(p.ThoughtSignature)}})
				case p.Thought:
					if p.Text != "" || len(p.ThoughtSignature) > 0 {
						err = send(Event{Kind: EventThinking, Text: p.Text, Signature: encodeSignature(p.ThoughtSignature)})
					}
				case p.Text != "":
					err = send(Event{Kind: EventText, Text: p.Text})
				}
				if err != nil {
					return err
				}
			}
		}
		if cand.FinishReason != "" {
			finish = cand.FinishReason
		}
	}
	if finish == "" {
		return errIncomplete
	}
	return endReply(emit, usage, geminiStop(finish, calls > 0))
}

func encodeSignature(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

func geminiStop(r genai.FinishReason, calls bool) StopReason {
	switch r {
	case genai.FinishReasonMaxTokens:
		return StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent:
		return StopRefusal
	}
	if calls {
		return StopToolUse
	}
	return StopEndTurn
}
