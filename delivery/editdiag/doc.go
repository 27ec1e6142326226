// Package editdiag says what an edit of an open buffer did to the
// editor's diagnostics: the bounded wait for those of the edited text
// (a quiet spell after the first report, since sources report one by
// one), the matching of a problem before the edit to one after it through
// the edit's changed lines, and the note the tool result carries, at most
// MaxLines problems for all files. It is the one place for those rules;
// the diagnostics themselves are kept by workspace.Diagnostics.
package editdiag
