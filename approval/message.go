package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// showDiffTitle is the action of a window/showMessageRequest approval
// that opens the change and asks again.
const showDiffTitle = "Show diff"

// askMessage asks through window/showMessageRequest, which every stock
// LSP client supports, one approval at a time. A null answer (the
// prompt dismissed) is a rejection. With a client that can show a
// document, the change is not in the message: "Show diff" opens it,
// read-only, and asks again; without, the message carries it.
func (b *Broker) askMessage(ctx context.Context, req session.ApprovalRequest, showDocument bool) (session.ApprovalOutcome, error) {
	select {
	case b.msgReq <- struct{}{}:
		defer func() { <-b.msgReq }()
	case <-ctx.Done():
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
	d := req.Description
	canShow := showDocument && b.opts.ShowDiff != nil && d.Preview != "" && len(req.Options) == 0
	var msg strings.Builder
	if len(req.Options) > 0 {
		msg.WriteString("cline-ls: " + d.Title)
		if d.Command != "" {
			fmt.Fprintf(&msg, "\n\n%s", d.Command)
		}
	} else {
		fmt.Fprintf(&msg, "cline-ls wants to run %s: %s", req.Tool, d.Title)
		if d.Command != "" {
			fmt.Fprintf(&msg, "\n\n$ %s", d.Command)
		}
		switch {
		case canShow:
			msg.WriteString("\n\n" + showDiffTitle + " opens the change.")
		case d.ReadablePreview() != "":
			fmt.Fprintf(&msg, "\n\n%s", d.ReadablePreview())
		}
	}
	params := wire.ShowMessageRequestParams{
		Type:    wire.MessageInfo,
		Message: msg.String(),
		Actions: messageActions(req, canShow),
	}
	for {
		var res *wire.MessageAction
		if err := b.opts.Caller.Call(ctx, methodShowMessageRequest, params, &res); err != nil {
			if ctx.Err() != nil {
				return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
			}
			var je *jsonrpc2.Error
			if errors.As(err, &je) {
				return session.ApprovalOutcome{Choice: session.RejectOnce, Feedback: "the editor could not ask: " + je.Message}, nil
			}
			return session.ApprovalOutcome{}, fmt.Errorf("asking for approval: %w", err)
		}
		if res == nil {
			return session.ApprovalOutcome{Choice: session.RejectOnce}, nil
		}
		if canShow && res.Title == showDiffTitle {
			if err := b.opts.ShowDiff(ctx, req); err != nil {
				// Shown in the message instead, and asked again.
				b.opts.Log.Debug("diff not shown as a document", "err", err)
				params.Message = strings.TrimSuffix(params.Message, showDiffTitle+" opens the change.") + d.ReadablePreview()
				canShow = false
				params.Actions = messageActions(req, false)
			}
			continue
		}
		return messageOutcome(req, res.Title), nil
	}
}

// messageActions are the actions of an approval asked through
// window/showMessageRequest, in order. Stock clients pre-select or number
// the first (Eglot's completing-read offers it on RET, Neovim 0.7's
// inputlist() takes a typed "1"), so the first never approves: "Show
// diff" when the change can be shown, "Reject", then the approvals.
// Options of the request's own (the trust question) keep their order
// with those that do not allow first.
func messageActions(req session.ApprovalRequest, canShow bool) []wire.MessageAction {
	var out []wire.MessageAction
	if len(req.Options) > 0 {
		for _, o := range req.Options {
			if o.Kind != wire.AllowOnce && o.Kind != wire.AllowAlways {
				out = append(out, wire.MessageAction{Title: o.Name})
			}
		}
		for _, o := range req.Options {
			if o.Kind == wire.AllowOnce || o.Kind == wire.AllowAlways {
				out = append(out, wire.MessageAction{Title: o.Name})
			}
		}
		return out
	}
	if canShow {
		out = append(out, wire.MessageAction{Title: showDiffTitle})
	}
	return append(out, wire.MessageAction{Title: "Reject"}, wire.MessageAction{Title: "Allow"},
		wire.MessageAction{Title: alwaysLabel("Always allow", req)})
}

// messageOutcome is the outcome a window/showMessageRequest answer's
// title picks; a title not offered rejects.
func messageOutcome(req session.ApprovalRequest, title string) session.ApprovalOutcome {
	for _, o := range req.Options {
		if o.Name == title {
			return session.ApprovalOutcome{Choice: session.ApprovalChoice(o.OptionID)}
		}
	}
	if len(req.Options) > 0 {
		return session.ApprovalOutcome{Choice: session.RejectOnce}
	}
	switch title {
	case "Allow":
		return session.ApprovalOutcome{Choice: session.AllowOnce}
	case alwaysLabel("Always allow", req), "Always allow":
		// The bare title is what clients were offered before the label
		// named its scope; the scope is the same.
		return session.ApprovalOutcome{Choice: session.AllowAlways}
	}
	return session.ApprovalOutcome{Choice: session.RejectOnce}
}
