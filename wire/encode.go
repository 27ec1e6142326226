package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Marshal encodes v as the daemon writes every message: with encoding/json
// and without escaping HTML characters, which JSON-RPC peers do not expect.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// tagged encodes v, a struct, as an object with the member key: value
// added, so that a variant of a sum type carries its discriminator. The
// member goes before the first one whose name sorts after key: since the
// structs declare their fields in sorted order, the object's members are
// sorted as a map's were, and the bytes are those of the map it replaced.
// Every session update passes here: the member is appended in place and
// the names are compared without copying them.
func tagged(key, value string, v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("wire: %T does not encode as an object", v)
	}
	at, comma := insertionPoint(b, key)
	out := make([]byte, 0, len(b)+len(key)+len(value)+6)
	out = append(out, b[:at]...)
	if comma == commaBefore {
		out = append(out, ',')
	}
	out = strconv.AppendQuote(out, key)
	out = append(out, ':')
	out = strconv.AppendQuote(out, value)
	if comma == commaAfter {
		out = append(out, ',')
	}
	return append(out, b[at:]...), nil
}

const (
	commaNone = iota
	commaBefore
	commaAfter
)

// insertionPoint finds where in obj, compact JSON from encoding/json, a
// member named key goes: before the first member whose name sorts after
// it, else before the closing brace.
func insertionPoint(obj []byte, key string) (int, int) {
	if obj[1] == '}' {
		return 1, commaNone
	}
	for i := 1; ; {
		name, end := readString(obj, i)
		if string(name) > key { // compared without a copy
			return i, commaAfter
		}
		next, last := skipValue(obj, end+2) // past the name's quote and ':'
		if last {
			return next, commaBefore
		}
		i = next + 1
	}
}

// skipValue returns the index of the ',' or '}' that ends the member
// whose value starts at obj[i], and whether it is the object's end.
func skipValue(obj []byte, i int) (int, bool) {
	depth, inString := 0, false
	for ; i < len(obj); i++ {
		c := obj[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return i, true
			}
			depth--
		case c == ',' && depth == 0:
			return i, false
		}
	}
	return len(obj) - 1, true
}

// readString reads the JSON string starting at obj[i] (a member name,
// which encoding/json writes unescaped for our field names) and returns
// its bytes, unquoted, with the index of its closing quote.
func readString(obj []byte, i int) ([]byte, int) {
	for j := i + 1; j < len(obj); j++ {
		switch obj[j] {
		case '\\':
			j++
		case '"':
			return obj[i+1 : j], j
		}
	}
	return nil, len(obj) - 1
}

// tagOf reads the discriminator key of an object, with its members.
func tagOf(data []byte, key string) (map[string]json.RawMessage, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, "", err
	}
	raw, ok := m[key]
	if !ok {
		return nil, "", fmt.Errorf("no %q member", key)
	}
	var tag string
	if err := json.Unmarshal(raw, &tag); err != nil {
		return nil, "", fmt.Errorf("%s: %w", key, err)
	}
	return m, tag, nil
}
