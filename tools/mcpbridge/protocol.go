package mcpbridge

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
)

// The shapes a tool's or a resource's answer is shown from: only the
// fields it uses. The SDK's results are read into them (reshape), so
// that a content kind newer than both is still shown, as its JSON.

// protocolVersion is what the client asks for in initialize: the newest
// version of that handshake. A server may answer with another one it
// prefers; the SDK goes on with those it speaks.
const protocolVersion = "2025-11-25"

// offers reports whether a JSON member is present and not null.
func offers(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// callToolResult is a tool's answer. StructuredContent is kept as sent.
type callToolResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// content is one content block of any kind, its members side by side;
// Type says which apply. raw is the block as sent, shown for kinds newer
// than this code.
type content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Data        string            `json:"data"` // base64, image and audio
	MIMEType    string            `json:"mimeType"`
	URI         string            `json:"uri"` // resource_link
	Name        string            `json:"name"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Resource    *resourceContents `json:"resource"` // resource
	raw         json.RawMessage
}

func (c *content) UnmarshalJSON(b []byte) error {
	type plain content
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = content(p)
	c.raw = slices.Clone(b)
	return nil
}

type readResourceResult struct {
	Contents []*resourceContents `json:"contents"`
}

// resourceContents is a resource's text or binary contents (Blob, in
// base64).
type resourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     string `json:"blob"`
}

// base64Len is how many bytes base64 text decodes to, padded or not,
// without decoding it.
func base64Len(s string) int {
	return base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(s, "=")))
}
