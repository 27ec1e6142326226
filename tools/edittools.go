package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools/edit"
	"github.com/cline-ls/cline-ls/workspace"
)

// EditOption adjusts the file-editing tools that EditTools makes.
type EditOption func(*editConfig)

type editConfig struct {
	diffLines int
}

// EditDiffLines sets how many changed lines the compact diff in an edit
// tool's result shows (diff.DefaultMaxLines unless set; n <= 0 shows them
// all). The rest of the diff is summarised in one line.
func EditDiffLines(n int) EditOption {
	return func(c *editConfig) { c.diffLines = n }
}

// EditTools returns the implementations of the four file-editing built-in
// tools (editor, replace_in_file, apply_patch, write_to_file), keyed by
// tool name, for Registry.RegisterBuiltins. Every change they make goes
// through files.Apply with a planner that recomputes the edit from the
// texts it is given, so the change lands on the editor's buffer when the
// file is open there, a stale buffer is re-planned on its latest text, and
// nothing is ever written half-way. Merge the map with the other built-in
// tools' implementations before registering:
//
//	impls := tools.EditTools(files)
//	maps.Copy(impls, readTools)
//	err := registry.RegisterBuiltins(impls)
func EditTools(files Files, opts ...EditOption) map[string]BuildFunc {
	env := &editEnv{files: files, cfg: editConfig{diffLines: diff.DefaultMaxLines}}
	for _, o := range opts {
		o(&env.cfg)
	}
	return map[string]BuildFunc{
		NameEditor:        Typed(env.buildEditor),
		NameReplaceInFile: Typed(env.buildReplaceInFile),
		NameApplyPatch:    Typed(env.buildApplyPatch),
		NameWriteToFile:   Typed(env.buildWriteToFile),
	}
}

// editEnv is what the four editing tools share: the workspace and editor
// behind Files, the options, and the count of failed edits per file.
type editEnv struct {
	files Files
	cfg   editConfig

	mu    sync.Mutex // guards fails and diverged
	fails map[string]editFails
	// diverged holds, per file, the read text on record when the model
	// edited the file after someone else had changed it: from then on that
	// text is not the model's view, until the model reads the file again
	// (the record then differs).
	diverged map[string]string
}

// editFails counts the edits of one file that failed in a row, and what
// the model had read of it when the last one failed.
type editFails struct {
	n    int
	seen string
}

// editRereadAfter is how many failed edits of one file in a row make the
// next failure tell the model to read the file again: by then its idea of
// the text is wrong, and another guess costs more than a read.
const editRereadAfter = 3

// failed counts a failed edit of abs, once per call however many of its
// steps fail (counted is the call's own flag: in the session a refusal
// of Describe is the call's result, elsewhere Execute fails alone), and
// returns msg with, from the failure after editRereadAfter on, the advice
// to read the file again and how many failed. A read of a changed text
// (what the session records as seen differs) starts the count afresh, as
// does an edit that applies.
func (e *editEnv) failed(abs string, counted *bool, msg string) string {
	if abs == "" {
		return msg
	}
	seen, _ := e.files.SeenText(abs)
	e.mu.Lock()
	if e.fails == nil {
		e.fails = map[string]editFails{}
	}
	f := e.fails[abs]
	if !*counted {
		if f.n > 0 && f.seen != seen {
			f.n = 0
		}
		f.n++
		f.seen = seen
		e.fails[abs] = f
		*counted = true
	}
	e.mu.Unlock()
	if f.n > editRereadAfter {
		msg += fmt.Sprintf("\n%d edits of %s have failed in a row: what you send does not match what the file holds. Read it again with read_files before editing it, and copy the lines from what it shows.", f.n, e.files.Display(abs))
	}
	return msg
}

// withDiagnostics ends an applied edit's result with what the editor's
// diagnostics say its changes introduced or fixed (Change.Diagnostics),
// for every edit tool alike.
func withDiagnostics(content string, changes []Change) string {
	for _, c := range changes {
		if c.Diagnostics != "" {
			content += "\n\n" + c.Diagnostics
		}
	}
	return content
}

// applied starts abs's count of failed edits afresh.
func (e *editEnv) applied(abs string) {
	e.mu.Lock()
	delete(e.fails, abs)
	e.mu.Unlock()
}

// editPlanError marks an error returned by one of our planners. Files.Apply
// hands plan errors back unchanged; wrapping them tells them apart from
// faults of the daemon, since a plan error is the model's to fix. hint,
// when set, follows the error's message: what changed in the file since
// the model read it.
type editPlanError struct {
	err  error
	hint string
}

func (e *editPlanError) Error() string { return e.err.Error() + e.hint }
func (e *editPlanError) Unwrap() error { return e.err }

// editRefusal is a refusal worded for the model: whole sentences,
// capitalised and ending in a full stop, unlike a Go error string.
type editRefusal string

func (r editRefusal) Error() string { return string(r) }

// planError is a one-file planner's error for the engine's refusal err
// of an edit of abs, whose text was ft; sent are the lines the model
// expected to find, when known. When the file changed since the model
// last read it, the message says what changed (editSinceRead).
func (e *editEnv) planError(abs string, ft FileText, err error, sent []string) error {
	pe := &editPlanError{err: err}
	if read := e.lastRead(abs); read.Known && ft.Exists && read.Text != ft.Text {
		pe.hint = editSinceRead(read.Text, ft.Text, sent)
	}
	return pe
}

// editSinceRead describes what changed between the text the model last
// read (seen) and the file's text now: every change the model's own edits
// did not make, since an applied edit updates what it has seen. It shows
// the changed lines as they read now with their numbers, what they were,
// and where the model's lines (sent) were in the text it read.
func editSinceRead(seen, now string, sent []string) string {
	hunks := diff.Lines(seen, now)
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nThe file changed since you last read it, not through your edits (the user's typing, a format-on-save or another session):\n")
	const maxHunks, maxLines = 3, 6
	for i, h := range hunks {
		if i == maxHunks {
			fmt.Fprintf(&b, "... and %d more changes.\n", len(hunks)-maxHunks)
			break
		}
		switch {
		case len(h.Added) == 0:
			fmt.Fprintf(&b, "%s of what you read %s deleted (before line %d now).\n", edit.LineRange(h.OldLine, len(h.Removed)), oneOrMany(len(h.Removed), "was", "were"), h.NewLine)
			continue
		case len(h.Removed) == 0:
			fmt.Fprintf(&b, "%s added:\n", edit.LineRange(h.NewLine, len(h.Added)))
		default:
			fmt.Fprintf(&b, "%s now %s (was %s of what you read):\n", edit.LineRange(h.NewLine, len(h.Added)), oneOrMany(len(h.Added), "reads", "read"), edit.LineRange(h.OldLine, len(h.Removed)))
		}
		for k, l := range h.Added {
			if k == maxLines {
				fmt.Fprintf(&b, "  ... (%d more lines)\n", len(h.Added)-maxLines)
				break
			}
			fmt.Fprintf(&b, "  %d | %s\n", h.NewLine+k, diff.ClipLine(l))
		}
		for k, l := range h.Removed {
			if k == maxLines {
				fmt.Fprintf(&b, "  (... %d more lines were there)\n", len(h.Removed)-maxLines)
				break
			}
			fmt.Fprintf(&b, "  (was: %q)\n", diff.ClipLine(l))
		}
	}
	if at := edit.LinesAt(seen, sent); at > 0 {
		fmt.Fprintf(&b, "Your lines are %s of the text you read.\n", edit.LineRange(at, len(sent)))
	}
	b.WriteString("Read the file again before editing it; the user's changes stay as they are.")
	return b.String()
}

func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lastRead is what the session records the model last read of abs. A
// plan that uses it still depends on the texts alone while the call waits
// for approval, since no read of the model's runs between an edit's
// Describe and its Execute (the scheduler holds later calls back).
func (e *editEnv) lastRead(abs string) edit.LastRead {
	t, ok := e.files.SeenText(abs)
	if ok {
		e.mu.Lock()
		if d, diverged := e.diverged[abs]; diverged && d == t {
			ok = false
		}
		e.mu.Unlock()
	}
	if !ok {
		return edit.LastRead{}
	}
	return edit.LastRead{Text: t, Known: true}
}

// splitSent is the lines of an editor call's old_text, for editSinceRead.
func splitSent(old string) []string {
	if old == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
}

// editReadError is a planner's error for a file it could not read.
func editReadError(display string, err error) error {
	//lint:ignore ST1005 the text is a sentence shown to the model as the tool's result
	return &editPlanError{err: fmt.Errorf("Could not read %s: %w. Nothing was changed.", display, editReadReason(err))}
}

// editReadReason drops the absolute path from a refusal the workspace
// gives for a path it resolved (a directory, say): the model named the
// file by its display path, which the message already shows.
func editReadReason(err error) error {
	var pe *workspace.PathError
	if errors.As(err, &pe) && pe.Reason != "" {
		return errors.New(pe.Reason)
	}
	return err
}

// apply runs plan through Files.Apply and sorts the outcome. A plan error
// and a change the editor or the disk refused come back as an error result
// for the model (refusal says what was left as it was, unchanged); any
// other error is the daemon's and is returned as such.
func (e *editEnv) apply(ctx context.Context, plan Planner, unchanged string) ([]Change, Result, error) {
	changes, err := e.files.Apply(ctx, func(ctx context.Context, read func(string) (FileText, error)) ([]Change, error) {
		return plan(ctx, e.textOnly(read))
	})
	if err == nil {
		return changes, Result{}, nil
	}
	var pe *editPlanError
	if errors.As(err, &pe) {
		return nil, Errorf("%s", pe.Error()), nil
	}
	var de *DeliveryError
	if errors.As(err, &de) {
		return nil, Errorf("The edit to %s was not applied: %s. %s The editor or the disk refused the change (the user may be editing the file); read it again before retrying.",
			de.Path, strings.TrimSuffix(de.Reason, "."), unchanged), nil
	}
	return nil, Result{}, err
}

// planOnce keeps the plan a call made and the texts it was made from, so
// that a call's Describe (the approval's preview) and its Execute share
// one read and match: Execute delivers the kept plan when every file it
// read still holds the same text, and plans afresh on the new text when
// one changed (the user typed while the approval waited), failing as any
// plan does if the edit no longer applies. Texts are compared whole, not
// by version or stat, so a plan is reused exactly when planning again
// would give the same changes; the comparison costs a memory compare and
// nothing when the files view hands back the same string.
//
// Only a planner whose changes follow from the texts and the call's
// arguments alone may be kept: write_to_file's depends on what the model
// has read too, and plans every time.
type planOnce struct {
	plan func(read func(string) (FileText, error)) ([]Change, []string, error)

	mu      sync.Mutex // guards the fields below
	kept    bool
	reads   []keptRead // in the order the plan read them
	changes []Change
	notes   []string
}

type keptRead struct {
	abs string
	ft  FileText
}

// get returns the kept plan if the files read hold the same texts, and
// otherwise plans on what read returns and keeps that.
func (p *planOnce) get(read func(string) (FileText, error)) ([]Change, []string, error) {
	p.mu.Lock()
	kept, reads, changes, notes := p.kept, p.reads, p.changes, p.notes
	p.mu.Unlock()
	fresh := make(map[string]FileText, len(reads))
	if kept {
		same := true
		for _, r := range reads {
			ft, err := read(r.abs)
			if err != nil || ft.Exists != r.ft.Exists || ft.Text != r.ft.Text {
				// A failed read is left to the plan, which words it.
				same = false
				if err == nil {
					fresh[r.abs] = ft
				}
				break
			}
			fresh[r.abs] = ft
		}
		if same {
			return changes, notes, nil
		}
	}
	// Plan afresh; a text just read for the comparison is not read again.
	var got []keptRead
	changes, notes, err := p.plan(func(abs string) (FileText, error) {
		ft, ok := fresh[abs]
		if !ok {
			var err error
			if ft, err = read(abs); err != nil {
				return ft, err
			}
		}
		got = append(got, keptRead{abs, ft})
		return ft, nil
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept = err == nil
	p.reads, p.changes, p.notes = got, changes, notes
	if err != nil {
		p.reads, p.changes, p.notes = nil, nil, nil
	}
	return changes, notes, err
}

// executeSingle applies the one-file edit once plans (the plan its
// Describe made, or one made anew on the latest text) and words the result:
// the compact diff, or the creation message for a new file, with a note for
// each loose match. A refused path is the call's error; refused words any
// other refusal (it counts the failure).
func (e *editEnv) executeSingle(ctx context.Context, once *planOnce, abs, display string, pathErr error, refused func(string) string) (Result, error) {
	if pathErr != nil {
		return Errorf("%s", pathErr.Error()), nil
	}
	var notes []string
	plan := func(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
		changes, n, err := once.get(read)
		notes = n
		return changes, err
	}
	changes, res, err := e.apply(ctx, plan, "The file is unchanged.")
	if err != nil || res.IsError {
		if res.IsError {
			res.Content = refused(res.Content)
		}
		return res, err
	}
	e.applied(abs)
	ch := changes[0]
	fe := e.fileEdit(ch)
	e.keepSeen(ch, !ch.Existed)
	content := fe.Diff
	if !ch.Existed {
		content = edit.CreatedMessage(display)
	}
	if len(notes) > 0 {
		content += "\nNote: " + strings.Join(notes, "\nNote: ")
	}
	return Result{Content: withDiagnostics(content, changes), Edits: []FileEdit{fe}}, nil
}

// describeSingle is the description of a one-file edit: "<verb> <path>"
// (or "Create <path>" for a new file), the first changed line, and the
// preview diff of the changes plan makes from the current text. A call
// whose path was refused or whose plan fails has no preview but a
// Refusal saying why, so that nobody is asked to approve an edit that
// cannot apply.
//
// refused, when set, words a plan's refusal (it counts the failure).
func (e *editEnv) describeSingle(ctx context.Context, verb, display string, pathErr error, plan Planner, refused func(string) string) Description {
	d := Description{Title: verb + " " + display, Kind: KindEdit, Locations: []Location{{Path: display}}}
	if pathErr != nil {
		d.Refusal = pathErr.Error()
		return d
	}
	changes, err := plan(ctx, e.describeRead(ctx))
	var pe *editPlanError
	if errors.As(err, &pe) {
		d.Refusal = pe.Error()
		if refused != nil {
			d.Refusal = refused(d.Refusal)
		}
	}
	if err != nil || len(changes) == 0 || changes[0].NewText == nil {
		return d
	}
	ch := changes[0]
	if !ch.Existed {
		d.Title = "Create " + display
	}
	d.Locations[0].Line = editFirstLine(ch.OldText, *ch.NewText)
	d.Preview, d.PreviewText = e.editPreview(changes)
	d.Changes = changes
	return d
}

// describeRead is the reader a Describe plans against: the current texts,
// without changing anything.
func (e *editEnv) describeRead(ctx context.Context) func(string) (FileText, error) {
	return e.textOnly(func(abs string) (FileText, error) { return e.files.Read(ctx, abs) })
}

// textOnly refuses files that are not text: the edit tools change text,
// and a unique match inside a binary file would corrupt it.
func (e *editEnv) textOnly(read func(string) (FileText, error)) func(string) (FileText, error) {
	return func(abs string) (FileText, error) {
		ft, err := read(abs)
		if err != nil || !ft.Exists {
			return ft, err
		}
		head := ft.Text[:min(len(ft.Text), 8192)]
		if bin, why := workspace.SniffBinary([]byte(head)); bin {
			//lint:ignore ST1005 the text is a sentence shown to the model as the tool's result
			return ft, &editPlanError{err: fmt.Errorf("%s is not a text file (%s); the edit tools only change text files. Nothing was changed.", e.files.Display(abs), why)}
		}
		return ft, nil
	}
}

// fileEdit records a delivered change for the result. The diff is
// labelled with the path the text now lives at.
func (e *editEnv) fileEdit(c Change) FileEdit {
	dst := c.Path
	if c.MoveTo != "" {
		dst = c.MoveTo
	}
	newText := ""
	if c.NewText != nil {
		newText = *c.NewText
	}
	display := e.files.Display(dst)
	d := diff.Compact(display, c.OldText, newText, diff.MaxLines(e.cfg.diffLines))
	return FileEdit{Path: display, OldText: c.OldText, NewText: newText, Diff: d.Text, Added: d.Added, Removed: d.Removed}
}

// keepSeen updates the session's record of what the model has read after
// a change the model made. The model knows the new text whole when it
// wrote all of it (whole) or when it knew the old text and made this
// change to it; otherwise its knowledge stays partial and a later
// whole-file write must still be refused. Marking every edited file as
// seen would let write_to_file replace lines the model never read.
func (e *editEnv) keepSeen(c Change, whole bool) {
	if c.NewText == nil {
		return
	}
	dst := c.Path
	if c.MoveTo != "" {
		dst = c.MoveTo
	}
	if !whole && c.Existed {
		seen, ok := e.files.SeenText(c.Path)
		if !ok || seen != c.OldText {
			if ok {
				// The model's view is now the read text, the change it
				// did not see, and its own edit: neither text on record.
				e.mu.Lock()
				if e.diverged == nil {
					e.diverged = map[string]string{}
				}
				e.diverged[c.Path] = seen
				e.mu.Unlock()
			}
			return
		}
	}
	e.files.Seen(dst, *c.NewText)
}

// editPreview is the approval preview of changes, file after file, for
// clients that apply it and for those that only show it (diff.Preview and
// diff.PreviewText, which bound them). A created file is diffed from
// /dev/null and a deleted one to it, as diff -u -N and git show them.
func (e *editEnv) editPreview(changes []Change) (patch, text string) {
	var files []diff.PreviewFile
	for _, c := range changes {
		from, to := "a/"+e.files.Display(c.Path), "b/"+e.files.Display(c.Path)
		if c.MoveTo != "" {
			to = "b/" + e.files.Display(c.MoveTo)
		}
		if !c.Existed {
			from = "/dev/null"
		}
		newText := ""
		if c.NewText == nil {
			to = "/dev/null"
		} else {
			newText = *c.NewText
		}
		if c.OldText == newText && c.Existed && c.NewText != nil && c.MoveTo == "" {
			continue
		}
		files = append(files, diff.PreviewFile{From: from, To: to, OldText: c.OldText, NewText: newText})
	}
	if len(files) == 0 {
		return "", ""
	}
	patch = diff.Preview(files)
	if len(patch) <= diff.MaxDiffBytes {
		return patch, patch
	}
	return patch, diff.PreviewText(files)
}

// editFirstLine is the 1-based line of newText where it first differs
// from oldText, for a Location. Only the common prefix is scanned, so it
// costs nothing like a diff.
func editFirstLine(oldText, newText string) int {
	n := min(len(oldText), len(newText))
	p := 0
	// Whole blocks first: string equality is vectorised, a byte loop is not.
	const block = 4096
	for p+block <= n && oldText[p:p+block] == newText[p:p+block] {
		p += block
	}
	for p < n && oldText[p] == newText[p] {
		p++
	}
	return 1 + strings.Count(newText[:p], "\n")
}

// editDisplayOr is how a path the model gave is shown: its display form
// when it resolved, else as given.
func (e *editEnv) editDisplayOr(abs, given string, err error) string {
	if err != nil {
		return given
	}
	return e.files.Display(abs)
}
