package rpc

import (
	"context"
	"fmt"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

const methodShowDocument = "window/showDocument"

// showDocument asks the client, through call (Server.call), to show the
// file at path without taking the focus from where the user is, or with
// it when takeFocus.
func showDocument(ctx context.Context, call func(ctx context.Context, method string, params, result any) error, path string, takeFocus bool) error {
	var res wire.ShowDocumentResult
	if err := call(ctx, methodShowDocument, wire.ShowDocumentParams{URI: workspace.PathToURI(path), TakeFocus: takeFocus}, &res); err != nil {
		return err
	}
	if !res.Success {
		return fmt.Errorf("the editor did not show %s", path)
	}
	return nil
}

// showDiffDocument writes the change an approval asks about to a
// read-only .diff file in the state directory and shows it.
func showDiffDocument(ctx context.Context, call func(ctx context.Context, method string, params, result any) error, stateDir string, req session.ApprovalRequest) error {
	path, err := workspace.WriteShownFile(stateDir, "diffs", "approval-"+req.CallID+".diff", []byte(req.Description.Preview))
	if err != nil {
		return err
	}
	return showDocument(ctx, call, path, true)
}
