package mcpbridge

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
)

// The shapes of MCP this client sends and reads: only the fields it
// uses. What a server sends beyond them is ignored.

// MCP methods and notifications the client sends or handles.
const (
	methodInitialize    = "initialize"
	methodPing          = "ping"
	methodToolsList     = "tools/list"
	methodToolsCall     = "tools/call"
	methodResourcesList = "resources/list"
	methodResourcesRead = "resources/read"

	notifyInitialized         = "notifications/initialized"
	notifyCancelled           = "notifications/cancelled"
	notifyToolListChanged     = "notifications/tools/list_changed"
	notifyResourceListChanged = "notifications/resources/list_changed"
)

// protocolVersion is what the client asks for in initialize: the newest
// version of the handshake it speaks. A server may answer with another
// one it prefers; acceptedVersions are those the client then goes on
// with, newest first. Newer versions replace the handshake itself, and a
// server that speaks them answers initialize with one of these.
const protocolVersion = "2025-11-25"

var acceptedVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// accepted reports whether the client goes on with a server's version.
func accepted(v string) bool { return slices.Contains(acceptedVersions, v) }

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities is empty: cline-ls answers no roots, sampling or
	// elicitation requests.
	Capabilities struct{}       `json:"capabilities"`
	ClientInfo   implementation `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    *serverCapabilities `json:"capabilities"`
	ServerInfo      *implementation     `json:"serverInfo"`
}

// serverCapabilities says which lists a server offers; a capability is
// there when its member is, whatever it holds.
type serverCapabilities struct {
	Tools     json.RawMessage `json:"tools"`
	Resources json.RawMessage `json:"resources"`
}

// offers reports whether a capability member is present and not null.
func offers(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

type cursorParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type mcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		Title string `json:"title"`
	} `json:"annotations"`
}

type listToolsResult struct {
	Tools      []mcpTool `json:"tools"`
	NextCursor string    `json:"nextCursor"`
}

type mcpResource struct {
	URI string `json:"uri"`
}

type listResourcesResult struct {
	Resources  []mcpResource `json:"resources"`
	NextCursor string        `json:"nextCursor"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
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

type readResourceParams struct {
	URI string `json:"uri"`
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

type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}

// base64Len is how many bytes base64 text decodes to, padded or not,
// without decoding it.
func base64Len(s string) int {
	return base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(s, "=")))
}
