// Package edit is the edit engine behind the editor, replace_in_file and
// apply_patch tools (DESIGN.md §3). It computes new file contents from the
// model's arguments and never touches a disk or a buffer itself: the tool
// wrappers read the current text (buffer mirror or disk), call this package,
// and deliver the result.
//
// Every function here either returns the complete new text or an error and
// no change, so a call that fails part-way can never leave a half-edited
// file. The errors are written for the model: they say what was looked for,
// what was found instead when something came close, and that nothing was
// changed.
//
// Three rules hold for all three tools:
//   - Lines the edit does not replace keep their bytes, line terminators
//     included; a UTF-8 byte order mark stays in front of the first line.
//   - New lines take the file's dominant line ending (CRLF, LF or CR), so
//     an edit never turns a CRLF file into a mixed one.
//   - A file keeps or lacks its final newline as it did before, unless the
//     edit removed the last line.
package edit
