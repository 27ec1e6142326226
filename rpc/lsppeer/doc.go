// Package lsppeer is the LSP dialect's side of a connection, as the
// daemon's one peer of an LSP client (PROTOCOL.md §1, §6): how a request
// the daemon gave up is withdrawn ($/cancelRequest), whether the client's
// log takes messages, whether it strands messages behind an answer
// (Eglot), and the work-done progress of turns and of the daemon's own
// work. It is the one place for the rules of window/workDoneProgress: a
// token per turn, begin / report / end, reports of streamed text bounded
// in rate and length, and the client's cancel button cancelling the turn.
//
// It imports wire and tools, never rpc: the connection is given to it
// as a Caller.
package lsppeer
