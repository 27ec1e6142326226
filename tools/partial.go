package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/cline-ls/cline-ls/diff"
)

// Narrow cuts an edit call down to what the user kept of it: the user
// took some of its hunks (or changed them) and approved that much, so
// the one file the edit changes gets text instead of the proposal. The
// call it returns applies like the edit it replaces (through Files.Apply,
// the checkpoints and cline/diff alike) and tells the model which part
// landed. It fails, saying why, for a call that is not an edit of one
// existing file (several files, a move, a delete, a new file, a tool
// that edits no file).
func Narrow(ctx context.Context, inv Invocation, text string) (Invocation, error) {
	var env *editEnv
	switch c := inv.(type) {
	case *editorCall:
		env = c.env
	case *replaceInFileCall:
		env = c.env
	case *writeToFileCall:
		env = c.env
	case *applyPatchCall:
		env = c.env
	default:
		return nil, errors.New("only an edit can be taken in part")
	}
	d := inv.Describe(ctx)
	if d.Refusal != "" {
		return nil, errors.New(d.Refusal)
	}
	if len(d.Changes) != 1 {
		return nil, fmt.Errorf("the edit changes %d files; only an edit of one file can be taken in part", len(d.Changes))
	}
	ch := d.Changes[0]
	if !ch.Existed || ch.NewText == nil || ch.MoveTo != "" {
		return nil, errors.New("only an edit of an existing file that stays where it is can be taken in part")
	}
	if len(text) > MaxFileBytes {
		return nil, fmt.Errorf("the text taken is over %d bytes", MaxFileBytes)
	}
	return &partialCall{env: env, abs: ch.Path, display: env.files.Display(ch.Path), text: text, title: d.Title}, nil
}

// partialCall writes the text the user kept of an edit to its file.
type partialCall struct {
	env          *editEnv
	abs, display string
	text, title  string
}

func (c *partialCall) plan(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
	ft, err := read(c.abs)
	if err != nil {
		return nil, err
	}
	if !ft.Exists {
		return nil, &editPlanError{err: errors.New(c.display + " no longer exists; the part of the edit the user took was not applied.")}
	}
	text := c.text
	return []Change{{Path: c.abs, OldText: ft.Text, Existed: true, NewText: &text}}, nil
}

// Describe is the edit's own title with the preview of the part taken.
func (c *partialCall) Describe(ctx context.Context) Description {
	d := c.env.describeSingle(ctx, "Edit", c.display, nil, c.plan, nil)
	d.Title = c.title
	return d
}

// Execute applies the part taken. The model is told that only part of
// its edit landed and what the file now holds against what it held, so
// that it neither applies the rest again nor takes the whole as done.
func (c *partialCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	changes, res, err := c.env.apply(ctx, c.plan, "The file is unchanged.")
	if err != nil || res.IsError {
		return res, err
	}
	c.env.applied(c.abs)
	ch := changes[0]
	fe := c.env.fileEdit(ch)
	c.env.keepSeen(ch, false)
	content := "The user applied part of this edit, hunk by hunk, and left the rest out (do not apply it again unless asked). " +
		c.display + " now differs from before your edit by exactly this:\n" + diff.Unified(c.display, ch.OldText, *ch.NewText, 1)
	if ch.OldText == *ch.NewText {
		content = "The user took none of this edit's hunks; " + c.display + " is unchanged."
	}
	return Result{Content: withDiagnostics(content, changes), Edits: []FileEdit{fe}}, nil
}
