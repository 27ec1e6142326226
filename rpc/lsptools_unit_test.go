package rpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

func TestEditorServersAskThroughTheCaller(t *testing.T) {
	var sent wire.LSPRequestParams
	answer := json.RawMessage(`[{"uri":"file:///a.go","range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}}}]`)
	e := editorServers{
		caller: caller{call: func(_ context.Context, method string, params, result any) error {
			if method != methodLSPRequest {
				t.Errorf("method %s", method)
			}
			sent = params.(wire.LSPRequestParams)
			result.(*wire.LSPRequestResult).Result = answer
			return nil
		}},
		enc: func() workspace.Encoding { return workspace.UTF8 },
	}
	if e.Encoding() != workspace.UTF8 {
		t.Error("the encoding is not the connection's")
	}
	locs, err := e.Definition(context.Background(), tools.LSPPositionParams{TextDocument: tools.LSPTextDocument{URI: "file:///a.go"}})
	if err != nil || len(locs) != 1 || locs[0].URI != "file:///a.go" || sent.Method != lspDefinition {
		t.Fatalf("Definition = %v %v (sent %+v)", locs, err, sent)
	}
	answer = json.RawMessage(`"nope"`)
	if _, err := e.References(context.Background(), tools.LSPReferenceParams{}); err == nil || !strings.Contains(err.Error(), "not the LSP shape of textDocument/references") {
		t.Errorf("a wrong shape: %v", err)
	}
	if got := lspFeatures(DialectACP, clientCaps{lsp: []string{"definition"}}); got != nil {
		t.Errorf("ACP features %q", got)
	}
}
