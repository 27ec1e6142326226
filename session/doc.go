// Package session owns agent sessions: the turn loop, the one tool path
// and its scheduler, the approval policy, modes, persistence and replay,
// compaction and resumption, usage, and the session's own tools (plan,
// submit, questions, subagents).
//
// Its Manager owns a connection's live sessions and is the one place for
// their lifecycle rules: a session is opened, loaded, reopened on demand,
// forked, released when idle (never while a turn, an editor call or a
// background command of it runs) and closed there; its history has one
// writer, the one live copy the Manager keeps (a reopen waits for a
// release under way, a second load replays the live copy); subagents are
// spawned there.
//
// It never imports rpc. The connection reaches it through the interfaces
// it declares: Opener (what the Manager needs of its host to make a
// session live), Host (what one session needs of its surroundings:
// updates, questions, secrets, the editor's state, subagents,
// checkpoints; a turn reaches the connection through it only), Approver
// and Hooks. Config is plain data.
package session
