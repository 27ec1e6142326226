package mcpbridge

//lint:file-ignore SA1019 sampling is deprecated only from protocol version 2026-07-28; the client speaks the initialize handshake (2025-11-25 and older), where servers still ask for it.

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sampler lends a server the model (sampling/createMessage). It asks the
// user first and may refuse; its errors go back to the server as they
// are, so they say why.
type Sampler interface {
	Sample(ctx context.Context, server string, req SampleRequest) (SampleResult, error)
}

// SampleRequest is what a server asks the model: text messages only (an
// image or audio part is named in the text, not sent), a system prompt of
// its own, and a bound on the reply.
type SampleRequest struct {
	System    string
	Messages  []SampleMessage
	MaxTokens int
}

// SampleMessage is one message of a sampling request; Role is "user" or
// "assistant".
type SampleMessage struct {
	Role string
	Text string
}

// SampleResult is the model's reply. StopReason is the protocol's:
// "endTurn" or "maxTokens".
type SampleResult struct {
	Text       string
	Model      string
	StopReason string
}

// maxSampleTokens bounds a server's sampling reply whatever it asks.
const maxSampleTokens = 8192

// sample answers sampling/createMessage through s.
func sample(server string, s Sampler, logger *slog.Logger) func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		p := req.Params
		sr := SampleRequest{System: p.SystemPrompt, MaxTokens: int(min(max(p.MaxTokens, 1), maxSampleTokens))}
		for _, m := range p.Messages {
			if m == nil {
				continue
			}
			sr.Messages = append(sr.Messages, SampleMessage{Role: string(m.Role), Text: sampleText(m.Content)})
		}
		if len(sr.Messages) == 0 {
			return nil, fmt.Errorf("sampling/createMessage: no messages")
		}
		res, err := s.Sample(ctx, server, sr)
		logger.Info("mcp: the server asked for the model", "messages", len(sr.Messages), "maxTokens", sr.MaxTokens, "err", err)
		if err != nil {
			return nil, err
		}
		return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: res.Text}, Model: res.Model, StopReason: res.StopReason}, nil
	}
}

// sampleText is a sampling message's content as text.
func sampleText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[an image, %s, not passed on]", c.MIMEType)
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio, %s, not passed on]", c.MIMEType)
	case nil:
		return ""
	default:
		return "[content of another kind, not passed on]"
	}
}
