package approval

// Channel is one way of asking the user.
type Channel int

// The channels.
const (
	// None: the user cannot be asked this way at all.
	None Channel = iota
	// ClineApproval is the plugins' cline/approvalRequest notification,
	// answered by the cline/approvalResponse request; several may be
	// pending at once.
	ClineApproval
	// ClineQuestion is the plugins' cline/askQuestion request, which
	// takes any answer, typed or picked.
	ClineQuestion
	// ShowMessage is LSP's window/showMessageRequest, which every stock
	// client has: the answer is one of the actions offered, or null.
	ShowMessage
	// RequestPermission is ACP's session/request_permission.
	RequestPermission
)

// Client is what a connection's client declared that decides how it is
// asked.
type Client struct {
	ACP                bool // the ACP dialect
	ClineApprovals     bool // experimental.cline.approvals
	ClineQuestions     bool // experimental.cline.questions
	ShowMessageRequest bool // window.showMessageRequest
	ShowDocument       bool // window.showDocument.support
}

// Channels is how one connection asks, decided once by ChannelsFor.
type Channels struct {
	Approval Channel
	Question Channel
	// ShowDocument: a window/showMessageRequest approval of a change can
	// offer "Show diff", which opens it as a document, instead of
	// carrying the diff in the message.
	ShowDocument bool
}

// ChannelsFor is the one rule of how a client is asked. Approvals go
// through session/request_permission in ACP, cline/approvalRequest to a
// client that declared it, else window/showMessageRequest, which is
// tried even with a client that did not declare it, since a call that
// needs approval cannot run unasked. Questions go through
// cline/askQuestion or a declared window/showMessageRequest, and not
// at all in ACP: there a question belongs to a turn, whose answer is
// the user's next prompt (the session's concern), and the connection's
// MCP servers, which ask too, have no session.
func ChannelsFor(c Client) Channels {
	if c.ACP {
		return Channels{Approval: RequestPermission, Question: None}
	}
	ch := Channels{Approval: ShowMessage, Question: None, ShowDocument: c.ShowDocument}
	if c.ClineApprovals {
		ch.Approval = ClineApproval
	}
	switch {
	case c.ClineQuestions:
		ch.Question = ClineQuestion
	case c.ShowMessageRequest:
		ch.Question = ShowMessage
	}
	return ch
}

// CanAsk reports whether the user can be asked a question.
func (c Channels) CanAsk() bool { return c.Question != None }

// FreeText reports whether a question can take an answer that is none
// of its options (a field of free text in an MCP elicitation).
func (c Channels) FreeText() bool { return c.Question == ClineQuestion }
