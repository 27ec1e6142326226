package approval

import (
	"context"
	"fmt"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// askACP asks through ACP's session/request_permission: the call as a
// pending tool call with absolute locations, its change as diff content
// (or the readable preview) and its command. Any outcome but
// "selected" is a cancel, as ACP defines it; an option that was not
// offered rejects, and the model is told which.
func (b *Broker) askACP(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	d := req.Description
	toolCall := wire.PermissionToolCall{
		ToolCallID: req.CallID,
		Title:      d.Title,
		Kind:       wire.ToolKind(d.Kind),
		Status:     wire.StatusPending,
		Locations:  b.opts.AbsLocations(session.Locations(d.Locations)),
		RawInput:   session.ClientInput(req.Args),
	}
	var files []session.DiffFile
	for _, c := range d.Changes {
		if c.NewText != nil && c.MoveTo == "" {
			files = append(files, session.DiffFile{Path: c.Path, OldText: c.OldText, NewText: *c.NewText, Existed: c.Existed})
		}
	}
	toolCall.Content = append(toolCall.Content, session.DiffContent(files)...)
	if pv := d.ReadablePreview(); len(toolCall.Content) == 0 && pv != "" {
		toolCall.Content = append(toolCall.Content, wire.Text(pv))
	}
	if d.Command != "" {
		toolCall.Content = append(toolCall.Content, wire.Text("$ "+d.Command))
	}
	var res wire.RequestPermissionResult
	err := b.opts.Caller.Call(ctx, methodRequestPermission, wire.RequestPermissionParams{
		SessionID: sessionID, ToolCall: toolCall, Options: options(req),
	}, &res)
	if err != nil {
		if ctx.Err() != nil {
			return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
		}
		return session.ApprovalOutcome{}, fmt.Errorf("asking for permission: %w", err)
	}
	if res.Outcome.Outcome != wire.OutcomeSelected {
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
	if c, ok := choice(res.Outcome.OptionID); ok {
		return session.ApprovalOutcome{Choice: c}, nil
	}
	return session.ApprovalOutcome{Choice: session.RejectOnce, Feedback: "unknown option " + res.Outcome.OptionID}, nil
}
