package toolspec

import (
	"strings"
)

// appendGeminiDecl writes one FunctionDeclaration. A tool without
// parameters gets no parameters member: Gemini rejects an OBJECT schema
// with no properties there.
func appendGeminiDecl(b []byte, d Def, ex func(string) string) []byte {
	tree := d.Schema
	b = append(b, `{"name":`...)
	b = AppendString(b, d.Name)
	b = append(b, `,"description":`...)
	b = AppendString(b, ex(d.Description))
	if props := tree.Get("properties"); props != nil && len(props.Keys) > 0 {
		b = append(b, `,"parameters":`...)
		g := &geminiSchema{root: tree, ex: ex, refBudget: GeminiMaxRefs}
		b = g.append(b, tree, 0)
	}
	return append(b, '}')
}

// geminiSchema converts JSON Schema to Gemini's Schema object: upper-case
// types, nullable instead of a null type, local $refs inlined, anyOf kept
// (oneOf becomes anyOf), and the keywords the API rejects
// (additionalProperties, $schema, const, allOf...) dropped. Unlike
// Cline's converter, array items and nested object properties are kept.
type geminiSchema struct {
	root *Node
	ex   func(string) string
	// refBudget counts down the $refs still to inline in this schema.
	refBudget int
}

// GeminiMaxRefDepth and GeminiMaxRefs bound $ref inlining: a recursive
// schema cannot be inlined whole, and one whose anyOf refers to itself
// several times would grow exponentially with depth. Past either bound a
// reference is cut to a bare OBJECT.
const (
	GeminiMaxRefDepth = 8
	GeminiMaxRefs     = 64
)

// geminiFormats are the formats the Gemini API accepts, per type.
func geminiFormatOK(typ, format string) bool {
	switch typ {
	case "STRING":
		return format == "enum" || format == "date-time"
	case "INTEGER":
		return format == "int32" || format == "int64"
	case "NUMBER":
		return format == "float" || format == "double"
	}
	return false
}

func (g *geminiSchema) resolveRef(n *Node) *Node {
	ref := n.Get("$ref")
	if ref == nil || ref.Kind != String {
		return n
	}
	target, err := ResolvePointer(g.root, ref.Str)
	if err != nil {
		return &Node{Kind: Object}
	}
	// A description beside the $ref says more about this use than the
	// definition's own.
	if d := n.Get("description"); d != nil {
		merged := &Node{Kind: Object, Keys: append([]string(nil), target.Keys...), Vals: append([]*Node(nil), target.Vals...)}
		merged.Set("description", d)
		return merged
	}
	return target
}

// geminiType returns the upper-case type of a schema and whether null is
// allowed. A missing type is inferred from the other keywords.
func geminiType(n *Node) (typ string, nullable bool) {
	if t := n.Get("type"); t != nil {
		switch t.Kind {
		case String:
			typ = t.Str
		case Array:
			for _, v := range t.Vals {
				if v.Str == "null" {
					nullable = true
				} else if typ == "" {
					typ = v.Str
				}
			}
		}
	}
	if typ == "" {
		switch {
		case n.Get("properties") != nil:
			typ = "object"
		case n.Get("items") != nil:
			typ = "array"
		case n.Get("enum") != nil:
			typ = "string"
		case n.Get("anyOf") != nil || n.Get("oneOf") != nil:
			return "", nullable
		default:
			// Gemini wants a type; a value of any type is best sent as text.
			typ = "string"
		}
	}
	return strings.ToUpper(typ), nullable
}

func (g *geminiSchema) append(b []byte, n *Node, depth int) []byte {
	if n.Get("$ref") != nil {
		if depth >= GeminiMaxRefDepth || g.refBudget <= 0 {
			return append(b, `{"type":"OBJECT"}`...)
		}
		g.refBudget--
		n = g.resolveRef(n)
		depth++
	}
	if n.Kind != Object {
		// true/false schemas: anything, or (unusable) nothing.
		return append(b, `{"type":"STRING"}`...)
	}
	typ, nullable := geminiType(n)
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendString(b, k)
		b = append(b, ':')
	}
	if typ != "" {
		key("type")
		b = AppendString(b, typ)
		if nullable {
			key("nullable")
			b = append(b, "true"...)
		}
	}
	// Gemini takes enum only on strings; other enums move into the
	// description so the model still learns the allowed values.
	enum := n.Get("enum")
	var enumNote string
	if enum != nil && typ != "STRING" {
		vals := make([]string, len(enum.Vals))
		for i, v := range enum.Vals {
			vals[i] = string(AppendJSON(nil, v, nil))
		}
		enumNote = "one of: " + strings.Join(vals, ", ")
		enum = nil
	}
	wroteDesc := false
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch k {
		case "description", "title", "pattern":
			if v.Kind != String {
				continue
			}
			text := v.Str
			if k == "description" {
				text = g.ex(text)
				if enumNote != "" {
					text += " (" + enumNote + ")"
				}
				wroteDesc = true
			}
			key(k)
			b = AppendString(b, text)
		case "format":
			if v.Kind == String && geminiFormatOK(typ, v.Str) {
				key(k)
				b = AppendString(b, v.Str)
			}
		case "enum":
			if enum != nil {
				key(k)
				b = append(b, '[')
				for j, e := range enum.Vals {
					if j > 0 {
						b = append(b, ',')
					}
					if e.Kind == String {
						b = AppendString(b, e.Str)
					} else {
						b = AppendString(b, string(AppendJSON(nil, e, nil)))
					}
				}
				b = append(b, ']')
			}
		case "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
			"minProperties", "maxProperties":
			if v.Kind == Number {
				key(k)
				b = append(b, v.Str...)
			}
		case "required":
			if v.Kind == Array && len(v.Vals) > 0 {
				key(k)
				b = AppendJSON(b, v, nil)
			}
		case "items":
			if v.Kind == Object {
				key(k)
				b = g.append(b, v, depth)
			}
		case "properties":
			if v.Kind != Object {
				continue
			}
			key(k)
			b = append(b, '{')
			for j, pk := range v.Keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = AppendString(b, pk)
				b = append(b, ':')
				b = g.append(b, v.Vals[j], depth)
			}
			b = append(b, '}')
		case "anyOf", "oneOf":
			if v.Kind != Array || k == "oneOf" && n.Get("anyOf") != nil {
				continue
			}
			key("anyOf")
			b = append(b, '[')
			for j, alt := range v.Vals {
				if j > 0 {
					b = append(b, ',')
				}
				b = g.append(b, alt, depth)
			}
			b = append(b, ']')
		}
	}
	if enumNote != "" && !wroteDesc {
		key("description")
		b = AppendString(b, enumNote)
	}
	return append(b, '}')
}
