package provider

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ToolsAsText rewrites a history for a model without native tool calling
// (the XML path): each tool call becomes assistant text in the XML form
// the system prompt teaches and package prompt parses,
//
//	<tool_name>
//	<param>value</param>
//	</tool_name>
//
// with string values raw and other values as JSON, and each tool result
// becomes user text "[tool_name] Result:" (or "Error:") followed by the
// content. Providers whose NativeTools is false apply it to every request
// themselves, so sessions keep one history shape (prose as text parts,
// calls as tool call parts) whichever path a model takes, and a session
// can switch models mid-conversation.
func ToolsAsText(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		role := m.Role
		if role == RoleTool {
			role = RoleUser
		}
		// A result turn and the user's next words become one user turn,
		// as a model expects turns to alternate.
		var conv Message
		if n := len(out); n > 0 && out[n-1].Role == role {
			conv = out[n-1]
			out = out[:n-1]
		} else {
			conv = Message{Role: role}
		}
		for _, p := range m.Parts {
			switch p.Kind {
			case PartToolCall:
				if p.Call != nil {
					conv.Parts = appendText(conv.Parts, CallXML(*p.Call))
				}
			case PartToolResult:
				if p.Result != nil {
					conv.Parts = appendText(conv.Parts, resultText(*p.Result))
					for _, im := range p.Result.Images {
						conv.Parts = append(conv.Parts, ImagePart(im.MIMEType, im.Data))
					}
				}
			case PartText:
				conv.Parts = appendText(conv.Parts, p.Text)
			default:
				conv.Parts = append(conv.Parts, p)
			}
		}
		out = append(out, conv)
	}
	return out
}

// appendText adds text as its own paragraph, joining it to a preceding
// text part so the model sees one block of prose per message.
func appendText(parts []Part, text string) []Part {
	if text == "" {
		return parts
	}
	if n := len(parts); n > 0 && parts[n-1].Kind == PartText {
		sep := "\n\n"
		if parts[n-1].Text == "" || strings.HasSuffix(parts[n-1].Text, "\n\n") {
			sep = ""
		} else if strings.HasSuffix(parts[n-1].Text, "\n") {
			sep = "\n"
		}
		parts[n-1].Text += sep + text
		return parts
	}
	return append(parts, TextPart(text))
}

func resultText(r ToolResult) string {
	label := "Result"
	if r.IsError {
		label = "Error"
	}
	return "[" + r.Name + "] " + label + ":\n" + r.Content
}

// CallXML writes a tool call in the XML form of the text path. Arguments
// keep the order the model wrote them in.
func CallXML(c ToolCall) string {
	var b strings.Builder
	b.WriteString("<" + c.Name + ">\n")
	for _, kv := range objectMembers(c.Args) {
		b.WriteString("<" + kv.key + ">")
		var s string
		if json.Unmarshal(kv.value, &s) == nil {
			b.WriteString(s)
		} else {
			var compact bytes.Buffer
			if json.Compact(&compact, kv.value) == nil {
				b.Write(compact.Bytes())
			} else {
				b.Write(kv.value)
			}
		}
		b.WriteString("</" + kv.key + ">\n")
	}
	b.WriteString("</" + c.Name + ">")
	return b.String()
}

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists a JSON object's members in document order; anything
// but an object yields none.
func objectMembers(raw json.RawMessage) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ms
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ms
		}
		ms = append(ms, member{key: key, value: v})
	}
	return ms
}
