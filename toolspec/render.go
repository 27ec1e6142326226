package toolspec

import (
	"fmt"
)

// Formats Render produces, one per model API's tool shape, plus the name
// of the text path, whose documentation the tools package writes.
const (
	FormatAnthropic = "anthropic"
	FormatOpenAI    = "openai"
	// FormatResponses is the tools field of OpenAI's Responses API:
	// function tools with their members at the top, not under function.
	FormatResponses = "openai-responses"
	FormatGemini    = "gemini"
	FormatXML       = "xml"
)

// Family is a model family: which prompt and which tool variants a
// model gets. The provider's model table decides a model's family; the
// tools register variants for it.
type Family string

// Model families (docs/DESIGN.md §2).
const (
	FamilyGeneric Family = "generic"
	FamilyNextGen Family = "next-gen"
	FamilyXS      Family = "xs"
)

// Def is one tool as a model API is told of it.
type Def struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments, an object schema.
	Schema *Node
}

// Render renders defs in one of the native formats: the JSON value of
// the request's tools field, an array of Anthropic tools, of OpenAI
// function tools, or a single Gemini tool holding functionDeclarations
// (an empty array when there are no tools). When expand is non-nil it
// fills template placeholders in the descriptions, the parameters' too.
// Output is deterministic: schemas keep their authors' key order.
func Render(format string, defs []Def, expand func(string) string) ([]byte, error) {
	ex := expand
	if ex == nil {
		ex = func(s string) string { return s }
	}
	// A built-in tool renders to about 400 bytes in any format.
	b := make([]byte, 0, 512*len(defs))
	switch format {
	case FormatAnthropic, FormatOpenAI, FormatResponses:
		b = append(b, '[')
	case FormatGemini:
		if len(defs) == 0 {
			return []byte("[]"), nil
		}
		b = append(b, `[{"functionDeclarations":[`...)
	default:
		return nil, fmt.Errorf("toolspec: unknown tool format %q (want anthropic, openai, openai-responses or gemini)", format)
	}
	for i, d := range defs {
		if i > 0 {
			b = append(b, ',')
		}
		switch format {
		case FormatAnthropic:
			b = appendAnthropic(b, d, ex)
		case FormatOpenAI:
			b = appendOpenAI(b, d, ex)
		case FormatResponses:
			b = appendResponses(b, d, ex)
		case FormatGemini:
			b = appendGeminiDecl(b, d, ex)
		}
	}
	if format == FormatGemini {
		return append(b, "]}]"...), nil
	}
	return append(b, ']'), nil
}

func appendAnthropic(b []byte, d Def, ex func(string) string) []byte {
	b = append(b, `{"name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"description":`...)
	b = AppendString(b, ex(d.Description))
	b = append(b, `,"input_schema":`...)
	b = appendObjectSchema(b, d.Schema, ex, false)
	return append(b, '}')
}

func appendOpenAI(b []byte, d Def, ex func(string) string) []byte {
	b = append(b, `{"type":"function","function":{"name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"description":`...)
	b = AppendString(b, ex(d.Description))
	b = append(b, `,"strict":false,"parameters":`...)
	b = appendObjectSchema(b, d.Schema, ex, true)
	return append(b, "}}"...)
}

func appendResponses(b []byte, d Def, ex func(string) string) []byte {
	b = append(b, `{"type":"function","name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"description":`...)
	b = AppendString(b, ex(d.Description))
	b = append(b, `,"strict":false,"parameters":`...)
	b = appendObjectSchema(b, d.Schema, ex, true)
	return append(b, '}')
}

// appendObjectSchema writes a tool's top-level schema in the shape the
// Anthropic and OpenAI APIs document: type, properties, required, and for
// OpenAI additionalProperties false. Definitions are kept so that $refs
// inside properties still resolve; other top-level keywords are dropped.
func appendObjectSchema(b []byte, tree *Node, ex func(string) string, closed bool) []byte {
	b = append(b, `{"type":"object","properties":`...)
	if props := tree.Get("properties"); props != nil && props.Kind == Object {
		b = AppendJSON(b, props, ex)
	} else {
		b = append(b, "{}"...)
	}
	if req := tree.Get("required"); req != nil && req.Kind == Array && len(req.Vals) > 0 {
		b = append(b, `,"required":`...)
		b = AppendJSON(b, req, nil)
	}
	if closed {
		b = append(b, `,"additionalProperties":false`...)
	}
	for _, k := range []string{"$defs", "definitions"} {
		if d := tree.Get(k); d != nil {
			b = append(b, ',')
			b = AppendString(b, k)
			b = append(b, ':')
			b = AppendJSON(b, d, ex)
		}
	}
	return append(b, '}')
}
