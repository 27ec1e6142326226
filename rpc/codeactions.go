package rpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/prompt/codeaction"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// methodCodeAction offers agent tasks on a selection or a diagnostic to
// clients with no plugin (PROTOCOL.md §6).
const methodCodeAction = "textDocument/codeAction"

type codeActionParams struct {
	TextDocument codeActionDocument `json:"textDocument"`
	Range        workspace.Range    `json:"range"`
	Context      codeActionContext  `json:"context"`
}

// codeActionDocument is LSP's TextDocumentIdentifier.
type codeActionDocument struct {
	URI string `json:"uri"`
}

type codeActionContext struct {
	Diagnostics []codeaction.Diagnostic `json:"diagnostics"`
}

// codeActionWire is an LSP CodeAction that runs a command.
type codeActionWire struct {
	Title   string      `json:"title"`
	Kind    string      `json:"kind"`
	Command commandWire `json:"command"`
}

type commandWire struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments"`
}

// codeActions serves textDocument/codeAction with the agent tasks
// codeaction offers on the range of an open document, each running
// cline.prompt with its text, so a stock client starts a turn with that
// context and nothing to type.
func (t *textSync) codeActions(raw []byte) (any, error) {
	var p codeActionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("textDocument.uri", p.TextDocument.URI); err != nil {
		return nil, err
	}
	snap, ok := t.buffers.Get(p.TextDocument.URI)
	if !ok {
		return []codeActionWire{}, nil // only open documents: the context is their text
	}
	doc := codeaction.Document{URI: snap.URI, Path: snap.Path, Text: snap.Text}
	if f := t.folders.Paths(); len(f) > 0 {
		doc.Root = f[0]
	}
	out := []codeActionWire{}
	for _, a := range codeaction.For(doc, p.Range, p.Context.Diagnostics, t.enc()) {
		out = append(out, codeActionWire{Title: a.Title, Kind: a.Kind, Command: commandWire{
			Title: a.Title, Command: commandPrompt, Arguments: []any{wire.CommandArgs{Text: a.Task}},
		}})
	}
	return out, nil
}

// syncCall routes a request to the server's textSync part.
func syncCall(f func(*textSync, []byte) (any, error)) handler {
	return func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) {
		return f(&s.text, req.Params())
	}
}
