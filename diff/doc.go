// Package diff computes compact line diffs for the model and the editor,
// unified diffs for approval previews, and minimal text edits between two
// texts in any LSP position encoding.
package diff
