package wire

// The answers to the daemon's approvals and questions (PROTOCOL.md §4,
// §6), as the daemon reads them.

// PermissionOutcome is the user's answer to an approval: "selected" with
// the optionId picked, or "cancelled". cline/approvalResponse and ACP's
// session/request_permission result carry it alike.
type PermissionOutcome struct {
	OptionID string `json:"optionId,omitzero"`
	Outcome  string `json:"outcome"`
}

// Outcomes of a PermissionOutcome.
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// ApprovalResponseParams is the params of cline/approvalResponse.
type ApprovalResponseParams struct {
	ApprovalID string `json:"approvalId"`
	Feedback   string `json:"feedback,omitzero"`
	// KeptText is the text the user kept of an edit of one file (some
	// of its hunks, picked in the editor), sent with allow_once.
	KeptText *string            `json:"keptText,omitempty"`
	Outcome  *PermissionOutcome `json:"outcome"`
}

// RequestPermissionResult is the result of ACP's session/request_permission.
type RequestPermissionResult struct {
	Outcome PermissionOutcome `json:"outcome"`
}

// AskQuestionResult is the result of cline/askQuestion: null when the
// user dismissed the question.
type AskQuestionResult struct {
	Answer *string `json:"answer"`
}
