package edit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/diff"
)

// Block is one SEARCH/REPLACE block of a replace_in_file diff.
type Block struct {
	// Search and Replace are the lines between the markers, without
	// terminators.
	Search  []string
	Replace []string
	// Line is the 1-based line of the diff holding the SEARCH marker.
	Line int
}

// DiffError is the error of a replace_in_file call that changed nothing:
// a diff that does not parse, or a block that matches nothing.
type DiffError struct {
	// Path is the display path; empty when the caller did not give one.
	Path string
	// Block is the 1-based number of the failing block, 0 when the error
	// is not about one block.
	Block int
	// Line is the 1-based line of the diff the error is about, 0 if none.
	Line int
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Error returns the model-facing message, which ends by saying that the
// file was not changed.
func (e *DiffError) Error() string {
	var b strings.Builder
	b.WriteString("replace_in_file failed")
	if e.Path != "" {
		b.WriteString(" for ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	if e.Block > 0 {
		fmt.Fprintf(&b, "SEARCH/REPLACE block %d", e.Block)
		if e.Line > 0 {
			fmt.Fprintf(&b, " (diff line %d)", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "diff line %d: ", e.Line)
	}
	b.WriteString(e.Msg)
	b.WriteString("\nThe file was not changed.")
	return b.String()
}

// Marker recognition. A SEARCH marker is three or more '-' (or '<'), one
// space and SEARCH; the separator is three or more '=' and nothing else;
// a REPLACE marker is three or more '+' (or '>'), one space and REPLACE.
// An optional '>' after the word is accepted, as models trained on
// Cline's format sometimes write it. Markers are matched exactly: a
// near-miss is an error, never content, so a typo cannot turn part of a
// block into text written to the file.

func isSearchMarker(s string) bool  { return isMarker(s, "SEARCH", '-', '<') }
func isReplaceMarker(s string) bool { return isMarker(s, "REPLACE", '+', '>') }

func isMarker(s, word string, c1, c2 byte) bool {
	n := 0
	for n < len(s) && (s[n] == c1 || s[n] == c2) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return false
	}
	rest := strings.TrimSuffix(s[n:], ">")
	return rest == " "+word
}

func isSeparator(s string) bool {
	return len(s) >= 3 && strings.Trim(s, "=") == ""
}

// looksLikeMarker spots lines a model meant as a marker but got wrong
// ("-- SEARCH", "-------SEARCH", "<<-- SEARCH", "======= ").
func looksLikeMarker(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	if strings.Contains(t, "SEARCH") || strings.Contains(t, "REPLACE") {
		return strings.ContainsAny(t[:1], "-<>+=")
	}
	if strings.Trim(t, "=") == "" {
		return len(t) >= 3 && t != s
	}
	return strings.HasPrefix(t, "===") || strings.HasSuffix(t, "===")
}

const markerHelp = "Each block is:\n------- SEARCH\n<exact lines to find>\n=======\n<lines to put instead>\n+++++++ REPLACE\nwith every marker alone on its line, no other characters or spaces."

// ParseBlocks splits a replace_in_file diff into its blocks. Text outside
// blocks (a code fence, a blank line) is ignored, but anything that looks
// like a marker and is not one is an error, as is a block left open.
func ParseBlocks(diff string) ([]Block, error) {
	const (
		outside = iota
		inSearch
		inReplace
	)
	var (
		blocks []Block
		cur    Block
		state  = outside
	)
	lines := strings.Split(diff, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	errAt := func(no int, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		block := 0
		if state != outside {
			block = len(blocks) + 1
		}
		return &DiffError{Block: block, Line: no, Msg: msg}
	}
	for i, raw := range lines {
		l := strings.TrimSuffix(raw, "\r")
		no := i + 1
		switch state {
		case outside:
			switch {
			case isSearchMarker(l):
				cur = Block{Line: no}
				state = inSearch
			case isSeparator(l), isReplaceMarker(l):
				return nil, errAt(no, "%q appears outside a block; a block must start with a '------- SEARCH' line.\n%s", l, markerHelp)
			case looksLikeMarker(l):
				return nil, errAt(no, "%q is not a valid marker.\n%s", l, markerHelp)
			}
		case inSearch:
			switch {
			case isSeparator(l):
				state = inReplace
			case isReplaceMarker(l):
				msg := fmt.Sprintf("%q comes before the '=======' line that ends the SEARCH part.", l)
				for k, s := range cur.Search {
					if looksLikeMarker(s) {
						msg += fmt.Sprintf(" Diff line %d, %q, looks like a separator but is not exactly '======='.", cur.Line+1+k, s)
						break
					}
				}
				return nil, errAt(no, "%s\n%s", msg, markerHelp)
			case isSearchMarker(l):
				return nil, errAt(no, "a new SEARCH marker starts before this block has its '=======' and REPLACE lines.\n%s", markerHelp)
			default:
				cur.Search = append(cur.Search, l)
			}
		case inReplace:
			switch {
			case isReplaceMarker(l):
				if cur.Replace == nil {
					cur.Replace = []string{}
				}
				blocks = append(blocks, cur)
				state = outside
			case isSearchMarker(l):
				return nil, errAt(no, "a new SEARCH marker starts before this block's '+++++++ REPLACE' line.\n%s", markerHelp)
			case isSeparator(l):
				return nil, errAt(no, "a second '=======' line in one block.\n%s", markerHelp)
			default:
				cur.Replace = append(cur.Replace, l)
			}
		}
	}
	switch state {
	case inSearch:
		return nil, errAt(0, "the diff ends inside the SEARCH part (no '=======' line).\n%s", markerHelp)
	case inReplace:
		return nil, errAt(0, "the diff ends before the block's '+++++++ REPLACE' line; it may have been cut off.\n%s", markerHelp)
	}
	if len(blocks) == 0 {
		return nil, &DiffError{Msg: "no SEARCH/REPLACE block found in the diff.\n" + markerHelp}
	}
	return blocks, nil
}

// ReplaceResult is the outcome of a successful replace_in_file call.
type ReplaceResult struct {
	// Text is the file's complete new content.
	Text string
	// Notes has one sentence per block that matched only loosely (which
	// tolerance placed it), or went to the place the model read among
	// copies, for the wrapper to pass on: the file was not what the model
	// believed.
	Notes []string
}

// ReplaceInFile applies a replace_in_file diff to text, or returns a
// *DiffError naming path and no change. For a file that does not exist
// yet the caller passes "" as text: an empty SEARCH then gives the file
// its content.
func ReplaceInFile(path, text, diff string) (ReplaceResult, error) {
	return ReplaceInFileRead(path, text, diff, LastRead{})
}

// ReplaceInFileRead is ReplaceInFile with the text the model last read of
// the file, which holds a loose match to the place the model read
// (sinceRead).
func ReplaceInFileRead(path, text, diff string, read LastRead) (ReplaceResult, error) {
	blocks, err := ParseBlocks(diff)
	if err == nil {
		var res ReplaceResult
		res, err = applyBlocks(text, blocks, read)
		if err == nil {
			return res, nil
		}
	}
	if e, ok := err.(*DiffError); ok {
		e.Path = path
	}
	return ReplaceResult{}, err
}

// span is the place one block matched: lines [start, end) of the original
// text, to be replaced by repl.
type span struct {
	start, end int
	repl       []line
	block      int
}

// applyBlocks applies blocks to text, all or nothing. Every block is
// matched against the original text, whole lines only:
//
//  1. the lines exactly: the first match after the previous block's
//     match wins, then the first from the top of the file, so blocks may
//     come in any order (Cline's prompt tells models that SEARCH replaces
//     the first occurrence, and that is what they rely on);
//  2. failing that, loosely (placeLoose): whitespace at line ends, then
//     indentation (a uniform shift, or tabs for spaces), each also with
//     copied line numbers stripped; a loose match must be the only place
//     that fits, and a block of more than one line gets the file's
//     indentation for its new lines too. A one-line block replaced by
//     one line keeps the text as sent, as Cline's own tests expect.
//
// A place another block already took is skipped. A block is refused when
// its SEARCH or REPLACE holds a placeholder line (placeholderMessage)
// that the file does not have at the matched place; an ambiguous or
// missing match names the places or the nearest region. An empty SEARCH
// is only accepted for a file with no content besides whitespace, which
// it replaces.
//
// Replacement lines take the file's dominant line ending; lines outside
// the matched places are kept byte for byte.
//
// read is the text the model last read of the file, which holds a loose
// match to the place the model read (sinceRead).
func applyBlocks(text string, blocks []Block, read LastRead) (ReplaceResult, error) {
	d := parseDocument(text)
	m := newMatcher(d.lines)
	var spans []span
	free := func(start, end int) bool {
		for _, s := range spans {
			if start < s.end && s.start < end || start == s.start && (start == end || s.start == s.end) {
				return false
			}
		}
		return true
	}
	var notes []string
	cursor := 0
	for bi, blk := range blocks {
		n := len(blk.Search)
		fail := func(msg string) error {
			if len(blocks) > 1 {
				msg = fmt.Sprintf("%s (of %d blocks, no block was applied)", msg, len(blocks))
			}
			return &DiffError{Block: bi + 1, Line: blk.Line, Msg: msg}
		}
		if n == 0 {
			if strings.TrimSpace(text) != "" {
				return ReplaceResult{}, fail("the SEARCH part is empty, which only works for an empty file. Put the exact lines to replace between '------- SEARCH' and '======='.")
			}
			if !free(0, len(d.lines)) {
				return ReplaceResult{}, fail("more than one block has an empty SEARCH part.")
			}
			if i := firstPlaceholder(blk.Replace, nil); i >= 0 {
				return ReplaceResult{}, fail(placeholderMessage("the REPLACE part", blk.Replace[i]))
			}
			spans = append(spans, span{0, len(d.lines), freshLines(blk.Replace), bi})
			continue
		}
		ok := func(i int) bool { return free(i, i+n) }
		p := placement{at: -1, pattern: blk.Search}
		if p.at = m.find(blk.Search, cursor, exact, ok); p.at < 0 {
			p.at = m.find(blk.Search, 0, exact, ok)
		}
		if p.at >= 0 && read.Known {
			// Cline's first occurrence stands, unless the lines were
			// unique in what the model read: then the copies are news to
			// it, and only the place it read will do.
			if places := m.exactPlaces(blk.Search, 0, ok); len(places) > 1 {
				at, msg := m.resolveCopies(read, blk.Search, places, ok)
				if msg != "" {
					return ReplaceResult{}, fail(msg)
				}
				if at >= 0 && at != p.at {
					notes = append(notes, fmt.Sprintf("Block %d's lines occur more than once now; %s is where they were in the file as you last read it (the others came since), and that is where the block went.", bi+1, lineRange(at, n)))
				}
				if at >= 0 {
					p.at = at
				}
			}
		}
		if p.at < 0 {
			var amb *ambiguity
			p, amb = m.placeLoose(blk.Search, 0, ok, looseLevels, blk.Replace)
			if amb != nil {
				return ReplaceResult{}, fail(amb.message())
			}
			if msg := sinceRead(read, d.lines, p); msg != "" {
				return ReplaceResult{}, fail(msg)
			}
		}
		if p.at < 0 {
			if i := firstPlaceholder(blk.Search, nil); i >= 0 {
				var b strings.Builder
				b.WriteString(placeholderMessage("the SEARCH part", blk.Search[i]) + "\n")
				writeNearest(&b, m, blk.Search)
				return ReplaceResult{}, fail(strings.TrimSuffix(b.String(), "\n"))
			}
			return ReplaceResult{}, fail(notFoundMessage(m, blk.Search))
		}
		matched := fileTexts(d.lines[p.at : p.at+n])
		repl := blk.Replace
		if p.numbers {
			repl = stripNewNumbers(repl)
		}
		if i := firstPlaceholder(repl, matched); i >= 0 {
			return ReplaceResult{}, fail(fmt.Sprintf("the SEARCH part matches %s, but %s", lineRange(p.at, n), placeholderMessage("the REPLACE part", repl[i])))
		}
		if p.indent != nil && n == 1 && len(repl) == 1 {
			p.indent = nil
		}
		if p.indent != nil {
			var err error
			if repl, err = reindent(p.indent, repl); err != nil {
				return ReplaceResult{}, fail("the block " + err.Error() + ".")
			}
		}
		if how := p.how(); how != "" {
			notes = append(notes, fmt.Sprintf("Block %d matched %s only %s.", bi+1, lineRange(p.at, n), how))
		}
		spans = append(spans, span{p.at, p.at + n, freshLines(repl), bi})
		cursor = p.at + n
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := make([]line, 0, len(d.lines))
	prev := 0
	for _, s := range spans {
		out = append(out, d.lines[prev:s.start]...)
		out = append(out, s.repl...)
		prev = s.end
	}
	out = append(out, d.lines[prev:]...)
	return ReplaceResult{Text: d.render(out), Notes: notes}, nil
}

// notFoundMessage tells the model which lines were not found and where
// the file comes closest to them.
func notFoundMessage(m *matcher, search []string) string {
	var b strings.Builder
	b.WriteString("the SEARCH part matches nothing in the file. ")
	b.WriteString("Tried exact lines, then whitespace at line ends, indentation and copied line numbers ignored. SEARCH was:\n")
	quoteLines(&b, search)
	writeNearest(&b, m, search)
	b.WriteString("Re-read the file and copy the lines to replace exactly, whole lines only.")
	return b.String()
}

// quoteLines writes up to 12 lines, indented, and says how many it left out.
func quoteLines(b *strings.Builder, lines []string) {
	const maxQuoted = 12
	for i, l := range lines {
		if i == maxQuoted {
			fmt.Fprintf(b, "    ... (%d more lines)\n", len(lines)-maxQuoted)
			break
		}
		b.WriteString("    ")
		b.WriteString(diff.ClipLine(l))
		b.WriteByte('\n')
	}
}

func lineText(lines []line, i int) string {
	if i >= len(lines) {
		return "(end of file)"
	}
	return lines[i].text
}
