package tools

import (
	"context"

	"github.com/cline-ls/cline-ls/tools/edit"
)

// editorArgs are the editor tool's arguments (specs/editor.json).
type editorArgs struct {
	Path       string `json:"path"`
	OldText    string `json:"old_text"`
	NewText    string `json:"new_text"`
	InsertLine *int   `json:"insert_line"`
}

// buildEditor makes an editor call. A path the workspace refuses is not a
// build error: the call still describes itself and fails when run, with
// the refusal as its result.
func (e *editEnv) buildEditor(a editorArgs) (Invocation, error) {
	abs, err := e.files.Resolve(a.Path)
	c := &editorCall{env: e, args: a, abs: abs, pathErr: err, display: e.editDisplayOr(abs, a.Path, err)}
	c.once.plan = c.plan
	return c, nil
}

// editorCall is one validated editor call (docs/DESIGN.md §3): insert before a
// line, create a missing file, or replace the one occurrence of old_text.
type editorCall struct {
	env     *editEnv
	args    editorArgs
	abs     string
	display string
	pathErr error
	once    planOnce // the plan Describe made, reused by Execute
	counted bool     // whether the call's failure has been counted
}

// refused words a refusal of the call, counting it against the file.
func (c *editorCall) refused(msg string) string { return c.env.failed(c.abs, &c.counted, msg) }

// plan computes the edit from the file's text as read now, with the note
// of a loose match. It runs again (through once) on the latest text when
// the file changed since the preview or the editor's buffer moved on, so
// the unique match is found afresh rather than applied at a stale offset.
func (c *editorCall) plan(read func(string) (FileText, error)) ([]Change, []string, error) {
	ft, err := read(c.abs)
	if err != nil {
		return nil, nil, editReadError(c.display, err)
	}
	res, err := edit.EditFile(c.display, ft.Text, ft.Exists, edit.EditorRequest{
		OldText: c.args.OldText, NewText: c.args.NewText, InsertLine: c.args.InsertLine,
		Read: c.env.lastRead(c.abs),
	})
	if err != nil {
		return nil, nil, c.env.planError(c.abs, ft, err, splitSent(c.args.OldText))
	}
	var notes []string
	if res.Note != "" {
		notes = []string{res.Note}
	}
	return []Change{{Path: c.abs, OldText: ft.Text, Existed: ft.Exists, NewText: &res.Text}}, notes, nil
}

// Describe previews the edit against the current text. A call that will
// fail has no preview; Execute then says why.
func (c *editorCall) Describe(ctx context.Context) Description {
	return c.env.describeSingle(ctx, "Edit", c.display, c.pathErr, c.kept, c.refused)
}

// kept is the call's planner: the plan Describe made while the file holds
// the same text, else a new one.
func (c *editorCall) kept(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
	changes, _, err := c.once.get(read)
	return changes, err
}

// Execute applies the edit. Success shows the compact diff, or the
// creation message for a new file, and the note of a loose match.
func (c *editorCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	return c.env.executeSingle(ctx, &c.once, c.abs, c.display, c.pathErr, c.refused)
}
