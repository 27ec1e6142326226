// Package diff computes compact line diffs for the model and the editor,
// unified diffs for approval previews, minimal text edits between two
// texts in any LSP position encoding, and the changed region of an edit
// with its context (Region, for ACP's diff content).
package diff
