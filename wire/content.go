package wire

import (
	"encoding/json"
	"fmt"
)

// ContentBlock is a piece of a message: one of TextBlock, ImageBlock,
// ResourceLinkBlock, ResourceBlock. The set is closed; each encodes with
// its "type".
type ContentBlock interface {
	json.Marshaler
	contentType() string
}

// TextBlock is text.
type TextBlock struct {
	Text string `json:"text"`
}

// ImageBlock is an image, base64-encoded.
type ImageBlock struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	URI      string `json:"uri,omitzero"`
}

// ResourceLinkBlock names a resource by its URI.
type ResourceLinkBlock struct {
	MimeType string `json:"mimeType,omitzero"`
	Name     string `json:"name"`
	Size     *int64 `json:"size,omitzero"`
	URI      string `json:"uri"`
}

// ResourceBlock is a resource with its contents.
type ResourceBlock struct {
	Resource EmbeddedResource `json:"resource"`
}

// EmbeddedResource is a resource's contents: Text, or Blob (base64).
type EmbeddedResource struct {
	Blob     string `json:"blob,omitzero"`
	MimeType string `json:"mimeType,omitzero"`
	Text     string `json:"text,omitzero"`
	URI      string `json:"uri"`
}

func (TextBlock) contentType() string         { return "text" }
func (ImageBlock) contentType() string        { return "image" }
func (ResourceLinkBlock) contentType() string { return "resource_link" }
func (ResourceBlock) contentType() string     { return "resource" }

// MarshalJSON encodes b with "type": "text".
func (b TextBlock) MarshalJSON() ([]byte, error) {
	type plain TextBlock
	return tagged("type", b.contentType(), plain(b))
}

// MarshalJSON encodes b with "type": "image".
func (b ImageBlock) MarshalJSON() ([]byte, error) {
	type plain ImageBlock
	return tagged("type", b.contentType(), plain(b))
}

// MarshalJSON encodes b with "type": "resource_link".
func (b ResourceLinkBlock) MarshalJSON() ([]byte, error) {
	type plain ResourceLinkBlock
	return tagged("type", b.contentType(), plain(b))
}

// MarshalJSON encodes b with "type": "resource".
func (b ResourceBlock) MarshalJSON() ([]byte, error) {
	type plain ResourceBlock
	return tagged("type", b.contentType(), plain(b))
}

// DecodeContentBlock decodes a content block by its "type".
func DecodeContentBlock(data []byte) (ContentBlock, error) {
	_, tag, err := tagOf(data, "type")
	if err != nil {
		return nil, fmt.Errorf("content block: %w", err)
	}
	switch tag {
	case "text":
		return decodeAs[TextBlock](data)
	case "image":
		return decodeAs[ImageBlock](data)
	case "resource_link":
		return decodeAs[ResourceLinkBlock](data)
	case "resource":
		return decodeAs[ResourceBlock](data)
	}
	return nil, fmt.Errorf("content block: unknown type %q", tag)
}

// ToolCallContent is what a tool call shows: a ContentItem, a DiffItem
// or a TerminalItem. The set is closed; each encodes with its "type".
type ToolCallContent interface {
	json.Marshaler
	toolContentType() string
}

// ContentItem is a content block shown for a tool call.
type ContentItem struct {
	Content ContentBlock `json:"content"`
}

// DiffItem is a file's change: OldText is nil for a file that did not
// exist. Path is absolute.
type DiffItem struct {
	NewText string  `json:"newText"`
	OldText *string `json:"oldText"`
	Path    string  `json:"path"`
}

// TerminalItem embeds a terminal the client made with terminal/create:
// the client shows it live in the tool call's card.
type TerminalItem struct {
	TerminalID string `json:"terminalId"`
}

func (ContentItem) toolContentType() string  { return "content" }
func (DiffItem) toolContentType() string     { return "diff" }
func (TerminalItem) toolContentType() string { return "terminal" }

// Text is a ContentItem of text.
func Text(t string) ContentItem { return ContentItem{Content: TextBlock{Text: t}} }

// Diff is the DiffItem of a change of path; existed says whether the file
// was there before (else oldText is null).
func Diff(path, oldText, newText string, existed bool) DiffItem {
	d := DiffItem{Path: path, NewText: newText}
	if existed {
		d.OldText = &oldText
	}
	return d
}

// MarshalJSON encodes c with "type": "content".
func (c ContentItem) MarshalJSON() ([]byte, error) {
	type plain ContentItem
	return tagged("type", c.toolContentType(), plain(c))
}

// UnmarshalJSON decodes c and its content block.
func (c *ContentItem) UnmarshalJSON(data []byte) error {
	var a struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	b, err := DecodeContentBlock(a.Content)
	if err != nil {
		return err
	}
	c.Content = b
	return nil
}

// MarshalJSON encodes d with "type": "diff".
func (d DiffItem) MarshalJSON() ([]byte, error) {
	type plain DiffItem
	return tagged("type", d.toolContentType(), plain(d))
}

// MarshalJSON encodes t with "type": "terminal".
func (t TerminalItem) MarshalJSON() ([]byte, error) {
	type plain TerminalItem
	return tagged("type", t.toolContentType(), plain(t))
}

// DecodeToolCallContent decodes a tool call's content item by its "type".
func DecodeToolCallContent(data []byte) (ToolCallContent, error) {
	_, tag, err := tagOf(data, "type")
	if err != nil {
		return nil, fmt.Errorf("tool call content: %w", err)
	}
	switch tag {
	case "content":
		return decodeAs[ContentItem](data)
	case "diff":
		return decodeAs[DiffItem](data)
	case "terminal":
		return decodeAs[TerminalItem](data)
	}
	return nil, fmt.Errorf("tool call content: unknown type %q", tag)
}

// decodeToolCallContents decodes a list of content items; nil stays nil.
func decodeToolCallContents(raw []json.RawMessage) ([]ToolCallContent, error) {
	if raw == nil {
		return nil, nil
	}
	out := make([]ToolCallContent, len(raw))
	for i, r := range raw {
		c, err := DecodeToolCallContent(r)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

func decodeAs[T any](data []byte) (T, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}
