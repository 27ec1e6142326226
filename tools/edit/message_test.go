package edit

import "github.com/cline-ls/cline-ls/diff"

// resultMessage builds the text the editor tool shows after a successful
// call, the way the tool wrapper does: CreatedMessage for a new file,
// package diff's compact diff otherwise. maxLines 0 means the default.
func resultMessage(path, old string, res EditorResult, maxLines int) string {
	if res.Action == ActionCreated {
		return CreatedMessage(path)
	}
	var opts []diff.Option
	if maxLines > 0 {
		opts = append(opts, diff.MaxLines(maxLines))
	}
	return diff.Compact(path, old, res.Text, opts...).Text
}
