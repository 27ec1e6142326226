package rpc

import (
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/wire"
)

// codec encodes results and outgoing params, all of them wire types or
// plain Go values, with wire.Marshal (encoding/json, deterministic, HTML
// characters unescaped as jsonrpc2 asks), and decodes the answers to our
// own calls with encoding/json. Incoming params are not decoded here:
// handlers decode them with decodeParams, whose errors name the offending
// field.
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
	return wire.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
