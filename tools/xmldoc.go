package tools

import (
	"slices"
	"strconv"

	"github.com/cline-ls/cline-ls/toolspec"
)

// appendXMLDoc writes the text-path documentation of one tool:
//
//	## name
//	description
//	Parameters:
//	- param (required, a string): description
//	Usage: <name><param>…</param></name>
//
// Array and object values are written as JSON between the tags; nested
// object fields are listed indented under their parameter. The usage line
// shows the required parameters only.
func appendXMLDoc(b []byte, s Spec, tree *toolspec.Node, root *schema, ex func(string) string) []byte {
	b = append(b, "## "...)
	b = append(b, s.Name...)
	b = append(b, '\n')
	b = append(b, ex(s.Description)...)
	props := tree.Get("properties")
	if props != nil && len(props.Keys) > 0 {
		b = append(b, "\nParameters:"...)
		b = appendXMLParams(b, props, root, "", ex)
	}
	b = append(b, "\nUsage: <"...)
	b = append(b, s.Name...)
	b = append(b, '>')
	if props != nil {
		for _, k := range props.Keys {
			if !slices.Contains(root.Required, k) {
				continue
			}
			b = append(b, '<')
			b = append(b, k...)
			b = append(b, '>')
			ps := deref(root.Properties[k])
			if typ, _ := schemaType(ps); typ == "string" && len(ps.Enum) == 0 {
				b = append(b, "…"...)
			} else {
				b = appendExample(b, ps, 0)
			}
			b = append(b, "</"...)
			b = append(b, k...)
			b = append(b, '>')
		}
	}
	b = append(b, "</"...)
	b = append(b, s.Name...)
	return append(b, '>')
}

// appendXMLParams lists an object's properties in source order, then the
// fields of array items and nested objects one indent deeper.
func appendXMLParams(b []byte, props *toolspec.Node, parent *schema, indent string, ex func(string) string) []byte {
	for i, k := range props.Keys {
		ps := deref(parent.Properties[k])
		if ps == nil {
			continue
		}
		b = append(b, '\n')
		b = append(b, indent...)
		b = append(b, "- "...)
		b = append(b, k...)
		if slices.Contains(parent.Required, k) {
			b = append(b, " (required, "...)
		} else {
			b = append(b, " (optional, "...)
		}
		b = append(b, describe(ps)...)
		typ, _ := schemaType(ps)
		if indent == "" && (typ == "array" || typ == "object") {
			b = append(b, ", as JSON"...)
		}
		b = append(b, ')')
		if ps.Description != "" {
			b = append(b, ": "...)
			b = append(b, ex(ps.Description)...)
		}
		// Fields of the objects inside, so a model can write them.
		sub, subNode := ps, props.Vals[i]
		if typ == "array" && ps.Items != nil {
			sub, subNode = ps.Items, subNode.Get("items")
		}
		if fields := subNode.Get("properties"); fields != nil && len(fields.Keys) > 0 && sub.Properties != nil {
			b = appendXMLParams(b, fields, sub, indent+"  ", ex)
		}
	}
	return b
}

// appendExample writes a small JSON value of a schema's shape: required
// fields only, "…" for text, the minimum for numbers, the first enum
// value. Depth bounds recursive schemas.
func appendExample(b []byte, s *schema, depth int) []byte {
	if s == nil || depth > 4 {
		return append(b, "null"...)
	}
	if len(s.Enum) > 0 {
		if str, ok := s.Enum[0].(string); ok {
			return toolspec.AppendString(b, str)
		}
	}
	typ, _ := schemaType(s)
	switch typ {
	case "string":
		return append(b, `"…"`...)
	case "integer", "number":
		if s.Minimum != nil {
			return strconv.AppendFloat(b, *s.Minimum, 'g', -1, 64)
		}
		return append(b, '1')
	case "boolean":
		return append(b, "true"...)
	case "array":
		b = append(b, '[')
		if s.Items != nil {
			b = appendExample(b, s.Items, depth+1)
		}
		return append(b, ']')
	case "object":
		b = append(b, '{')
		for i, k := range s.Required {
			if i > 0 {
				b = append(b, ',')
			}
			b = toolspec.AppendString(b, k)
			b = append(b, ':')
			b = appendExample(b, s.Properties[k], depth+1)
		}
		return append(b, '}')
	}
	return append(b, `"…"`...)
}
