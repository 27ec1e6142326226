// Package session owns agent sessions: the turn loop, the one tool path
// and its scheduler, the approval policy, modes, persistence and replay,
// compaction and resumption, usage, and the session's own tools (plan,
// submit, questions, subagents).
//
// Its Manager owns a connection's live sessions and is the one place for
// their lifecycle rules: a session is opened, loaded, reopened on demand,
// forked, released when idle (never while a turn, an editor call or a
// background command of it runs) and closed there, its history has one
// writer (the one live copy the Manager keeps; a reopen waits for a
// release under way), and subagents are spawned there.
//
// It never imports rpc; the connection reaches it through the interfaces
// it declares: Opener (what the Manager needs of its host to make a
// session live), Approver, and the callbacks of its Config.
package session
