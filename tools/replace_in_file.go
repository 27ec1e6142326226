package tools

import (
	"context"
	"errors"

	"github.com/cline-ls/cline-ls/tools/edit"
)

// replaceInFileArgs are replace_in_file's arguments
// (specs/replace_in_file.json).
type replaceInFileArgs struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

// buildReplaceInFile makes a replace_in_file call. As with editor, a
// refused path is reported when the call runs.
func (e *editEnv) buildReplaceInFile(a replaceInFileArgs) (Invocation, error) {
	abs, err := e.files.Resolve(a.Path)
	c := &replaceInFileCall{env: e, args: a, abs: abs, pathErr: err, display: e.editDisplayOr(abs, a.Path, err)}
	c.once.plan = c.plan
	return c, nil
}

// replaceInFileCall is one validated replace_in_file call: SEARCH/REPLACE
// blocks applied to one file, all or nothing (docs/DESIGN.md §3).
type replaceInFileCall struct {
	env     *editEnv
	args    replaceInFileArgs
	abs     string
	display string
	pathErr error
	once    planOnce // the plan Describe made, reused by Execute
	counted bool     // whether the call's failure has been counted
}

// refused words a refusal of the call, counting it against the file.
func (c *replaceInFileCall) refused(msg string) string {
	return c.env.failed(c.abs, &c.counted, msg)
}

// plan applies the blocks to the file's text as read now, returning the
// engine's notes on blocks that matched only loosely.
func (c *replaceInFileCall) plan(read func(string) (FileText, error)) ([]Change, []string, error) {
	ft, err := read(c.abs)
	if err != nil {
		return nil, nil, editReadError(c.display, err)
	}
	if !ft.Exists {
		if err := c.missingFile(); err != nil {
			return nil, nil, &editPlanError{err: err}
		}
	}
	res, err := edit.ReplaceInFileRead(c.display, ft.Text, c.args.Diff, c.env.lastRead(c.abs))
	if err != nil {
		var sent []string
		var de *edit.DiffError
		if errors.As(err, &de) && de.Block > 0 {
			if blocks, perr := edit.ParseBlocks(c.args.Diff); perr == nil && de.Block <= len(blocks) {
				sent = blocks[de.Block-1].Search
			}
		}
		return nil, nil, c.env.planError(c.abs, ft, err, sent)
	}
	return []Change{{Path: c.abs, OldText: ft.Text, Existed: ft.Exists, NewText: &res.Text}}, res.Notes, nil
}

// missingFile decides about a file that does not exist: blocks with empty
// SEARCH parts give it its content, anything else cannot match and gets
// an error saying the file is missing rather than that SEARCH failed.
func (c *replaceInFileCall) missingFile() error {
	blocks, err := edit.ParseBlocks(c.args.Diff)
	if err != nil {
		// ReplaceInFile reports it with the path filled in.
		return nil
	}
	for _, b := range blocks {
		if len(b.Search) > 0 {
			return &edit.DiffError{Path: c.display, Msg: "the file does not exist, so the SEARCH lines cannot be found in it. Check the path; to create the file, use write_to_file, or one block with an empty SEARCH part."}
		}
	}
	return nil
}

// Describe previews the blocks applied to the current text.
func (c *replaceInFileCall) Describe(ctx context.Context) Description {
	plan := func(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
		changes, _, err := c.once.get(read)
		return changes, err
	}
	return c.env.describeSingle(ctx, "Edit", c.display, c.pathErr, plan, c.refused)
}

// Execute applies the blocks. Success shows the compact diff (or the
// creation message), followed by a note for each block that matched only
// loosely, since then the file was not quite what the model believed.
func (c *replaceInFileCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	return c.env.executeSingle(ctx, &c.once, c.abs, c.display, c.pathErr, c.refused)
}
