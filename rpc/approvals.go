package rpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// approvalOptions are the answers offered with an approval request, in
// every channel. The "always" ones name what they cover (req.Always,
// the session's Scope of the call: "Always allow edits of docs/a.txt"),
// so the user knows what the answer lets through later.
func approvalOptions(req session.ApprovalRequest) []wire.PermissionOption {
	if len(req.Options) > 0 {
		return req.Options
	}
	return []wire.PermissionOption{
		{OptionID: "allow_once", Name: "Allow", Kind: wire.AllowOnce},
		{OptionID: "allow_always", Name: alwaysLabel("Always allow", req), Kind: wire.AllowAlways},
		{OptionID: "reject_once", Name: "Reject", Kind: wire.RejectOnce},
		{OptionID: "reject_always", Name: alwaysLabel("Always reject", req), Kind: wire.RejectAlways},
	}
}

func alwaysLabel(verb string, req session.ApprovalRequest) string {
	if req.Always == "" {
		return verb
	}
	return verb + " " + req.Always
}

// approvals is the connection's approval broker. It asks through
// cline/approvalRequest when the client declared
// experimental.cline.approvals (several may be pending), and through
// window/showMessageRequest otherwise (one at a time).
type approvals struct {
	s *Server

	mu      sync.Mutex
	next    int
	pending map[string]pendingApproval

	// msgReq holds a token while a window/showMessageRequest is out: one
	// is asked at a time, and a session waiting its turn stops waiting
	// when it is cancelled.
	msgReq chan struct{}
}

type pendingApproval struct {
	sessionID string
	answer    chan session.ApprovalOutcome
}

// approver returns a session.Approver that asks on behalf of sessionID.
func (a *approvals) approver(sessionID string) session.Approver {
	return approverFunc(func(ctx context.Context, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
		return a.ask(ctx, sessionID, req)
	})
}

type approverFunc func(context.Context, session.ApprovalRequest) (session.ApprovalOutcome, error)

func (f approverFunc) Approve(ctx context.Context, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	return f(ctx, req)
}

func (a *approvals) ask(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	a.s.mu.Lock()
	viaCline := a.s.caps.clineApprovals
	acp := a.s.dialect == DialectACP
	a.s.mu.Unlock()
	if note := a.s.diskNote(sessionID, req.Description.Changes); note != "" {
		req.Description.Title += ": " + note
	}
	if acp {
		return a.askACP(ctx, sessionID, req)
	}
	if viaCline {
		return a.askCline(ctx, sessionID, req)
	}
	return a.askMessage(ctx, req)
}

func (a *approvals) askCline(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	a.mu.Lock()
	if a.pending == nil {
		a.pending = make(map[string]pendingApproval)
	}
	a.next++
	id := "a" + strconv.Itoa(a.next)
	ch := make(chan session.ApprovalOutcome, 1)
	a.pending[id] = pendingApproval{sessionID: sessionID, answer: ch}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.pending, id)
		a.mu.Unlock()
	}()

	d := req.Description
	params := wire.ApprovalRequestParams{
		SessionID:  sessionID,
		ApprovalID: id,
		ToolCall: wire.ApprovalToolCall{
			ToolCallID: req.CallID,
			Title:      d.Title,
			Kind:       wire.ToolKind(d.Kind),
			Locations:  session.Locations(d.Locations),
			RawInput:   session.ClientInput(req.Args),
		},
		Options: approvalOptions(req),
		Diff:    d.Preview,
		Command: d.Command,
	}
	if err := a.s.conn.Notify(ctx, methodApprovalRequest, params); err != nil {
		return session.ApprovalOutcome{}, fmt.Errorf("sending approval request: %w", err)
	}
	select {
	case out := <-ch:
		return out, nil
	case <-ctx.Done():
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
}

// respond handles cline/approvalResponse.
func (a *approvals) respond(raw []byte) (any, error) {
	var p struct {
		ApprovalID string `json:"approvalId"`
		Outcome    *struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
		Feedback string `json:"feedback"`
		// Kept is the text the user kept of an edit of one file (some of
		// its hunks, picked in the editor), sent with allow_once.
		Kept *string `json:"keptText"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("approvalId", p.ApprovalID); err != nil {
		return nil, err
	}
	if p.Outcome == nil {
		return nil, invalidParams("outcome: required")
	}
	var out session.ApprovalOutcome
	switch p.Outcome.Outcome {
	case "cancelled":
		out.Choice = session.ApprovalCancelled
	case "selected":
		switch p.Outcome.OptionID {
		case "allow_once", "allow_always", "reject_once", "reject_always":
			out.Choice = session.ApprovalChoice(p.Outcome.OptionID)
		default:
			return nil, invalidParams("outcome.optionId: must be allow_once, allow_always, reject_once or reject_always, got %q", p.Outcome.OptionID)
		}
	default:
		return nil, invalidParams("outcome.outcome: must be \"selected\" or \"cancelled\", got %q", p.Outcome.Outcome)
	}
	out.Feedback = p.Feedback
	if p.Kept != nil {
		if out.Choice != session.AllowOnce {
			return nil, invalidParams("keptText: only with the option allow_once")
		}
		out.Kept = p.Kept
	}
	a.mu.Lock()
	pa, ok := a.pending[p.ApprovalID]
	delete(a.pending, p.ApprovalID)
	a.mu.Unlock()
	if !ok {
		return nil, invalidParams("approvalId: %q is unknown or already answered", p.ApprovalID)
	}
	pa.answer <- out
	return wire.Empty{}, nil
}

// cancelSession resolves every pending approval of a session as cancelled.
func (a *approvals) cancelSession(sessionID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, pa := range a.pending {
		if pa.sessionID == sessionID {
			pa.answer <- session.ApprovalOutcome{Choice: session.ApprovalCancelled}
			delete(a.pending, id)
		}
	}
}

// showDiffTitle is the action of a window/showMessageRequest approval
// that opens the change and asks again.
const showDiffTitle = "Show diff"

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

// askMessage asks through window/showMessageRequest, which every stock LSP
// client supports. A null answer (the prompt dismissed) is a rejection.
// With a client that can show a document, the change is not in the
// message: "Show diff" opens it, read-only, and asks again; without, the
// message carries it.
func (a *approvals) askMessage(ctx context.Context, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	select {
	case a.msgReq <- struct{}{}:
		defer func() { <-a.msgReq }()
	case <-ctx.Done():
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
	d := req.Description
	a.s.mu.Lock()
	canShow := a.s.caps.showDocument && d.Preview != "" && len(req.Options) == 0
	a.s.mu.Unlock()
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
	actions := messageActions(req, canShow)
	params := wire.ShowMessageRequestParams{
		Type:    wire.MessageInfo,
		Message: msg.String(),
		Actions: actions,
	}
	for {
		var res *struct {
			Title string `json:"title"`
		}
		if err := a.s.call(ctx, methodShowMessageRequest, params, &res); err != nil {
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
			if err := showDiffDocument(ctx, a.s.call, a.s.stateDir(), req); err != nil {
				// Shown in the message instead, and asked again.
				a.s.log.Debug("diff not shown as a document", "err", err)
				params.Message = strings.TrimSuffix(params.Message, showDiffTitle+" opens the change.") + d.ReadablePreview()
				canShow = false
				params.Actions = messageActions(req, false)
			}
			continue
		}
		return messageOutcome(req, res.Title), nil
	}
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
