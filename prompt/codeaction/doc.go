// Package codeaction is the one place for the agent tasks an editor with
// no plugin is offered on a selection or a diagnostic
// (textDocument/codeAction, PROTOCOL.md §6): which tasks a range gets and
// the text of each, quoting the file, the lines, the selected text and
// the problems, so that running one starts a turn with that context and
// nothing to type. The daemon decodes the request and turns each Action
// into a command; this package sees only the document and the range.
package codeaction
