package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools/edit"
)

// applyPatchArgs are apply_patch's arguments (specs/apply_patch.json).
type applyPatchArgs struct {
	Input string `json:"input"`
}

// buildApplyPatch parses the patch and resolves every path in it once.
// A patch that does not parse, or names a path the workspace refuses, is
// not a build error: the call fails when run, with the engine's message.
//
// Each path is rewritten to its display form, which is what the engine
// keys files by and names in its messages: two spellings of one file
// ("a.go", "./a.go", its absolute path) become one, and errors show the
// path the way the model is told to write it.
func (e *editEnv) buildApplyPatch(a applyPatchArgs) (Invocation, error) {
	c := &applyPatchCall{env: e, abs: map[string]string{}}
	p, err := edit.ParsePatch(a.Input)
	if err != nil {
		c.err = err
		return c, nil
	}
	resolve := func(op *edit.FileOp, given string) (string, bool) {
		abs, err := e.files.Resolve(given)
		if err != nil {
			c.err = &edit.PatchError{Op: op.Kind, Path: given, Line: op.Line, Msg: err.Error() + "."}
			return "", false
		}
		d := e.files.Display(abs)
		c.abs[path.Clean(d)] = abs
		return d, true
	}
	for i := range p.Ops {
		op := &p.Ops[i]
		d, ok := resolve(op, op.Path)
		if !ok {
			return c, nil
		}
		op.Path = d
		if op.MoveTo != "" {
			if op.MoveTo, ok = resolve(op, op.MoveTo); !ok {
				return c, nil
			}
		}
	}
	c.patch = p
	return c, nil
}

// applyPatchCall is one validated apply_patch call. The whole patch is
// planned in memory against the current texts and delivered in one
// Files.Apply, so it changes every file it names or none (docs/DESIGN.md §3).
type applyPatchCall struct {
	env   *editEnv
	patch *edit.Patch
	// err is why the patch cannot apply at all: it did not parse, or
	// named a refused path.
	err error
	// abs maps each cleaned display path of the patch to its absolute path.
	abs map[string]string
	// lastErr is the engine's error of the latest plan, which names the
	// file a failed hunk belongs to.
	lastErr error
	counted bool // whether the call's failure has been counted
}

// refused words a refusal of the patch: a hunk that found no place
// counts against its file.
func (c *applyPatchCall) refused(msg string) string {
	var pe *edit.PatchError
	if errors.As(c.lastErr, &pe) && pe.Hunk > 0 {
		return c.env.failed(c.abs[path.Clean(pe.Path)], &c.counted, msg)
	}
	return msg
}

// editPatchFS shows a planner's reader to the patch engine as an edit.FS.
type editPatchFS struct {
	c    *applyPatchCall
	read func(string) (FileText, error)
}

// ReadFile returns the current text of the file the patch calls p.
func (f editPatchFS) ReadFile(p string) (string, error) {
	abs, ok := f.c.abs[path.Clean(p)]
	if !ok {
		// Every path was resolved at build time; this cannot happen
		// unless the engine invents one.
		return "", fmt.Errorf("path %s was not resolved", p)
	}
	ft, err := f.read(abs)
	if err != nil {
		return "", editReadReason(err)
	}
	if !ft.Exists {
		return "", &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	return ft.Text, nil
}

// LastRead is what the model last read of the file the patch calls p,
// which holds a hunk's loose match to the place the model read.
func (f editPatchFS) LastRead(p string) edit.LastRead {
	abs, ok := f.c.abs[path.Clean(p)]
	if !ok {
		return edit.LastRead{}
	}
	return f.c.env.lastRead(abs)
}

// hunkError is the planner's error for err; a hunk that found no place
// in a file that changed since the model read it says what changed
// (planError), as editor and replace_in_file do.
func (c *applyPatchCall) hunkError(read func(string) (FileText, error), err error) error {
	var pe *edit.PatchError
	if !errors.As(err, &pe) || pe.Hunk == 0 {
		return &editPlanError{err: err}
	}
	abs, ok := c.abs[path.Clean(pe.Path)]
	if !ok {
		return &editPlanError{err: err}
	}
	ft, rerr := read(abs)
	if rerr != nil {
		return &editPlanError{err: err}
	}
	var sent []string
	for _, op := range c.patch.Ops {
		if op.Path == pe.Path && op.Kind == pe.Op && pe.Hunk <= len(op.Hunks) {
			for _, l := range op.Hunks[pe.Hunk-1].Lines {
				if l.Op != '+' {
					sent = append(sent, l.Text)
				}
			}
			break
		}
	}
	return c.env.planError(abs, ft, err, sent)
}

// plan plans the patch against the texts read returns and turns its net
// effect into Changes: one per file, with an update that moved a file to
// a new name kept as one moving change so its file mode (and any open
// buffer's identity) can follow it.
func (c *applyPatchCall) plan(read func(string) (FileText, error)) ([]Change, []string, error) {
	if c.err != nil {
		return nil, nil, &editPlanError{err: c.err}
	}
	pl, err := c.patch.Plan(editPatchFS{c: c, read: read})
	c.lastErr = err
	if err != nil {
		return nil, nil, c.hunkError(read, err)
	}
	index := make(map[string]int, len(pl.Files))
	for i, f := range pl.Files {
		index[f.Path] = i
	}
	moveTo := map[int]int{} // source file index → target file index
	taken := make([]bool, len(pl.Files))
	for _, ch := range pl.Changes {
		if ch.Kind != edit.OpUpdate || ch.MoveTo == "" {
			continue
		}
		si, ok1 := index[path.Clean(ch.Path)]
		di, ok2 := index[path.Clean(ch.MoveTo)]
		if !ok1 || !ok2 || taken[si] || taken[di] {
			continue
		}
		src, dst := pl.Files[si], pl.Files[di]
		// Only a plain move of an existing file to a new name is one
		// change; chains and overwrites are left as their net effect.
		if src.Existed && !src.Exists && src.OldText == ch.OldText && !dst.Existed && dst.Exists {
			moveTo[si] = di
			taken[si], taken[di] = true, true
		}
	}
	var changes []Change
	for i, f := range pl.Files {
		if di, ok := moveTo[i]; ok {
			text := pl.Files[di].NewText
			changes = append(changes, Change{Path: c.abs[f.Path], OldText: f.OldText, Existed: true, NewText: &text, MoveTo: c.abs[pl.Files[di].Path]})
			continue
		}
		if taken[i] {
			continue
		}
		ch := Change{Path: c.abs[f.Path], OldText: f.OldText, Existed: f.Existed}
		if f.Exists {
			text := f.NewText
			ch.NewText = &text
		}
		changes = append(changes, ch)
	}
	return changes, pl.Notes, nil
}

// Describe previews every file's change as one multi-file unified diff.
func (c *applyPatchCall) Describe(ctx context.Context) Description {
	d := Description{Title: "Apply patch", Kind: KindEdit}
	if c.patch != nil {
		var names []string
		for _, op := range c.patch.Ops {
			names = append(names, op.Path)
		}
		d.Title = "Apply patch to " + editNameList(names)
	}
	if c.err != nil {
		d.Refusal = c.err.Error()
		return d
	}
	changes, _, err := c.plan(c.env.describeRead(ctx))
	if err != nil {
		var pe *editPlanError
		if errors.As(err, &pe) {
			d.Refusal = c.refused(pe.Error())
		}
		for _, op := range c.patch.Ops {
			d.Locations = append(d.Locations, Location{Path: op.Path})
		}
		return d
	}
	deletes, moves := 0, 0
	for _, ch := range changes {
		loc := Location{Path: c.env.files.Display(ch.Path)}
		switch {
		case ch.NewText == nil:
			deletes++
		case ch.MoveTo != "":
			loc.Path = c.env.files.Display(ch.MoveTo)
			if *ch.NewText == ch.OldText {
				moves++
			} else {
				loc.Line = editFirstLine(ch.OldText, *ch.NewText)
			}
		default:
			loc.Line = editFirstLine(ch.OldText, *ch.NewText)
		}
		d.Locations = append(d.Locations, loc)
	}
	switch n := len(changes); {
	case n > 0 && deletes == n:
		d.Kind = KindDelete
	case n > 0 && moves == n:
		d.Kind = KindMove
	}
	d.Preview, d.PreviewText = c.env.editPreview(changes)
	d.Changes = changes
	return d
}

// editNameList joins up to three names and counts the rest.
func editNameList(names []string) string {
	const shown = 3
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// Execute applies the patch. Success lists each file with A (added), M
// (modified or moved) or D (deleted), in the summary form Codex-trained
// models know, then the compact diff of each modified file; added and
// deleted files are not repeated back line by line.
func (c *applyPatchCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if c.err != nil {
		return Errorf("%s", c.err.Error()), nil
	}
	var notes []string
	plan := func(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
		changes, n, err := c.plan(read)
		notes = n
		return changes, err
	}
	changes, res, err := c.env.apply(ctx, plan, "No files were changed.")
	if err != nil || res.IsError {
		if res.IsError {
			res.Content = c.refused(res.Content)
		}
		return res, err
	}
	for _, ch := range changes {
		c.env.applied(ch.Path)
	}
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	var diffs []string
	edits := make([]FileEdit, 0, len(changes))
	for _, ch := range changes {
		fe := c.env.fileEdit(ch)
		edits = append(edits, fe)
		c.env.keepSeen(ch, !ch.Existed)
		switch {
		case ch.NewText == nil:
			fmt.Fprintf(&b, "D %s\n", fe.Path)
		case !ch.Existed:
			fmt.Fprintf(&b, "A %s\n", fe.Path)
		case ch.MoveTo != "":
			fmt.Fprintf(&b, "M %s -> %s\n", c.env.files.Display(ch.Path), fe.Path)
		default:
			fmt.Fprintf(&b, "M %s\n", fe.Path)
		}
		if ch.NewText != nil && ch.Existed && fe.Added+fe.Removed > 0 {
			diffs = append(diffs, fe.Diff)
		}
	}
	// Each diff is bounded (diff.Compact); so are they together, or a patch
	// of many files would fill the model's context with them.
	used := 0
	for i, d := range diffs {
		if !diff.Fits(used, len(d)) {
			b.WriteString("\n" + diff.LeftOut(len(diffs)-i))
			break
		}
		used += len(d)
		b.WriteString("\n")
		b.WriteString(d)
		b.WriteString("\n")
	}
	for _, n := range notes {
		b.WriteString("Note: ")
		b.WriteString(n)
		b.WriteString("\n")
	}
	return Result{Content: withDiagnostics(strings.TrimSuffix(b.String(), "\n"), changes), Edits: edits}, nil
}
