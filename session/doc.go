// Package session owns agent sessions: the turn loop, the one tool path
// and its scheduler, the approval policy, modes, persistence and replay,
// compaction and resumption, usage, and the session's own tools (plan,
// submit, questions, subagents). It never imports rpc; the connection
// reaches it through the one interface it declares (Approver) and the
// callbacks of its Config (updates, questions, subagents, checkpoints).
package session
