package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// maxLSPAnswer bounds the result of one cline/lspRequest the daemon
// decodes (the frame bound is larger): a hundred thousand locations
// take some 15 MB.
const maxLSPAnswer = 64 << 20

// editorServers asks the editor's language servers through the client
// (PROTOCOL.md §11): the tools' tools.LanguageServers for a client that
// declared experimental.cline.lsp.
type editorServers struct {
	caller interface {
		Call(ctx context.Context, method string, params, result any) error
	}
	enc func() workspace.Encoding
}

// lspFeatures is what a client declared it answers of its language
// servers; nil in the ACP dialect, which has no such request.
func lspFeatures(d Dialect, caps clientCaps) []string {
	if d != DialectLSP {
		return nil
	}
	return caps.lsp
}

func (e editorServers) Encoding() workspace.Encoding { return e.enc() }

// ask sends one cline/lspRequest and decodes its result into out.
func (e editorServers) ask(ctx context.Context, method string, params, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	var res wire.LSPRequestResult
	if err := e.caller.Call(ctx, methodLSPRequest, wire.LSPRequestParams{Method: method, Params: raw}, &res); err != nil {
		return err
	}
	if len(res.Result) > maxLSPAnswer {
		return fmt.Errorf("its answer of %d bytes is over the %d byte limit", len(res.Result), maxLSPAnswer)
	}
	if err := json.Unmarshal(res.Result, out); err != nil {
		return fmt.Errorf("its answer is not the LSP shape of %s (%v)", method, err)
	}
	return nil
}

func (e editorServers) References(ctx context.Context, p tools.LSPReferenceParams) (tools.LSPLocations, error) {
	var out tools.LSPLocations
	return out, e.ask(ctx, lspReferences, p, &out)
}

func (e editorServers) Definition(ctx context.Context, p tools.LSPPositionParams) (tools.LSPLocations, error) {
	var out tools.LSPLocations
	return out, e.ask(ctx, lspDefinition, p, &out)
}

func (e editorServers) Rename(ctx context.Context, p tools.LSPRenameParams) (*tools.LSPWorkspaceEdit, error) {
	var out *tools.LSPWorkspaceEdit
	return out, e.ask(ctx, lspRename, p, &out)
}

func (e editorServers) DocumentSymbols(ctx context.Context, p tools.LSPDocumentSymbolParams) (tools.LSPSymbols, error) {
	var out tools.LSPSymbols
	return out, e.ask(ctx, lspDocumentSymbol, p, &out)
}
