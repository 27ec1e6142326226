package edit

import (
	"fmt"
	"strings"
)

// OpKind is the kind of one file operation in a patch.
type OpKind int

// File operations of the apply_patch grammar.
const (
	OpAdd OpKind = iota + 1
	OpDelete
	OpUpdate
)

// String returns the header word of the operation, as in "Update File".
func (k OpKind) String() string {
	switch k {
	case OpAdd:
		return "Add File"
	case OpDelete:
		return "Delete File"
	case OpUpdate:
		return "Update File"
	}
	return "operation"
}

// Patch is a parsed apply_patch input: its file operations in order.
type Patch struct {
	Ops []FileOp
}

// FileOp is one "*** Add File", "*** Delete File" or "*** Update File"
// section.
type FileOp struct {
	Kind OpKind
	// Path is the file as written in the patch; MoveTo is the target of
	// an "*** Move to:" line, or empty.
	Path   string
	MoveTo string
	// Content is an added file's text: its '+' lines, each ended by "\n".
	Content string
	// Hunks are an update's changes, in file order.
	Hunks []Hunk
	// Line is the 1-based line of the patch holding the header.
	Line int
}

// Hunk is one "@@" section of an update.
type Hunk struct {
	// Anchors are the texts of the "@@ text" lines that open the hunk,
	// outermost first: each is a line to find before the hunk's lines,
	// which narrows where they may match (a class, then a method in it).
	Anchors []string
	Lines   []HunkLine
	// EOF is set by "*** End of File": the hunk's lines end the file.
	EOF bool
	// Line is the 1-based line of the patch where the hunk starts.
	Line int
	// trailingBare counts the empty patch lines at the end of Lines.
	// They are read as empty context lines, but are often only blank
	// separators, so matching retries without them.
	trailingBare int
}

// HunkLine is one line of a hunk: Op is ' ' for context, '-' for a line
// removed and '+' for a line added.
type HunkLine struct {
	Op   byte
	Text string
}

// PatchError is the error of an apply_patch call; nothing was changed.
type PatchError struct {
	// Op and Path name the file operation that failed; Op is 0 for an
	// error in the patch's framing.
	Op   OpKind
	Path string
	// Hunk is the 1-based hunk of an update that failed, 0 if none;
	// Hunks is how many the update has.
	Hunk, Hunks int
	// Line is the 1-based line of the patch text concerned, 0 if none.
	Line int
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Error returns the model-facing message, which ends by saying that no
// file was changed.
func (e *PatchError) Error() string {
	var b strings.Builder
	b.WriteString("apply_patch failed: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "patch line %d: ", e.Line)
	}
	if e.Op != 0 {
		fmt.Fprintf(&b, "%s %s: ", e.Op, e.Path)
	}
	if e.Hunk > 0 {
		fmt.Fprintf(&b, "hunk %d of %d: ", e.Hunk, e.Hunks)
	}
	b.WriteString(e.Msg)
	if !strings.HasSuffix(e.Msg, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("No files were changed.")
	return b.String()
}

const patchHelp = "A patch is:\n*** Begin Patch\n*** Update File: <path>\n@@ <optional line to find first>\n <context line>\n-<line to remove>\n+<line to add>\n*** Add File: <path>\n+<line of the new file>\n*** Delete File: <path>\n*** End Patch"

// header kinds, found by readHeader.
const (
	hdrNone = iota
	hdrAdd
	hdrDelete
	hdrUpdate
	hdrMove
	hdrEOF
	hdrBegin
	hdrEnd
	hdrUnknown
)

// readHeader recognises a "*** ..." marker line, ignoring whitespace
// around it and after the stars.
func readHeader(l string) (kind int, arg string) {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "***") {
		return hdrNone, ""
	}
	rest := strings.TrimSpace(t[3:])
	for _, h := range []struct {
		prefix string
		kind   int
	}{{"Add File:", hdrAdd}, {"Delete File:", hdrDelete}, {"Update File:", hdrUpdate}, {"Move to:", hdrMove}} {
		if strings.HasPrefix(rest, h.prefix) {
			return h.kind, strings.TrimSpace(rest[len(h.prefix):])
		}
	}
	switch rest {
	case "End of File":
		return hdrEOF, ""
	case "Begin Patch":
		return hdrBegin, ""
	case "End Patch":
		return hdrEnd, ""
	}
	return hdrUnknown, ""
}

func isFileHeader(kind int) bool { return kind == hdrAdd || kind == hdrDelete || kind == hdrUpdate }

// ParsePatch parses an apply_patch input. It accepts the patch wrapped the
// way models send it to a shell (`apply_patch <<'EOF'` ... `EOF`, or in a
// code fence) and markers with stray whitespace around them, but it
// insists on "*** Begin Patch" and "*** End Patch": a patch without its end
// may have been cut off and is refused whole.
func ParsePatch(input string) (*Patch, error) {
	lines := strings.Split(input, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	begin, end := -1, -1
	for i, l := range lines {
		if k, _ := readHeader(l); k == hdrBegin {
			begin = i
			break
		}
	}
	if begin < 0 {
		return nil, &PatchError{Msg: "the patch must start with a line '*** Begin Patch'.\n" + patchHelp}
	}
	for i := len(lines) - 1; i > begin; i-- {
		if k, _ := readHeader(lines[i]); k == hdrEnd {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, &PatchError{Msg: "the patch must end with a line '*** End Patch'; it may have been cut off, so none of it was applied."}
	}
	for i := 0; i < begin; i++ {
		if !isWrapperStart(lines[i]) {
			return nil, &PatchError{Line: i + 1, Msg: fmt.Sprintf("unexpected text %q before '*** Begin Patch'.", lines[i])}
		}
	}
	for i := end + 1; i < len(lines); i++ {
		if !isWrapperEnd(lines[i]) {
			return nil, &PatchError{Line: i + 1, Msg: fmt.Sprintf("unexpected text %q after '*** End Patch'.", lines[i])}
		}
	}
	p := &patchParser{lines: lines, i: begin + 1, end: end}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if len(p.patch.Ops) == 0 {
		return nil, &PatchError{Msg: "the patch contains no file operations.\n" + patchHelp}
	}
	return &p.patch, nil
}

// isWrapperStart accepts what may precede a patch: blank lines, a code
// fence, a shell line opening a heredoc.
func isWrapperStart(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "```") || strings.Contains(t, "<<") ||
		t == "apply_patch" || t == "applypatch"
}

// isWrapperEnd accepts what may follow a patch: blank lines, a code fence,
// the heredoc's terminator (a bare word, possibly closing a shell quote,
// as in `EOF'` or `EOF")`).
func isWrapperEnd(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" || strings.HasPrefix(t, "```") {
		return true
	}
	t = strings.Trim(t, "'\");")
	if t == "" {
		return true
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

type patchParser struct {
	lines  []string
	i, end int
	patch  Patch
}

func (p *patchParser) errorf(line int, op *FileOp, format string, args ...any) error {
	e := &PatchError{Line: line, Msg: fmt.Sprintf(format, args...)}
	if op != nil {
		e.Op, e.Path = op.Kind, op.Path
	}
	return e
}

func (p *patchParser) parse() error {
	for p.i < p.end {
		l := p.lines[p.i]
		no := p.i + 1
		kind, arg := readHeader(l)
		switch {
		case strings.TrimSpace(l) == "":
			p.i++
			continue
		case kind == hdrNone:
			return p.errorf(no, nil, "expected a file header ('*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'), found %q.\n%s", l, patchHelp)
		case !isFileHeader(kind):
			return p.errorf(no, nil, "%q is not a valid header here; expected '*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'.\n%s", strings.TrimSpace(l), patchHelp)
		case arg == "":
			return p.errorf(no, nil, "%q names no file.", strings.TrimSpace(l))
		}
		p.i++
		op := FileOp{Path: arg, Line: no}
		var err error
		switch kind {
		case hdrAdd:
			op.Kind = OpAdd
			err = p.parseAdd(&op)
		case hdrDelete:
			op.Kind = OpDelete
		case hdrUpdate:
			op.Kind = OpUpdate
			err = p.parseUpdate(&op)
		}
		if err != nil {
			return err
		}
		p.patch.Ops = append(p.patch.Ops, op)
	}
	return nil
}

// parseAdd reads an added file's '+' lines. Blank lines without '+' are
// tolerated between them (models drop the '+' of empty lines) and read as
// empty lines; blank lines at the end are separators and dropped.
func (p *patchParser) parseAdd(op *FileOp) error {
	var b strings.Builder
	blanks := 0
	for ; p.i < p.end; p.i++ {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "+"):
			for ; blanks > 0; blanks-- {
				b.WriteByte('\n')
			}
			b.WriteString(l[1:])
			b.WriteByte('\n')
		case strings.TrimSpace(l) == "":
			blanks++
		default:
			if k, _ := readHeader(l); isFileHeader(k) {
				op.Content = b.String()
				return nil
			}
			return p.errorf(p.i+1, op, "every line of an added file must start with '+'; found %q.", l)
		}
	}
	op.Content = b.String()
	return nil
}

// parseUpdate reads an update's optional "*** Move to:" line and hunks.
func (p *patchParser) parseUpdate(op *FileOp) error {
	if p.i < p.end {
		if k, arg := readHeader(p.lines[p.i]); k == hdrMove {
			if arg == "" {
				return p.errorf(p.i+1, op, "'*** Move to:' names no file.")
			}
			if arg != op.Path {
				op.MoveTo = arg
			}
			p.i++
		}
	}
	var cur *Hunk
	finish := func() error {
		if cur == nil {
			return nil
		}
		n := 0
		for n < len(cur.Lines) && cur.Lines[len(cur.Lines)-1-n].Op == ' ' && cur.Lines[len(cur.Lines)-1-n].Text == "" && n < cur.trailingBare {
			n++
		}
		if n == len(cur.Lines) {
			// Nothing but blank lines: they were separators.
			cur.Lines, cur.trailingBare = nil, 0
		}
		if len(cur.Lines) == 0 {
			return p.errorf(cur.Line, op, "hunk %d has no lines after its '@@'.", len(op.Hunks))
		}
		cur = nil
		return nil
	}
	newHunk := func(line int) {
		op.Hunks = append(op.Hunks, Hunk{Line: line})
		cur = &op.Hunks[len(op.Hunks)-1]
	}
loop:
	for ; p.i < p.end; p.i++ {
		l := p.lines[p.i]
		no := p.i + 1
		switch k, _ := readHeader(l); {
		case isFileHeader(k):
			break loop
		case k == hdrEOF:
			if cur == nil || len(cur.Lines) == 0 {
				return p.errorf(no, op, "'*** End of File' must follow a hunk's lines.")
			}
			cur.EOF = true
			if err := finish(); err != nil {
				return err
			}
			continue
		case k == hdrMove:
			return p.errorf(no, op, "'*** Move to:' must come directly after '*** Update File:'.")
		case k != hdrNone && !strings.HasPrefix(l, " "):
			return p.errorf(no, op, "%q is not a valid marker inside an update.\n%s", strings.TrimSpace(l), patchHelp)
		}
		if strings.HasPrefix(l, "@@") {
			if cur == nil || len(cur.Lines) > 0 {
				if err := finish(); err != nil {
					return err
				}
				newHunk(no)
			}
			if a := anchorText(l); a != "" {
				cur.Anchors = append(cur.Anchors, a)
			}
			continue
		}
		if strings.TrimSpace(l) == "" && !strings.HasPrefix(l, " ") {
			// An empty line: an empty context line whose ' ' an editor
			// stripped, or a separator. Outside a hunk it is only the latter.
			if cur != nil {
				cur.Lines = append(cur.Lines, HunkLine{Op: ' '})
				cur.trailingBare++
			}
			continue
		}
		switch l[0] {
		case ' ', '-', '+':
			if cur == nil {
				newHunk(no)
			}
			cur.Lines = append(cur.Lines, HunkLine{Op: l[0], Text: l[1:]})
			cur.trailingBare = 0
		default:
			return p.errorf(no, op, "hunk line %q must start with ' ' (context), '-' (remove) or '+' (add).", l)
		}
	}
	if err := finish(); err != nil {
		return err
	}
	if len(op.Hunks) == 0 && op.MoveTo == "" {
		return p.errorf(op.Line, op, "the update has no hunks; add '@@' sections with the lines to change.\n%s", patchHelp)
	}
	return nil
}

// anchorText returns the text of an "@@ text" line. A unified-diff range
// ("@@ -12,7 +12,8 @@ func f") is not text to find; what follows it is.
func anchorText(l string) string {
	a := strings.TrimSpace(l[2:])
	if strings.HasPrefix(a, "-") {
		if j := strings.Index(a, "@@"); j > 0 && isRangePair(a[:j]) {
			a = strings.TrimSpace(a[j+2:])
		}
	}
	return a
}

func isRangePair(s string) bool {
	f := strings.Fields(s)
	if len(f) != 2 || !strings.HasPrefix(f[0], "-") || !strings.HasPrefix(f[1], "+") {
		return false
	}
	for _, r := range f[0][1:] + f[1][1:] {
		if (r < '0' || r > '9') && r != ',' {
			return false
		}
	}
	return true
}
