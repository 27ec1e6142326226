package approval

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// askCline asks through the plugins' cline/approvalRequest and waits for
// the cline/approvalResponse that names it, the session's cancel, or the
// end of ctx, whichever comes first; the request is withdrawn after.
func (b *Broker) askCline(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	ch := make(chan session.ApprovalOutcome, 1)
	b.mu.Lock()
	b.next++
	id := "a" + strconv.Itoa(b.next)
	b.pending[id] = pending{sessionID: sessionID, answer: ch}
	b.mu.Unlock()
	defer b.withdraw(id)

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
		Options: options(req),
		Diff:    d.Preview,
		Command: d.Command,
	}
	if err := b.opts.Caller.Notify(ctx, methodApprovalRequest, params); err != nil {
		return session.ApprovalOutcome{}, fmt.Errorf("sending approval request: %w", err)
	}
	select {
	case out := <-ch:
		return out, nil
	case <-ctx.Done():
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
}

func (b *Broker) withdraw(id string) {
	b.mu.Lock()
	delete(b.pending, id)
	b.mu.Unlock()
}

// Respond takes the answer of cline/approvalResponse to the pending
// approval it names. Every error is the client's, its message naming the
// field at fault (for a -32602): an answer that is malformed, or one for
// an approval that is unknown, already answered or withdrawn.
func (b *Broker) Respond(p wire.ApprovalResponseParams) error {
	if p.ApprovalID == "" {
		return fmt.Errorf("approvalId: required")
	}
	if p.Outcome == nil {
		return fmt.Errorf("outcome: required")
	}
	var out session.ApprovalOutcome
	switch p.Outcome.Outcome {
	case wire.OutcomeCancelled:
		out.Choice = session.ApprovalCancelled
	case wire.OutcomeSelected:
		c, ok := choice(p.Outcome.OptionID)
		if !ok {
			return fmt.Errorf("outcome.optionId: must be allow_once, allow_always, reject_once or reject_always, got %q", p.Outcome.OptionID)
		}
		out.Choice = c
	default:
		return fmt.Errorf("outcome.outcome: must be \"selected\" or \"cancelled\", got %q", p.Outcome.Outcome)
	}
	out.Feedback = p.Feedback
	if p.KeptText != nil {
		if out.Choice != session.AllowOnce {
			return fmt.Errorf("keptText: only with the option allow_once")
		}
		out.Kept = p.KeptText
	}
	b.mu.Lock()
	pa, ok := b.pending[p.ApprovalID]
	delete(b.pending, p.ApprovalID)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("approvalId: %q is unknown or already answered", p.ApprovalID)
	}
	pa.answer <- out
	return nil
}
