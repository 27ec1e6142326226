package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// members go through a map, so they come out sorted by name, as every
// message of ours is.
func tagged(key, value string, v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("wire: %T does not encode as an object", v)
	}
	tag, err := Marshal(value)
	if err != nil {
		return nil, err
	}
	m[key] = tag
	return Marshal(m)
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
