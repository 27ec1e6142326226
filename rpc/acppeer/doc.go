// Package acppeer is the ACP dialect's side of a connection, as the
// daemon's one peer of an ACP client (PROTOCOL.md §1–5, §12): how a
// request the daemon gave up is withdrawn ($/cancel_request), the
// client's terminals (terminal/*) that run_commands' foreground commands
// go through, the slash commands the daemon runs itself, and the
// sessions' configuration (the approval level a session chose and the
// options shown as selectors; the model a session chose is its model
// switch's, kept by the settings package).
//
// It is the one place for the rules of client terminals (each request
// after a command bounded, every terminal still open released at the
// daemon's exit) and of the approval levels a session can pick.
//
// It imports wire, session, tools and acp-go-sdk (the client's answers
// are read in the SDK's types), never rpc: the connection is given to it
// as a Caller.
package acppeer
