package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Formats Render produces, one per provider shape plus the XML text path.
const (
	FormatAnthropic = "anthropic"
	FormatOpenAI    = "openai"
	FormatGemini    = "gemini"
	FormatXML       = "xml"
)

// FormatFor returns the tool format a provider takes: the Anthropic shape
// for Anthropic and Bedrock-hosted Claude, the Gemini shape for Gemini,
// the OpenAI shape for OpenAI and every OpenAI-compatible endpoint.
func FormatFor(provider string) string {
	switch strings.ToLower(provider) {
	case "anthropic", "bedrock", "claude":
		return FormatAnthropic
	case "gemini", "google", "vertex":
		return FormatGemini
	}
	return FormatOpenAI
}

// Render renders tools in a format, their descriptions' placeholders
// filled from ctx. For the three native formats the result is the JSON
// value of the request's tools field: an array of Anthropic tools, of
// OpenAI function tools, or a single Gemini tool holding
// functionDeclarations (an empty array when there are no tools). For xml
// it is the tools' documentation for the system prompt, one block per
// tool; the prompt around it says how to call them. Output is
// deterministic: schemas keep their authors' key order.
func Render(format string, tools []Tool, ctx Context) ([]byte, error) {
	ex := expander(ctx)
	// A built-in tool renders to about 400 bytes in any format.
	b := make([]byte, 0, 512*len(tools))
	switch format {
	case FormatAnthropic, FormatOpenAI:
		b = append(b, '[')
	case FormatGemini:
		if len(tools) == 0 {
			return []byte("[]"), nil
		}
		b = append(b, `[{"functionDeclarations":[`...)
	case FormatXML:
	default:
		return nil, fmt.Errorf("tools: unknown tool format %q (want anthropic, openai, gemini or xml)", format)
	}
	for i, t := range tools {
		spec := t.Spec()
		tree, schema, err := schemasOf(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			if format == FormatXML {
				b = append(b, "\n\n"...)
			} else {
				b = append(b, ',')
			}
		}
		switch format {
		case FormatAnthropic:
			b = appendAnthropic(b, spec, tree, ex)
		case FormatOpenAI:
			b = appendOpenAI(b, spec, tree, ex)
		case FormatGemini:
			b = appendGeminiDecl(b, spec, tree, ex)
		case FormatXML:
			b = appendXMLDoc(b, spec, tree, schema, ex)
		}
	}
	switch format {
	case FormatAnthropic, FormatOpenAI:
		b = append(b, ']')
	case FormatGemini:
		b = append(b, "]}]"...)
	case FormatXML:
		if len(b) > 0 {
			b = append(b, '\n')
		}
	}
	return b, nil
}

// schemasOf returns a tool's parameter schema as an ordered tree and as
// parsed; tools made by NewTool have both at hand.
func schemasOf(t Tool) (*node, *schema, error) {
	if st, ok := t.(interface {
		schemas() (*node, *schema)
	}); ok {
		n, s := st.schemas()
		return n, s, nil
	}
	spec := t.Spec()
	params := spec.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	n, err := parseNode(params)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: schema of %s: %w", spec.Name, err)
	}
	s, err := parseSchema(n)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: schema of %s: %w", spec.Name, err)
	}
	return n, s, nil
}

// Expand fills the template placeholders {{CWD}}, {{OS}}, {{SHELL}},
// {{MODE}} and {{SKILLS}} (the skill names, comma-separated) from ctx.
// Unknown placeholders are left as they are.
func Expand(text string, ctx Context) string {
	return expander(ctx)(text)
}

func expander(ctx Context) func(string) string {
	var r *strings.Replacer
	return func(s string) string {
		if !strings.Contains(s, "{{") {
			return s
		}
		if r == nil {
			r = strings.NewReplacer(
				"{{CWD}}", ctx.CWD,
				"{{OS}}", ctx.OS,
				"{{SHELL}}", ctx.Shell,
				"{{MODE}}", ctx.Mode,
				"{{SKILLS}}", strings.Join(ctx.Skills, ", "),
			)
		}
		return r.Replace(s)
	}
}

func appendAnthropic(b []byte, s Spec, tree *node, ex func(string) string) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"description":`...)
	b = appendString(b, ex(s.Description))
	b = append(b, `,"input_schema":`...)
	b = appendObjectSchema(b, tree, ex, false)
	return append(b, '}')
}

func appendOpenAI(b []byte, s Spec, tree *node, ex func(string) string) []byte {
	b = append(b, `{"type":"function","function":{"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"description":`...)
	b = appendString(b, ex(s.Description))
	b = append(b, `,"strict":false,"parameters":`...)
	b = appendObjectSchema(b, tree, ex, true)
	return append(b, "}}"...)
}

// appendObjectSchema writes a tool's top-level schema in the shape the
// Anthropic and OpenAI APIs document: type, properties, required, and for
// OpenAI additionalProperties false. Definitions are kept so that $refs
// inside properties still resolve; other top-level keywords are dropped.
func appendObjectSchema(b []byte, tree *node, ex func(string) string, closed bool) []byte {
	b = append(b, `{"type":"object","properties":`...)
	if props := tree.get("properties"); props != nil && props.kind == nodeObject {
		b = appendNode(b, props, ex)
	} else {
		b = append(b, "{}"...)
	}
	if req := tree.get("required"); req != nil && req.kind == nodeArray && len(req.vals) > 0 {
		b = append(b, `,"required":`...)
		b = appendNode(b, req, nil)
	}
	if closed {
		b = append(b, `,"additionalProperties":false`...)
	}
	for _, k := range []string{"$defs", "definitions"} {
		if d := tree.get(k); d != nil {
			b = append(b, ',')
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, d, ex)
		}
	}
	return append(b, '}')
}
