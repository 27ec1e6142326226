package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// nodeKind is the JSON type of a node.
type nodeKind uint8

const (
	nodeNull nodeKind = iota
	nodeBool
	nodeNumber
	nodeString
	nodeArray
	nodeObject
)

// node is a parsed JSON value that keeps object keys in source order.
// Converters walk it instead of map[string]any so that a schema renders
// in the order its author wrote it (path before content, say) and the
// output is byte-for-byte stable between runs.
type node struct {
	kind nodeKind
	// str is a string's value, or a number's or boolean's literal text.
	str string
	// keys and vals are an object's members in source order; vals alone
	// holds an array's items.
	keys []string
	vals []*node
}

// parseNode parses one JSON value. Duplicate object keys keep the last
// value, as encoding/json does.
func parseNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return n, nil
}

func decodeNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: nodeNull, str: "null"}, nil
	case bool:
		return &node{kind: nodeBool, str: strconv.FormatBool(t)}, nil
	case json.Number:
		return &node{kind: nodeNumber, str: t.String()}, nil
	case string:
		return &node{kind: nodeString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: nodeArray}
			for dec.More() {
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token() // ]
			return n, err
		case '{':
			n := &node{kind: nodeObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.set(k, v)
			}
			_, err := dec.Token() // }
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// get returns an object's member, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != nodeObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces or appends an object member.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// strings returns the string items of an array node.
func (n *node) strings() []string {
	if n == nil || n.kind != nodeArray {
		return nil
	}
	out := make([]string, 0, len(n.vals))
	for _, v := range n.vals {
		if v.kind == nodeString {
			out = append(out, v.str)
		}
	}
	return out
}

// appendNode appends n as compact JSON. When expand is non-nil it is
// applied to the string value of every "description" member, so
// template placeholders in parameter descriptions are filled too.
func appendNode(b []byte, n *node, expand func(string) string) []byte {
	switch n.kind {
	case nodeString:
		return appendString(b, n.str)
	case nodeArray:
		b = append(b, '[')
		for i, v := range n.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, v, expand)
		}
		return append(b, ']')
	case nodeObject:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			v := n.vals[i]
			if expand != nil && k == "description" && v.kind == nodeString {
				b = appendString(b, expand(v.str))
			} else {
				b = appendNode(b, v, expand)
			}
		}
		return append(b, '}')
	default:
		return append(b, n.str...)
	}
}

// appendString appends s as a JSON string. Unlike encoding/json it does
// not escape <, > and &, which would only make tool text longer and
// harder to read in logs.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript readers.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
