package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the JSON type of a Node.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Node is a parsed JSON value that keeps object keys in source order.
// Converters walk it instead of map[string]any so that a schema renders
// in the order its author wrote it (path before content, say) and the
// output is byte-for-byte stable between runs.
type Node struct {
	Kind Kind
	// Str is a string's value, or a number's or boolean's literal text.
	Str string
	// Keys and Vals are an object's members in source order; vals alone
	// holds an array's items.
	Keys []string
	Vals []*Node
}

// Parse parses one JSON value. Duplicate object keys keep the last
// value, as encoding/json does.
func Parse(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return n, nil
}

func decode(dec *json.Decoder) (*Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &Node{Kind: Null, Str: "null"}, nil
	case bool:
		return &Node{Kind: Bool, Str: strconv.FormatBool(t)}, nil
	case json.Number:
		return &Node{Kind: Number, Str: t.String()}, nil
	case string:
		return &Node{Kind: String, Str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &Node{Kind: Array}
			for dec.More() {
				v, err := decode(dec)
				if err != nil {
					return nil, err
				}
				n.Vals = append(n.Vals, v)
			}
			_, err := dec.Token() // ]
			return n, err
		case '{':
			n := &Node{Kind: Object}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decode(dec)
				if err != nil {
					return nil, err
				}
				n.Set(k, v)
			}
			_, err := dec.Token() // }
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// Get returns an object's member, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
		}
	}
	return nil
}

// Set replaces or appends an object member.
func (n *Node) Set(key string, v *Node) {
	for i, k := range n.Keys {
		if k == key {
			n.Vals[i] = v
			return
		}
	}
	n.Keys = append(n.Keys, key)
	n.Vals = append(n.Vals, v)
}

// Strings returns the string items of an array node.
func (n *Node) Strings() []string {
	if n == nil || n.Kind != Array {
		return nil
	}
	out := make([]string, 0, len(n.Vals))
	for _, v := range n.Vals {
		if v.Kind == String {
			out = append(out, v.Str)
		}
	}
	return out
}

// AppendJSON appends n as compact JSON. When expand is non-nil it is
// applied to the string value of every "description" member, so
// template placeholders in parameter descriptions are filled too.
func AppendJSON(b []byte, n *Node, expand func(string) string) []byte {
	switch n.Kind {
	case String:
		return AppendString(b, n.Str)
	case Array:
		b = append(b, '[')
		for i, v := range n.Vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSON(b, v, expand)
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i, k := range n.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			v := n.Vals[i]
			if expand != nil && k == "description" && v.Kind == String {
				b = AppendString(b, expand(v.Str))
			} else {
				b = AppendJSON(b, v, expand)
			}
		}
		return append(b, '}')
	default:
		return append(b, n.Str...)
	}
}

// AppendString appends s as a JSON string. Unlike encoding/json it does
// not escape <, > and &, which would only make tool text longer and
// harder to read in logs.
func AppendString(b []byte, s string) []byte {
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

// ResolvePointer finds the JSON a local reference names: "#" is the
// whole document, "#/a/b" a JSON pointer (RFC 6901) into it, written as
// a URI fragment.
func ResolvePointer(root *Node, ref string) (*Node, error) {
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %w", ref, err)
	}
	if frag == "" {
		return root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("$ref %q: anchors are not supported, only JSON pointers", ref)
	}
	n := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.Kind {
		case Object:
			n = n.Get(tok)
		case Array:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Vals) {
				n = nil
			} else {
				n = n.Vals[i]
			}
		default:
			n = nil
		}
		if n == nil {
			return nil, fmt.Errorf("$ref %q: no such schema in the document", ref)
		}
	}
	return n, nil
}
