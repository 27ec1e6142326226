package wire

// The shapes of PROTOCOL.md §8: listing a session's checkpoints, the diff
// of a restore and the restore itself, in both dialects (cline/* and
// _cline/*) and as the arguments of the cline.checkpoints and
// cline.restore commands. Members keep the order they have always been
// written in, not sorted: clients and recorded answers see the same bytes.

// CheckpointsParams is the params of cline/checkpoints.
type CheckpointsParams struct {
	SessionID string `json:"sessionId"`
}

// Checkpoint is one checkpoint in a listing. Time is RFC 3339 in UTC;
// ToolCallID is empty for the checkpoint taken before a turn.
type Checkpoint struct {
	CheckpointID string   `json:"checkpointId"`
	Turn         int      `json:"turn"`
	ToolCallID   string   `json:"toolCallId,omitempty"`
	Time         string   `json:"time"`
	Title        string   `json:"title"`
	Files        []string `json:"files"`
}

// CheckpointsResult is the answer to cline/checkpoints, oldest first.
type CheckpointsResult struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// CheckpointDiffParams is the params of cline/checkpointDiff.
type CheckpointDiffParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
}

// CheckpointFile is one file a restore would change, with the compact
// diff from its text now to the checkpoint's.
type CheckpointFile struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	Diff   string `json:"diff"`
}

// CheckpointDiffResult is the answer to cline/checkpointDiff.
type CheckpointDiffResult struct {
	Files []CheckpointFile `json:"files"`
}

// RestoreParams is the params of cline/restore: Scope is "files",
// "conversation" or "both".
type RestoreParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
	Scope        string `json:"scope"`
	Force        bool   `json:"force"`
}

// RestoreConflict is a file a restore kept as it is, and why.
type RestoreConflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// RestoreResult is the answer to cline/restore.
type RestoreResult struct {
	Restored  []string          `json:"restored"`
	Conflicts []RestoreConflict `json:"conflicts"`
}
