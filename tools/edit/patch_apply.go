package edit

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// FS is what a patch is planned against: the current text of files,
// from the editor's buffers or the disk, as the caller decides.
type FS interface {
	// ReadFile returns the text of the file at path, a slash-separated
	// path exactly as the patch wrote it. For a missing file the error
	// must satisfy errors.Is(err, fs.ErrNotExist); any other error (a
	// directory, a path outside the workspace) fails the patch and its
	// text is shown to the model.
	ReadFile(path string) (string, error)
}

// LastReadFS is an FS that also knows what the model last read of a
// file, which holds a hunk's loose match to the place the model read
// (sinceRead).
type LastReadFS interface {
	FS
	LastRead(path string) LastRead
}

// Writer delivers a plan's changes; see Apply.
type Writer interface {
	// WriteFile creates or replaces the file at path, creating its
	// parent directories.
	WriteFile(path, text string) error
	// Remove deletes the file at path.
	Remove(path string) error
}

// Change is one file operation of a planned patch, in patch order, for
// the model-facing summary and the approval request.
type Change struct {
	Kind OpKind
	// Path is the file as the patch names it; MoveTo is the new name of
	// an update that moves it, or empty.
	Path   string
	MoveTo string
	// OldText is Path's text before this operation ("" for a file that
	// did not exist); NewText is the text written (to MoveTo when set),
	// "" for a delete.
	OldText string
	NewText string
	// Overwrote is set when an add or a move replaced a file that
	// existed; the caller may want to ask before allowing that.
	Overwrote bool
}

// FileChange is the net effect of a patch on one file.
type FileChange struct {
	// Path is the file's path, cleaned (path.Clean).
	Path string
	// Existed and OldText describe the file before the patch.
	Existed bool
	OldText string
	// Exists and NewText describe it after.
	Exists  bool
	NewText string
}

// Plan is everything a patch would do, computed without changing
// anything.
type Plan struct {
	// Changes lists the patch's operations in order.
	Changes []Change
	// Files lists the net effect per file, in the order the patch first
	// touched them; files the patch leaves as they were are left out.
	Files []FileChange
	// Notes has one sentence per hunk that matched only loosely (which
	// tolerance placed it), for the wrapper to pass on.
	Notes []string
}

// PlanPatch parses input and plans it against fsys; see (*Patch).Plan.
func PlanPatch(input string, fsys FS) (*Plan, error) {
	p, err := ParsePatch(input)
	if err != nil {
		return nil, err
	}
	return p.Plan(fsys)
}

// Plan computes every file's new content in memory. It fails, with a
// *PatchError naming the file and hunk, unless every operation succeeds:
// a patch applies all or nothing. Operations see the effect of those
// before them, so a patch may add a file and then update it.
//
// An update's hunks are found in file order, each after the previous
// one. A hunk's "@@" lines are found first and its lines searched from
// there. Lines are compared exactly, and the first place wins (unless the
// lines were at one place in what the model last read and occur several
// times now: resolveCopies); failing that, loosely (placeLoose: trailing
// whitespace, indentation, then Unicode punctuation normalised), where
// only the one place that fits will do and '+' lines get the file's
// indentation. A '+' line that is a placeholder is refused unless the
// file has it there. A hunk with nothing to match (only '+' lines) goes
// right after its "@@" line, or at the end of the file when it has none.
// Context lines keep the file's own text even when they matched loosely;
// only '-' lines are removed.
func (p *Patch) Plan(fsys FS) (*Plan, error) {
	pl := &planner{fsys: fsys, files: map[string]*fileState{}}
	plan := &Plan{}
	for i := range p.Ops {
		c, err := pl.do(&p.Ops[i], &plan.Notes)
		if err != nil {
			return nil, err
		}
		plan.Changes = append(plan.Changes, c)
	}
	for _, k := range pl.order {
		st := pl.files[k]
		if st.existed == st.exists && st.old == st.text {
			continue
		}
		plan.Files = append(plan.Files, FileChange{
			Path: k, Existed: st.existed, OldText: st.old, Exists: st.exists, NewText: st.text,
		})
	}
	return plan, nil
}

// Apply writes a plan through w: every new or changed file first, then the
// removals, so that a move never loses its text even if writing stops
// half-way. Whether the writes are atomic as a set is up to w; Apply stops
// at the first error and says which files it had already changed.
func Apply(plan *Plan, w Writer) error {
	var done []string
	fail := func(what, p string, err error) error {
		if len(done) == 0 {
			return fmt.Errorf("apply_patch: %s %s: %w", what, p, err)
		}
		return fmt.Errorf("apply_patch: %s %s: %w (already changed: %s)", what, p, err, strings.Join(done, ", "))
	}
	for _, f := range plan.Files {
		if f.Exists {
			if err := w.WriteFile(f.Path, f.NewText); err != nil {
				return fail("writing", f.Path, err)
			}
			done = append(done, f.Path)
		}
	}
	for _, f := range plan.Files {
		if !f.Exists && f.Existed {
			if err := w.Remove(f.Path); err != nil {
				return fail("removing", f.Path, err)
			}
			done = append(done, f.Path)
		}
	}
	return nil
}

type fileState struct {
	existed bool
	old     string
	exists  bool
	text    string
}

// planner is the in-memory view of the files while a patch is planned:
// what fsys holds, overlaid with what earlier operations did.
type planner struct {
	fsys  FS
	files map[string]*fileState
	order []string
}

func opError(op *FileOp, format string, args ...any) *PatchError {
	return &PatchError{Op: op.Kind, Path: op.Path, Line: op.Line, Msg: fmt.Sprintf(format, args...)}
}

// load returns the state of the file at p, reading it on first use.
func (pl *planner) load(op *FileOp, p string) (string, *fileState, error) {
	k := path.Clean(p)
	if st := pl.files[k]; st != nil {
		return k, st, nil
	}
	st := &fileState{}
	text, err := pl.fsys.ReadFile(p)
	switch {
	case err == nil:
		st.existed, st.old = true, text
	case errors.Is(err, fs.ErrNotExist):
	default:
		// The FS's *fs.PathError repeats the path the message names.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", nil, opError(op, "cannot read %s: %v.", p, err)
	}
	st.exists, st.text = st.existed, st.old
	pl.files[k] = st
	pl.order = append(pl.order, k)
	return k, st, nil
}

// checkCreate refuses to create k where the patch has already put a file
// at one of its parent directories, or files below k itself.
func (pl *planner) checkCreate(op *FileOp, k string) error {
	for other, st := range pl.files {
		if !st.exists || other == k {
			continue
		}
		if strings.HasPrefix(k, other+"/") {
			return opError(op, "cannot create %s: %s is a file.", k, other)
		}
		if strings.HasPrefix(other, k+"/") {
			return opError(op, "cannot create %s: it is a directory holding %s.", k, other)
		}
	}
	return nil
}

func (pl *planner) do(op *FileOp, notes *[]string) (Change, error) {
	c := Change{Kind: op.Kind, Path: op.Path, MoveTo: op.MoveTo}
	k, st, err := pl.load(op, op.Path)
	if err != nil {
		return c, err
	}
	switch op.Kind {
	case OpAdd:
		if !st.exists {
			if err := pl.checkCreate(op, k); err != nil {
				return c, err
			}
		} else if ph, ok := Placeholder(op.Content, st.text); ok {
			return c, opError(op, "%s", placeholderMessage("the new content, which would replace the existing file whole,", ph))
		}
		c.OldText, c.NewText, c.Overwrote = st.text, op.Content, st.exists
		st.exists, st.text = true, op.Content
		return c, nil
	case OpDelete:
		if !st.exists {
			return c, opError(op, "the file does not exist%s, so it cannot be deleted.", deletedNote(st))
		}
		c.OldText = st.text
		st.exists, st.text = false, ""
		return c, nil
	}
	if !st.exists {
		return c, opError(op, "the file does not exist%s. To create it, use '*** Add File: %s' with '+' lines.", deletedNote(st), op.Path)
	}
	var read LastRead
	if rfs, ok := pl.fsys.(LastReadFS); ok && st.text == st.old && st.existed {
		// Only a file no earlier operation of the patch changed compares
		// with what the model read.
		read = rfs.LastRead(op.Path)
	}
	text, err := applyHunks(st.text, op, notes, read)
	if err != nil {
		return c, err
	}
	c.OldText, c.NewText = st.text, text
	if op.MoveTo == "" {
		st.text = text
		return c, nil
	}
	dk, dst, err := pl.load(op, op.MoveTo)
	if err != nil {
		return c, err
	}
	if dk == k {
		c.MoveTo = ""
		st.text = text
		return c, nil
	}
	if !dst.exists {
		if err := pl.checkCreate(op, dk); err != nil {
			return c, err
		}
	}
	c.Overwrote = dst.exists
	st.exists, st.text = false, ""
	dst.exists, dst.text = true, text
	return c, nil
}

func deletedNote(st *fileState) string {
	if st.existed {
		return " (an earlier part of this patch deleted or moved it)"
	}
	return ""
}

// replacement is one hunk's effect: lines [start, end) of the file give
// way to out.
type replacement struct {
	start, end int
	out        []line
}

// applyHunks returns the text of op's file after its hunks, adding a note
// for each hunk that matched only loosely.
func applyHunks(text string, op *FileOp, notes *[]string, read LastRead) (string, error) {
	d := parseDocument(text)
	m := newMatcher(d.lines)
	var reps []replacement
	cursor := 0
	for hi := range op.Hunks {
		h := &op.Hunks[hi]
		fail := func(format string, args ...any) error {
			return &PatchError{Op: op.Kind, Path: op.Path, Hunk: hi + 1, Hunks: len(op.Hunks), Line: h.Line, Msg: fmt.Sprintf(format, args...)}
		}
		from, anchorAt := cursor, -1
		for _, a := range h.Anchors {
			i := seekAnchor(m, a, from)
			if i < 0 {
				msg := fmt.Sprintf("could not find the '@@' line %q at or after line %d.", a, from+1)
				if j := seekAnchor(m, a, 0); j >= 0 {
					msg += fmt.Sprintf(" It occurs at line %d, before the end of the previous hunk; hunks must follow the file's order.", j+1)
				}
				return "", fail("%s", msg)
			}
			anchorAt, from = i, i+1
		}
		if anchorAt >= 0 {
			// Models often repeat the "@@" line as the first context line.
			from = anchorAt
		}
		lines := h.Lines
		old := oldSide(lines)
		if len(old) == 0 {
			pos := len(d.lines)
			if anchorAt >= 0 && !h.EOF {
				pos = anchorAt + 1
			}
			out, err := newSide(lines, d.lines, placement{at: pos})
			if err != nil {
				return "", fail("%s", err)
			}
			reps = append(reps, replacement{pos, pos, out})
			cursor = pos
			continue
		}
		p, amb := seekHunk(m, old, from, h.EOF, lines)
		if p.at >= 0 && p.level == exact && !p.numbers && read.Known {
			// The first place after the previous hunk stands, unless the
			// lines were unique in what the model read (resolveCopies).
			if places := m.exactPlaces(old, from, nil); len(places) > 1 {
				at, msg := m.resolveCopies(read, old, places, nil)
				if msg != "" {
					return "", fail("%s", msg)
				}
				if at >= 0 {
					p.at = at
				}
			}
		}
		if p.at < 0 && amb == nil && h.trailingBare > 0 && h.trailingBare < len(lines) {
			lines = lines[:len(lines)-h.trailingBare]
			if old = oldSide(lines); len(old) > 0 {
				p, amb = seekHunk(m, old, from, h.EOF, lines)
			}
		}
		if amb != nil {
			return "", fail("%s", amb.message())
		}
		if msg := sinceRead(read, d.lines, p); msg != "" {
			return "", fail("%s", msg)
		}
		if p.at < 0 {
			if i := firstPlaceholder(oldSide(h.Lines), nil); i >= 0 {
				var b strings.Builder
				b.WriteString(placeholderMessage("the hunk's context and '-' lines", oldSide(h.Lines)[i]) + "\n")
				writeNearest(&b, m, oldSide(h.Lines))
				return "", fail("%s", strings.TrimSuffix(b.String(), "\n"))
			}
			return "", fail("%s", hunkNotFound(m, oldSide(h.Lines), from, h.EOF))
		}
		out, err := newSide(lines, d.lines, p)
		if err != nil {
			return "", fail("%s", err)
		}
		if how := p.how(); how != "" {
			*notes = append(*notes, fmt.Sprintf("%s %s, hunk %d: matched %s only %s.", op.Kind, op.Path, hi+1, lineRange(p.at, len(old)), how))
		}
		reps = append(reps, replacement{p.at, p.at + len(old), out})
		cursor = p.at + len(old)
	}
	out := make([]line, 0, len(d.lines)+8)
	prev := 0
	for _, r := range reps {
		out = append(out, d.lines[prev:r.start]...)
		out = append(out, r.out...)
		prev = r.end
	}
	out = append(out, d.lines[prev:]...)
	return d.render(out), nil
}

// oldSide is what a hunk expects in the file: its context and '-' lines.
func oldSide(lines []HunkLine) []string {
	var out []string
	for _, l := range lines {
		if l.Op != '+' {
			out = append(out, l.Text)
		}
	}
	return out
}

// newSide is what a hunk placed at p becomes: context lines as the file
// has them, '+' lines as new lines, in the file's indentation when the
// hunk matched with its indentation shifted. A '+' line that is a
// placeholder, with no such line in the file there, is refused.
func newSide(lines []HunkLine, file []line, p placement) ([]line, error) {
	var added, matched []string
	for _, l := range lines {
		if l.Op == '+' {
			added = append(added, l.Text)
		}
	}
	if n := len(oldSide(lines)); n > 0 {
		matched = fileTexts(file[p.at : p.at+n])
	}
	if p.numbers {
		added = stripNewNumbers(added)
	}
	if i := firstPlaceholder(added, matched); i >= 0 {
		if len(matched) == 0 {
			return nil, errors.New(placeholderMessage("the hunk's '+' lines", added[i]))
		}
		return nil, fmt.Errorf("the hunk matches %s, but %s", lineRange(p.at, len(matched)), placeholderMessage("its '+' lines", added[i]))
	}
	added, err := reindent(p.indent, added)
	if err != nil {
		return nil, fmt.Errorf("the hunk %w", err)
	}
	var out []line
	j, k := p.at, 0
	for _, l := range lines {
		switch l.Op {
		case ' ':
			out = append(out, file[j])
			j++
		case '-':
			j++
		case '+':
			out = append(out, line{text: added[k], fresh: true})
			k++
		}
	}
	return out, nil
}

// seekHunk finds old in the file from line from on: exactly, the first
// place (the patch grammar's own rule, hunks following the file's order),
// else loosely and only where it is the one place that fits
// (placeLoose). An end-of-file hunk must end the file, blank lines aside.
func seekHunk(m *matcher, old []string, from int, eof bool, lines []HunkLine) (placement, *ambiguity) {
	var ok func(int) bool
	if eof {
		ok = func(i int) bool {
			for _, l := range m.lines[i+len(old):] {
				if strings.TrimSpace(l.text) != "" {
					return false
				}
			}
			return true
		}
	}
	if i := m.find(old, from, exact, ok); i >= 0 {
		return placement{at: i, pattern: old}, nil
	}
	var added []string
	for _, l := range lines {
		if l.Op == '+' {
			added = append(added, l.Text)
		}
	}
	return m.placeLoose(old, from, ok, patchLooseLevels, added)
}

// seekAnchor finds an "@@" line: as a whole line at the usual levels, and
// failing that as part of a line, since "@@" lines often quote only a
// signature. An anchor decides where the hunk's own lines are searched
// from, so a wrong one can send a hunk to a look-alike after it: a part
// of a line counts only where it neither begins nor ends inside a word.
func seekAnchor(m *matcher, a string, from int) int {
	pattern := []string{a}
	for l := exact; l < numLevels; l++ {
		if i := m.find(pattern, from, l, nil); i >= 0 {
			return i
		}
	}
	want := key(a, punct)
	if want == "" {
		return -1
	}
	ks := m.keysAt(punct)
	for i := max(from, 0); i < len(ks); i++ {
		if containsWord(ks[i], want) {
			return i
		}
	}
	return -1
}

// containsWord reports whether want occurs in s without beginning or
// ending inside a word of s (insideWord).
func containsWord(s, want string) bool {
	for off := 0; off <= len(s); {
		j := strings.Index(s[off:], want)
		if j < 0 {
			return false
		}
		j += off
		if !insideWord(s, j, j+len(want)) {
			return true
		}
		off = j + 1
	}
	return false
}

// hunkNotFound explains a hunk that matched nowhere.
func hunkNotFound(m *matcher, old []string, from int, eof bool) string {
	var b strings.Builder
	where := "the file"
	if from > 0 {
		where = fmt.Sprintf("the file from line %d on", from+1)
	}
	if eof {
		where += ", at its end ('*** End of File')"
	}
	fmt.Fprintf(&b, "could not find these context and '-' lines in %s (compared exactly, then ignoring whitespace at line ends, indentation and Unicode punctuation):\n", where)
	quoteLines(&b, old)
	if from > 0 {
		for l := exact; l < numLevels; l++ {
			if i := m.find(old, 0, l, nil); i >= 0 && i < from {
				fmt.Fprintf(&b, "They occur at line %d, before where this hunk may start (line %d); hunks must follow the file's order.\n", i+1, from+1)
				break
			}
		}
	}
	writeNearest(&b, m, old)
	b.WriteString("Re-read the file and send the patch again with context and '-' lines copied exactly.")
	return b.String()
}

// MemFS is an in-memory file tree, slash-separated paths to contents. It
// implements FS and Writer, for tests and for previewing a plan on a copy.
type MemFS map[string]string

// ReadFile returns the file at p. Like a disk, it fails for a path that is
// a directory (a prefix of other files) or lies below a file.
func (m MemFS) ReadFile(p string) (string, error) {
	k := path.Clean(p)
	if t, ok := m[k]; ok {
		return t, nil
	}
	if err := m.conflict(k); err != nil {
		return "", &fs.PathError{Op: "read", Path: p, Err: err}
	}
	return "", &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
}

// WriteFile stores text at p; parent directories exist implicitly.
func (m MemFS) WriteFile(p, text string) error {
	k := path.Clean(p)
	if _, ok := m[k]; !ok {
		if err := m.conflict(k); err != nil {
			return &fs.PathError{Op: "write", Path: p, Err: err}
		}
	}
	m[k] = text
	return nil
}

// Remove deletes the file at p.
func (m MemFS) Remove(p string) error {
	k := path.Clean(p)
	if _, ok := m[k]; !ok {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	}
	delete(m, k)
	return nil
}

func (m MemFS) conflict(k string) error {
	for name := range m {
		if strings.HasPrefix(name, k+"/") {
			return errors.New("is a directory")
		}
		if strings.HasPrefix(k, name+"/") {
			return errors.New("not a directory")
		}
	}
	return nil
}
