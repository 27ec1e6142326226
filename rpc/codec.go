package rpc

import (
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// codec encodes results and outgoing params with go.lsp.dev/protocol's
// union-aware encoder (so protocol types marshal as the spec says) and
// decodes answers to our own calls the same way. Incoming params are not
// decoded here: handlers decode them with decodeParams, whose errors name
// the offending field.
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
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error { return protocol.Unmarshal(data, v) }
