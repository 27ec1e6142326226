// Package edit is the edit engine behind the editor, replace_in_file and
// apply_patch tools (docs/DESIGN.md §3). It computes new file contents from the
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
// Three rules protect the text around an edit:
//   - Lines the edit does not replace keep their bytes, line terminators
//     included; a UTF-8 byte order mark stays in front of the first line.
//   - New lines take the file's line ending (the dominant one; for editor's
//     replace in a mixed file, that of the matched place), so an edit never
//     turns a CRLF file into a mixed one.
//   - The line-based tools (editor's insert, replace_in_file, apply_patch)
//     keep a file's final newline, or its lack of one, unless the edit
//     removed the last line. editor's replace changes exactly the text
//     matched, newline or not.
package edit
