package edit

import (
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/diff"
)

// Reason says why an editor call changed nothing.
type Reason int

// Reasons an editor call fails. Each is something the model can fix by
// changing its call.
const (
	// ReasonNotFound: old_text occurs nowhere in the file.
	ReasonNotFound Reason = iota + 1
	// ReasonMultipleMatches: old_text occurs more than once, so the place
	// to edit is ambiguous.
	ReasonMultipleMatches
	// ReasonInvalidInsertLine: insert_line is outside 1..lines+1.
	ReasonInvalidInsertLine
	// ReasonOldTextRequired: the file exists and the call has neither
	// old_text nor insert_line; editor never overwrites a whole file.
	ReasonOldTextRequired
	// ReasonFileNotFound: old_text was given for a file that does not exist.
	ReasonFileNotFound
	// ReasonConflictingArgs: both old_text and insert_line were given.
	ReasonConflictingArgs
	// ReasonUnsafe: a place was found, but writing there could lose or
	// misplace text (a placeholder line, indentation that cannot be
	// carried over); Detail says which.
	ReasonUnsafe
)

// EditorError is the error of an editor call that changed nothing. Its
// message is the model-facing text of docs/DESIGN.md §3, naming Path; a
// wrapper that called Replace or Insert directly sets Path before showing
// it (an empty Path reads "the file").
type EditorError struct {
	Reason Reason
	// Path is the display path shown to the model.
	Path string
	// InsertLine and MaxLine describe a ReasonInvalidInsertLine: the
	// line given and the largest valid one (lines+1).
	InsertLine, MaxLine int
	// Detail, when set, follows the message on lines of its own: the
	// places of an ambiguous match, the nearest region of a missing one.
	Detail string
}

// Error returns the model-facing message.
func (e *EditorError) Error() string {
	if e.Detail != "" {
		return e.message() + "\n" + e.Detail
	}
	return e.message()
}

func (e *EditorError) message() string {
	p := e.Path
	if p == "" {
		p = "the file"
	}
	switch e.Reason {
	case ReasonNotFound:
		return fmt.Sprintf("No replacement performed: text not found in %s.", p)
	case ReasonMultipleMatches:
		return fmt.Sprintf("No replacement performed: multiple occurrences of text found in %s.", p)
	case ReasonInvalidInsertLine:
		return fmt.Sprintf("Invalid insert_line: %d. insert_line must be a positive one-based boundary line in the range 1-%d. Use %d to append at EOF.",
			e.InsertLine, e.MaxLine, e.MaxLine)
	case ReasonOldTextRequired:
		return fmt.Sprintf("No replacement performed: %s already exists and old_text is empty. Pass the exact text to replace as old_text, or insert_line to insert new_text before a line.", p)
	case ReasonFileNotFound:
		return fmt.Sprintf("No replacement performed: %s does not exist, so old_text cannot be found in it. To create the file, call editor with new_text only.", p)
	case ReasonUnsafe:
		return fmt.Sprintf("No replacement performed in %s.", p)
	case ReasonConflictingArgs:
		return fmt.Sprintf("No change made to %s: pass either old_text (to replace it) or insert_line (to insert before that line), not both.", p)
	}
	return fmt.Sprintf("No change made to %s.", p)
}

// Replace returns text with the single occurrence of oldText replaced by
// newText. The match is literal: no pattern syntax, no "$" expansion. Line
// breaks in oldText match the file's terminators, so text a model wrote
// with LF finds its place in a CRLF file, and newText is written with the
// terminator of the place it replaces. An occurrence that begins or ends
// inside a word of the file ("port: 80" in "port: 8080") does not count.
//
// When no occurrence fits, oldText is looked for as whole lines with the
// tolerances of placeLoose (whitespace at line ends, indentation, copied
// line numbers); a unique such match is replaced by newText's lines in
// the file's indentation. Zero or several places give an *EditorError and
// no change, as does a placeholder line in newText (or in an oldText that
// matched nothing).
//
// The cost of the literal path is substring scans of text and one copy:
// the first scan finds the match, the next ones (from one byte past each
// occurrence, so overlapping ones count) prove it unique.
func Replace(text, oldText, newText string) (string, error) {
	out, _, err := replace(text, oldText, newText, LastRead{})
	return out, err
}

// replace is Replace, also returning the note of a loose match, which
// read holds to the place the model read.
func replace(text, oldText, newText string, read LastRead) (string, string, error) {
	if oldText == "" {
		return "", "", &EditorError{Reason: ReasonOldTextRequired}
	}
	oldLF := toEOL(oldText, "\n")
	multiline := strings.IndexByte(oldLF, '\n') >= 0
	eols := []string{"\n"}
	if multiline {
		// Only a file that mixes terminators needs more than one try; each
		// variant can only match where the file uses that terminator, so
		// the matches of different variants never coincide.
		eols = countEOL(text).kinds()
	}
	at, matched, eol, inWord, note := -1, "", "", -1, ""
search:
	for _, e := range eols {
		o := toEOL(oldLF, e)
		for from := 0; from <= len(text); {
			i := strings.Index(text[from:], o)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if insideWord(text, i, i+len(o)) {
				if inWord < 0 {
					inWord = i
				}
				continue
			}
			if at >= 0 {
				// Several places: the one the model read, if the change
				// since its read shows which (the user pasted a copy).
				if j, ok := mapOffset(read, text, o); ok {
					at, matched, eol = j, o, e
					note = fmt.Sprintf("old_text occurs more than once now; the occurrence at line %d is the one in the file as you last read it (the others came since), and that is the one replaced.", 1+strings.Count(text[:j], "\n"))
					break search
				}
				return "", "", &EditorError{Reason: ReasonMultipleMatches}
			}
			at, matched, eol = i, o, e
		}
	}
	if at < 0 {
		return replaceLoose(text, oldLF, newText, inWord, read)
	}
	if !multiline {
		eol = countEOL(text).dominant()
	}
	repl := toEOL(newText, eol)
	// A placeholder may stand in new text only where the file has it.
	newLines := strings.Split(toEOL(newText, "\n"), "\n")
	if i := firstPlaceholderOf(newLines, func() []string {
		ls, le := strings.LastIndexByte(text[:at], '\n')+1, at+len(matched)
		if k := strings.IndexByte(text[le:], '\n'); k >= 0 {
			le += k
		} else {
			le = len(text)
		}
		return strings.Split(toEOL(text[ls:le], "\n"), "\n")
	}); i >= 0 {
		return "", "", &EditorError{Reason: ReasonUnsafe, Detail: fmt.Sprintf("old_text matches at line %d, but %s", 1+strings.Count(text[:at], "\n"), placeholderMessage("new_text", newLines[i]))}
	}
	var b strings.Builder
	b.Grow(len(text) - len(matched) + len(repl))
	b.WriteString(text[:at])
	b.WriteString(repl)
	b.WriteString(text[at+len(matched):])
	return b.String(), note, nil
}

// newPlaceholder refuses new lines with a placeholder that keep, the
// file's lines at the place old_text matched (where), does not hold.
func newPlaceholder(newLines, keep []string, where string) error {
	if i := firstPlaceholder(newLines, keep); i >= 0 {
		return &EditorError{Reason: ReasonUnsafe, Detail: fmt.Sprintf("old_text matches %s, but %s", where, placeholderMessage("new_text", newLines[i]))}
	}
	return nil
}

// replaceLoose is Replace's second try: oldText as whole lines, placed by
// placeLoose. inWord is the offset of an occurrence refused for starting
// or ending inside a word, or -1, for the message.
func replaceLoose(text, oldLF, newText string, inWord int, read LastRead) (string, string, error) {
	pattern := strings.Split(oldLF, "\n")
	newLF := toEOL(newText, "\n")
	repl := strings.Split(newLF, "\n")
	// old_text ending in a line break takes the matched lines' last
	// terminator; a new_text that does not end in one then runs on into
	// the line after, exactly as the literal replacement does.
	runsOn := false
	if len(pattern) > 1 && pattern[len(pattern)-1] == "" {
		pattern = pattern[:len(pattern)-1]
		if len(repl) > 1 && repl[len(repl)-1] == "" {
			repl = repl[:len(repl)-1]
		} else {
			runsOn = true
		}
	}
	d := parseDocument(text)
	m := newMatcher(d.lines)
	p, amb := m.placeLoose(pattern, 0, nil, looseLevels, repl)
	if amb != nil {
		return "", "", &EditorError{Reason: ReasonMultipleMatches, Detail: "The " + amb.message()}
	}
	if p.at < 0 {
		e := &EditorError{Reason: ReasonNotFound}
		var b strings.Builder
		switch {
		case inWord >= 0:
			no := 1 + strings.Count(text[:inWord], "\n")
			fmt.Fprintf(&b, "old_text occurs only inside a longer word, at line %d: %q. A match may not begin or end in the middle of a word; include the whole word.", no, diff.ClipLine(lineText(d.lines, no-1)))
		case firstPlaceholder(pattern, nil) >= 0:
			e.Reason = ReasonUnsafe
			b.WriteString(placeholderMessage("old_text", pattern[firstPlaceholder(pattern, nil)]) + "\n")
			writeNearest(&b, m, pattern)
		default:
			if writeNearest(&b, m, pattern) {
				b.WriteString("Re-read the file and copy old_text exactly.")
			}
		}
		e.Detail = strings.TrimSuffix(b.String(), "\n")
		return "", "", e
	}
	if msg := sinceRead(read, d.lines, p); msg != "" {
		return "", "", &EditorError{Reason: ReasonNotFound, Detail: "old_text matches nothing exactly: " + msg}
	}
	n := len(p.pattern)
	if p.numbers {
		repl = stripNewNumbers(repl)
	}
	if err := newPlaceholder(repl, fileTexts(d.lines[p.at:p.at+n]), lineRange(p.at, n)); err != nil {
		return "", "", err
	}
	repl, err := reindent(p.indent, repl)
	if err != nil {
		return "", "", &EditorError{Reason: ReasonUnsafe, Detail: "old_text " + err.Error() + "."}
	}
	end := p.at + n
	if runsOn && end < len(d.lines) {
		repl = append(repl[:len(repl)-1:len(repl)-1], repl[len(repl)-1]+d.lines[end].text)
		end++
	}
	out := make([]line, 0, len(d.lines)+len(repl))
	out = append(out, d.lines[:p.at]...)
	out = append(out, freshLines(repl)...)
	out = append(out, d.lines[end:]...)
	note := fmt.Sprintf("old_text matched %s only %s.", lineRange(p.at, n), p.how())
	return d.render(out), note, nil
}

// Insert returns text with newText inserted as whole lines before the
// 1-based line lineNo; lineNo = lines+1 appends at the end. newText takes
// the file's dominant line ending, and one trailing line break in it ends
// its last line rather than adding an empty one. Appending to a file that
// lacks a final newline keeps it lacking one. A UTF-8 byte order mark stays
// in front of line 1.
func Insert(text string, lineNo int, newText string) (string, error) {
	prefix, body := "", text
	if strings.HasPrefix(body, bom) {
		prefix, body = bom, body[len(bom):]
	}
	c := countEOL(body)
	eol := c.dominant()
	terminated := body == "" || body[len(body)-1] == '\n' || body[len(body)-1] == '\r'
	n := c.lf + c.crlf + c.cr
	if !terminated {
		n++
	}
	if lineNo < 1 || lineNo > n+1 {
		return "", &EditorError{Reason: ReasonInvalidInsertLine, InsertLine: lineNo, MaxLine: n + 1}
	}
	ins := toEOL(strings.TrimSuffix(toEOL(newText, "\n"), "\n"), eol)

	var b strings.Builder
	b.Grow(len(text) + len(ins) + len(eol))
	b.WriteString(prefix)
	switch {
	case lineNo <= n:
		off := lineStart(body, lineNo, c.cr+c.crlf > 0)
		b.WriteString(body[:off])
		b.WriteString(ins)
		b.WriteString(eol)
		b.WriteString(body[off:])
	case terminated:
		b.WriteString(body)
		b.WriteString(ins)
		b.WriteString(eol)
	default:
		b.WriteString(body)
		b.WriteString(eol)
		b.WriteString(ins)
	}
	return b.String(), nil
}

// lineStart returns the byte offset where the 1-based line k of s begins.
// The caller has checked that s has at least k lines.
func lineStart(s string, k int, hasCR bool) int {
	off := 0
	for ; k > 1; k-- {
		if !hasCR {
			off += strings.IndexByte(s[off:], '\n') + 1
			continue
		}
		i := strings.IndexAny(s[off:], "\r\n")
		off += i + 1
		if s[off-1] == '\r' && off < len(s) && s[off] == '\n' {
			off++
		}
	}
	return off
}

// EditorRequest holds the editor tool's arguments. An empty OldText counts
// as absent; InsertLine is nil when insert_line was not given (0 is a
// value, and an invalid one).
type EditorRequest struct {
	OldText    string
	NewText    string
	InsertLine *int
	// Read is what the model last read of the file, if known; it holds a
	// loose match of old_text to the place the model read (sinceRead).
	Read LastRead
}

// EditorAction says what a successful editor call did, which decides the
// message the model is shown: CreatedMessage for ActionCreated, the compact
// diff of package diff (whose first line is "Edited <path>") otherwise.
type EditorAction int

// Editor actions.
const (
	ActionCreated EditorAction = iota + 1
	ActionReplaced
	ActionInserted
)

// EditorResult is the outcome of a successful editor call.
type EditorResult struct {
	Action EditorAction
	// Text is the file's complete new content.
	Text string
	// Note says which tolerance a loose match used, for the model; empty
	// for a literal match.
	Note string
}

// EditFile runs one editor call against a file's current text. exists says
// whether the file exists; current is ignored when it does not. path is
// the display path the errors name.
//
//   - insert_line given: insert before that line (Insert).
//   - file missing: create it with new_text exactly as given. A call that
//     also carries old_text fails instead: the model believes the file
//     holds that text, so the path is probably wrong, and creating a file
//     there would put the edit in the wrong place.
//   - otherwise old_text must occur exactly once (Replace).
//
// old_text together with insert_line is refused as ambiguous.
func EditFile(path, current string, exists bool, req EditorRequest) (EditorResult, error) {
	res, err := editFile(current, exists, req)
	if e, ok := err.(*EditorError); ok {
		e.Path = path
	}
	return res, err
}

func editFile(current string, exists bool, req EditorRequest) (EditorResult, error) {
	if req.OldText != "" && req.InsertLine != nil {
		return EditorResult{}, &EditorError{Reason: ReasonConflictingArgs}
	}
	if !exists {
		if req.OldText != "" {
			return EditorResult{}, &EditorError{Reason: ReasonFileNotFound}
		}
		if req.InsertLine != nil && *req.InsertLine != 1 {
			return EditorResult{}, &EditorError{Reason: ReasonInvalidInsertLine, InsertLine: *req.InsertLine, MaxLine: 1}
		}
		return EditorResult{Action: ActionCreated, Text: req.NewText}, nil
	}
	if req.InsertLine != nil {
		at, note, err := mapInsertLine(req.Read, current, *req.InsertLine)
		if err != nil {
			return EditorResult{}, err
		}
		text, err := Insert(current, at, req.NewText)
		return EditorResult{Action: ActionInserted, Text: text, Note: note}, err
	}
	text, note, err := replace(current, req.OldText, req.NewText, req.Read)
	return EditorResult{Action: ActionReplaced, Text: text, Note: note}, err
}

// mapInsertLine carries insert_line n, a line of the text the model last
// read, to the current text: lines added or removed above the place move
// it with them, and a place inside what changed since is refused, since
// the line it names may be gone or another. Without a read on record, or
// with the text unchanged, n stands.
func mapInsertLine(read LastRead, current string, n int) (int, string, error) {
	if !read.Known || read.Text == current || n < 1 {
		return n, "", nil
	}
	seen := parseDocument(read.Text).lines
	if n > len(seen)+1 {
		return n, "", nil // invalid for what was read too: Insert says so
	}
	cur := parseDocument(current).lines
	pre, suf := changedWindow(seen, cur)
	b := n - 1 // the boundary before which the lines go
	switch {
	case b < pre:
		return n, "", nil
	case b >= len(seen)-suf:
		// Before a line that is still there, after what changed (lines
		// the user added just there included).
		m := n + len(cur) - len(seen)
		return m, fmt.Sprintf("insert_line %d of the file as you last read it is line %d now (lines above it changed since), and the text went there.", n, m), nil
	}
	return 0, "", &EditorError{Reason: ReasonUnsafe, Detail: fmt.Sprintf("The file changed since you last read it around insert_line %d (%s of what you read are now %s), so that line may be gone or another. Read the file again and give the line as it is now.",
		n, LineRange(pre+1, len(seen)-suf-pre), LineRange(pre+1, len(cur)-suf-pre))}
}

// CreatedMessage is what the model is shown after EditFile created path.
func CreatedMessage(path string) string {
	return "File created successfully at: " + path
}
