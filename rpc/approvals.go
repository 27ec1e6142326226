package rpc

import (
	"context"

	"github.com/cline-ls/cline-ls/approval"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// newApprovals is the connection's approval broker, given what it takes
// of the connection: the wire, where an approval's changes land, ACP's
// absolute locations and the diff shown as a document.
func newApprovals(s *Server) *approval.Broker {
	return approval.New(approval.Options{
		Caller:       connCaller(s),
		DiskNote:     s.delivery.DiskNote,
		AbsLocations: s.delivery.Absolute,
		ShowDiff: func(ctx context.Context, req session.ApprovalRequest) error {
			return showDiffDocument(ctx, s.call, s.stateDir(), req)
		},
		Log: s.log,
	})
}

// approvalChannels is how an LSP client that declared caps is asked.
func approvalChannels(caps clientCaps) approval.Channels {
	return approval.ChannelsFor(approval.Client{
		ClineApprovals:     caps.clineApprovals,
		ClineQuestions:     caps.clineQuestions,
		ShowMessageRequest: caps.showMessageReq,
		ShowDocument:       caps.showDocument,
	})
}

// approvalResponse serves cline/approvalResponse: the answer to the
// pending approval it names.
func approvalResponse(s *Server, raw []byte) (any, error) {
	var p wire.ApprovalResponseParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := s.approvals.Respond(p); err != nil {
		return nil, invalidParams("%s", err)
	}
	return wire.Empty{}, nil
}
