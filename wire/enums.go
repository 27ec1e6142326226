package wire

// ToolKind is what a tool call does, for a client to pick its icon and to
// group calls (ACP's ToolKind).
type ToolKind string

// Tool kinds: every value ACP's schema allows.
const (
	KindRead       ToolKind = "read"
	KindEdit       ToolKind = "edit"
	KindDelete     ToolKind = "delete"
	KindMove       ToolKind = "move"
	KindSearch     ToolKind = "search"
	KindExecute    ToolKind = "execute"
	KindThink      ToolKind = "think"
	KindFetch      ToolKind = "fetch"
	KindSwitchMode ToolKind = "switch_mode"
	KindOther      ToolKind = "other"
)

// ToolKinds lists every ToolKind.
var ToolKinds = []ToolKind{KindRead, KindEdit, KindDelete, KindMove, KindSearch, KindExecute, KindThink, KindFetch, KindSwitchMode, KindOther}

// ToolCallStatus is where a tool call stands.
type ToolCallStatus string

// Tool-call statuses: pending until it runs (or while it waits for
// approval), in_progress while it runs, then completed or failed.
const (
	StatusPending    ToolCallStatus = "pending"
	StatusInProgress ToolCallStatus = "in_progress"
	StatusCompleted  ToolCallStatus = "completed"
	StatusFailed     ToolCallStatus = "failed"
)

// ToolCallStatuses lists every ToolCallStatus.
var ToolCallStatuses = []ToolCallStatus{StatusPending, StatusInProgress, StatusCompleted, StatusFailed}

// PlanPriority is how much a plan entry matters.
type PlanPriority string

// Plan priorities.
const (
	PriorityHigh   PlanPriority = "high"
	PriorityMedium PlanPriority = "medium"
	PriorityLow    PlanPriority = "low"
)

// PlanPriorities lists every PlanPriority.
var PlanPriorities = []PlanPriority{PriorityHigh, PriorityMedium, PriorityLow}

// PlanStatus is where a plan entry stands.
type PlanStatus string

// Plan entry statuses.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanCompleted  PlanStatus = "completed"
)

// PlanStatuses lists every PlanStatus.
var PlanStatuses = []PlanStatus{PlanPending, PlanInProgress, PlanCompleted}

// PermissionKind is what choosing a permission option does.
type PermissionKind string

// Permission option kinds.
const (
	AllowOnce    PermissionKind = "allow_once"
	AllowAlways  PermissionKind = "allow_always"
	RejectOnce   PermissionKind = "reject_once"
	RejectAlways PermissionKind = "reject_always"
)

// PermissionKinds lists every PermissionKind.
var PermissionKinds = []PermissionKind{AllowOnce, AllowAlways, RejectOnce, RejectAlways}
