package tools

import (
	"strings"
)

// appendGeminiDecl writes one FunctionDeclaration. A tool without
// parameters gets no parameters member: Gemini rejects an OBJECT schema
// with no properties there.
func appendGeminiDecl(b []byte, s Spec, tree *node, ex func(string) string) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"description":`...)
	b = appendString(b, ex(s.Description))
	if props := tree.get("properties"); props != nil && len(props.keys) > 0 {
		b = append(b, `,"parameters":`...)
		g := &geminiSchema{root: tree, ex: ex, refBudget: geminiMaxRefs}
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
	root *node
	ex   func(string) string
	// refBudget counts down the $refs still to inline in this schema.
	refBudget int
}

// geminiMaxRefDepth and geminiMaxRefs bound $ref inlining: a recursive
// schema cannot be inlined whole, and one whose anyOf refers to itself
// several times would grow exponentially with depth. Past either bound a
// reference is cut to a bare OBJECT.
const (
	geminiMaxRefDepth = 8
	geminiMaxRefs     = 64
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

func (g *geminiSchema) resolveRef(n *node) *node {
	ref := n.get("$ref")
	if ref == nil || ref.kind != nodeString {
		return n
	}
	target, err := resolvePointer(g.root, ref.str)
	if err != nil {
		return &node{kind: nodeObject}
	}
	// A description beside the $ref says more about this use than the
	// definition's own.
	if d := n.get("description"); d != nil {
		merged := &node{kind: nodeObject, keys: append([]string(nil), target.keys...), vals: append([]*node(nil), target.vals...)}
		merged.set("description", d)
		return merged
	}
	return target
}

// geminiType returns the upper-case type of a schema and whether null is
// allowed. A missing type is inferred from the other keywords.
func geminiType(n *node) (typ string, nullable bool) {
	if t := n.get("type"); t != nil {
		switch t.kind {
		case nodeString:
			typ = t.str
		case nodeArray:
			for _, v := range t.vals {
				if v.str == "null" {
					nullable = true
				} else if typ == "" {
					typ = v.str
				}
			}
		}
	}
	if typ == "" {
		switch {
		case n.get("properties") != nil:
			typ = "object"
		case n.get("items") != nil:
			typ = "array"
		case n.get("enum") != nil:
			typ = "string"
		case n.get("anyOf") != nil || n.get("oneOf") != nil:
			return "", nullable
		default:
			// Gemini wants a type; a value of any type is best sent as text.
			typ = "string"
		}
	}
	return strings.ToUpper(typ), nullable
}

func (g *geminiSchema) append(b []byte, n *node, depth int) []byte {
	if n.get("$ref") != nil {
		if depth >= geminiMaxRefDepth || g.refBudget <= 0 {
			return append(b, `{"type":"OBJECT"}`...)
		}
		g.refBudget--
		n = g.resolveRef(n)
		depth++
	}
	if n.kind != nodeObject {
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
		b = appendString(b, k)
		b = append(b, ':')
	}
	if typ != "" {
		key("type")
		b = appendString(b, typ)
		if nullable {
			key("nullable")
			b = append(b, "true"...)
		}
	}
	// Gemini takes enum only on strings; other enums move into the
	// description so the model still learns the allowed values.
	enum := n.get("enum")
	var enumNote string
	if enum != nil && typ != "STRING" {
		vals := make([]string, len(enum.vals))
		for i, v := range enum.vals {
			vals[i] = string(appendNode(nil, v, nil))
		}
		enumNote = "one of: " + strings.Join(vals, ", ")
		enum = nil
	}
	wroteDesc := false
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "description", "title", "pattern":
			if v.kind != nodeString {
				continue
			}
			text := v.str
			if k == "description" {
				text = g.ex(text)
				if enumNote != "" {
					text += " (" + enumNote + ")"
				}
				wroteDesc = true
			}
			key(k)
			b = appendString(b, text)
		case "format":
			if v.kind == nodeString && geminiFormatOK(typ, v.str) {
				key(k)
				b = appendString(b, v.str)
			}
		case "enum":
			if enum != nil {
				key(k)
				b = append(b, '[')
				for j, e := range enum.vals {
					if j > 0 {
						b = append(b, ',')
					}
					if e.kind == nodeString {
						b = appendString(b, e.str)
					} else {
						b = appendString(b, string(appendNode(nil, e, nil)))
					}
				}
				b = append(b, ']')
			}
		case "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength",
			"minProperties", "maxProperties":
			if v.kind == nodeNumber {
				key(k)
				b = append(b, v.str...)
			}
		case "required":
			if v.kind == nodeArray && len(v.vals) > 0 {
				key(k)
				b = appendNode(b, v, nil)
			}
		case "items":
			if v.kind == nodeObject {
				key(k)
				b = g.append(b, v, depth)
			}
		case "properties":
			if v.kind != nodeObject {
				continue
			}
			key(k)
			b = append(b, '{')
			for j, pk := range v.keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, pk)
				b = append(b, ':')
				b = g.append(b, v.vals[j], depth)
			}
			b = append(b, '}')
		case "anyOf", "oneOf":
			if v.kind != nodeArray || k == "oneOf" && n.get("anyOf") != nil {
				continue
			}
			key("anyOf")
			b = append(b, '[')
			for j, alt := range v.vals {
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
		b = appendString(b, enumNote)
	}
	return append(b, '}')
}
