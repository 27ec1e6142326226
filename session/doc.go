// Package session owns agent sessions: the turn loop, the tool scheduler, the
// approvals broker and its policy, modes, persistence and subagents. It never
// imports rpc; the connection reaches it through the small interfaces it
// declares (Client, Approver).
package session
