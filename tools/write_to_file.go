package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/tools/edit"
)

// writeToFileArgs are write_to_file's arguments (specs/write_to_file.json).
type writeToFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// buildWriteToFile makes a write_to_file call; a refused path is reported
// when the call runs.
func (e *editEnv) buildWriteToFile(a writeToFileArgs) (Invocation, error) {
	abs, err := e.files.Resolve(a.Path)
	return &writeToFileCall{env: e, args: a, abs: abs, pathErr: err, display: e.editDisplayOr(abs, a.Path, err)}, nil
}

// writeToFileCall is one validated write_to_file call: it creates a file,
// or replaces one whose current text the model has read in this session.
// A whole-file write cannot merge, so it is the one edit that must never
// run against text the model has not seen (docs/DESIGN.md §3).
type writeToFileCall struct {
	env     *editEnv
	args    writeToFileArgs
	abs     string
	display string
	pathErr error
}

// plan checks, on the text as read now, that the write loses nothing. On
// a re-plan after the user typed in the buffer the check fails, as it
// should: the model has not seen what the user typed.
func (c *writeToFileCall) plan(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
	ft, err := read(c.abs)
	if err != nil {
		return nil, editReadError(c.display, err)
	}
	if !ft.Exists {
		text := c.args.Content
		return []Change{{Path: c.abs, NewText: &text}}, nil
	}
	seen, ok := c.env.files.SeenText(c.abs)
	if !ok {
		//lint:ignore ST1005 the text is a sentence shown to the model as the tool's result
		return nil, &editPlanError{err: fmt.Errorf("write_to_file refused: %s already exists and you have not read it in this session, so overwriting it could destroy text you have not seen. Read it first, or change part of it with an edit tool. The file was not changed.", c.display)}
	}
	if seen != ft.Text {
		//lint:ignore ST1005 the text is a sentence shown to the model as the tool's result
		return nil, &editPlanError{err: fmt.Errorf("write_to_file refused: %s has changed since you last read it (the user or another tool changed it), and overwriting it would lose those changes. Read it again, then write or edit it. The file was not changed.", c.display)}
	}
	if ph, ok := edit.Placeholder(c.args.Content, ft.Text); ok {
		return nil, &editPlanError{err: editRefusal(fmt.Sprintf("write_to_file refused: the content contains the placeholder line %q, which stands for code left out; writing it would delete the lines it stands for from %s. Send the whole content, every line of it, or change part of the file with an edit tool. The file was not changed.", ph, c.display))}
	}
	text := editKeepFileForm(ft.Text, c.args.Content)
	return []Change{{Path: c.abs, OldText: ft.Text, Existed: true, NewText: &text}}, nil
}

// editKeepFileForm gives content the line endings and byte order mark of
// the file it replaces: a model writes LF and no BOM whatever it read,
// and turning a CRLF file into an LF one would rewrite every line in the
// user's version control.
func editKeepFileForm(old, content string) string {
	const bom = "\uFEFF"
	crlf := strings.Count(old, "\r\n")
	if lf := strings.Count(old, "\n") - crlf; crlf > lf {
		content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\n", "\r\n")
	}
	if strings.HasPrefix(old, bom) && !strings.HasPrefix(content, bom) {
		content = bom + content
	}
	return content
}

// Describe previews the write against the current text.
func (c *writeToFileCall) Describe(ctx context.Context) Description {
	return c.env.describeSingle(ctx, "Write", c.display, c.pathErr, c.plan, nil)
}

// Execute writes the file. Afterwards the model knows the file's whole
// text, so a further write_to_file may replace it.
func (c *writeToFileCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if c.pathErr != nil {
		return Errorf("%s", c.pathErr.Error()), nil
	}
	changes, res, err := c.env.apply(ctx, c.plan, "The file is unchanged.")
	if err != nil || res.IsError {
		return res, err
	}
	ch := changes[0]
	fe := c.env.fileEdit(ch)
	c.env.keepSeen(ch, true)
	content := fe.Diff
	switch {
	case !ch.Existed:
		content = edit.CreatedMessage(c.display)
	case fe.Added+fe.Removed == 0:
		content = fmt.Sprintf("No change: %s already held this content.", c.display)
	}
	return Result{Content: withDiagnostics(content, changes), Edits: []FileEdit{fe}}, nil
}
