package wire

// ShowDocumentParams is the params of window/showDocument (LSP 3.16): a
// file of the daemon's own to show (a diff, a transcript), or with
// External a page for the browser. go.lsp.dev/protocol's shape leaves
// out takeFocus when it is false, and a client that defaults it to true
// would take the focus from where the user is: ours always writes it.
type ShowDocumentParams struct {
	External  bool   `json:"external,omitempty"`
	TakeFocus bool   `json:"takeFocus"`
	URI       string `json:"uri"`
}

// ShowDocumentResult is the answer to window/showDocument.
type ShowDocumentResult struct {
	Success bool `json:"success"`
}
