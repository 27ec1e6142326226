package rpc

import (
	"encoding/json"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestIDKeyMatchesResponses: the key onReply files a request under is
// the "id" member of that request's response as it goes on the wire, for
// number and string ids. (Keys made with json.Marshal were all "{}", so
// no onReply ever ran: the work waited for the fallback timer there was
// then.)
func TestIDKeyMatchesResponses(t *testing.T) {
	for _, id := range []jsonrpc2.ID{jsonrpc2.NewNumberID(7), jsonrpc2.NewStringID(`a "quoted" id`)} {
		resp := jsonrpc2.NewResponse(id, jsonrpc2.RawMessage(`{}`), nil)
		data, err := jsonrpc2.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if got := idKey(id); got != string(m.ID) {
			t.Errorf("idKey(%v) = %s, the response's id is %s", id, got, m.ID)
		}
	}
}
