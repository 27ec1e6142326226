// Package approval asks the user: whether a tool call may run (the
// approvals of PROTOCOL.md §4), whether to trust a folder's hooks, and
// the questions of ask_question and of MCP servers (§6).
//
// It owns the one broker of a connection (Broker) and the one rule of
// how a connection asks (ChannelsFor, decided once at initialize from the
// dialect and the client's capabilities): cline/approvalRequest answered
// by cline/approvalResponse, window/showMessageRequest, or ACP's
// session/request_permission for approvals; cline/askQuestion or
// window/showMessageRequest for questions. The broker queues what must
// be asked one at a time (a window/showMessageRequest approval), keeps
// the pending approvals by id for their answers, withdraws a session's
// when it is cancelled or closed, and stops waiting when the asker's
// context ends.
//
// The broker only asks. Whether a call needs asking, and what an answer
// means for later calls, is the session's policy (session.Policy); the
// wire shapes are wire's. It sends through a Caller, which rpc provides
// over its connection, and never imports rpc.
package approval
