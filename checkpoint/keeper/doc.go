// Package keeper is a connection's checkpoint service, between the
// editor's requests and the workspace's checkpoint.Store: the one place
// that decides when a checkpoint is taken and what the user is told of
// it.
//
// It owns the store of the current workspace (opened for the folders and
// state directory in force, opened again when they change, its pruning
// limits brought up to date when the settings change), the background
// read of a workspace's first checkpoint with the tool calls that pause
// it, the checkpoints a session's turn takes (before its first change and
// after each call that may change files, unless the settings turn them
// off), the rule that a session is told once that undo is unavailable,
// and the listing, diff, restore and undo the editor asks for, answered
// with wire values.
//
// It is a package of its own, not part of checkpoint, so that the store
// stays a library of the workspace's undo points with no knowledge of
// sessions, the wire or the editor (bench/search uses it bare). It never
// imports rpc: what it needs of the connection (settings, folders, the
// open buffers, delivery of restored text to them, telling the user,
// progress) it takes in Config, as functions and small interfaces it
// declares.
package keeper
