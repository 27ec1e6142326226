package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// codec encodes results and outgoing params: go.lsp.dev/protocol's types
// with its union-aware encoder (so they marshal as the spec says), and
// everything else with encoding/json, whose output is deterministic (map
// keys sorted) and which leaves HTML characters unescaped here, as
// jsonrpc2 asks. Answers to our own calls decode with protocol's decoder.
// Incoming params are not decoded here: handlers decode them with
// decodeParams, whose errors name the offending field.
type codec struct{}

var _ jsonrpc2.Codec = codec{}

func (codec) Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case json.RawMessage:
		if v == nil {
			return []byte("null"), nil
		}
		return v, nil
	case jsonrpc2.RawMessage:
		if v == nil {
			return []byte("null"), nil
		}
		return v, nil
	}
	if t := reflect.TypeOf(v); t != nil {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.PkgPath() == "go.lsp.dev/protocol" {
			return protocol.Marshal(v)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (codec) Unmarshal(data []byte, v any) error { return protocol.Unmarshal(data, v) }
