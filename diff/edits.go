package diff

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/workspace"
)

// Edit is an LSP TextEdit: replace Range of the original text by NewText.
type Edit struct {
	Range   workspace.Range `json:"range"`
	NewText string          `json:"newText"`
}

// TextEdits returns edits that turn oldText into newText, in document
// order, not overlapping, every range referring to oldText as LSP's
// TextDocumentEdit requires. Positions count characters in enc.
//
// The edits are small rather than optimal: the common start and end of the
// texts are skipped, the rest is diffed by lines, and each changed run of
// lines is narrowed to the characters that differ. An edit never starts or
// ends inside a UTF-8 sequence or between "\r" and "\n", so every range is
// exact in all three encodings and a client cannot split a character or a
// line ending.
func TextEdits(oldText, newText string, enc workspace.Encoding) []Edit {
	spans := byteEdits(oldText, newText)
	if len(spans) == 0 {
		return nil
	}
	m := workspace.NewMapper(oldText)
	edits := make([]Edit, len(spans))
	for i, s := range spans {
		edits[i] = Edit{
			Range: workspace.Range{
				Start: m.Position(s.start, enc),
				End:   m.Position(s.end, enc),
			},
			NewText: s.text,
		}
	}
	return edits
}

// span replaces old[start:end] by text.
type span struct {
	start, end int
	text       string
}

// byteEdits computes TextEdits in byte offsets of old.
func byteEdits(old, new string) []span {
	p, s := trimCommon(old, new, 0, 0)
	oldMid, newMid := old[p:len(old)-s], new[p:len(new)-s]
	if oldMid == "" && newMid == "" {
		return nil
	}
	// Diffing lines only pays when there are several of them on each side;
	// a change inside one line is already as narrow as it gets.
	if oldMid == "" || newMid == "" ||
		strings.IndexByte(oldMid, '\n') < 0 || strings.IndexByte(newMid, '\n') < 0 {
		return []span{{p, p + len(oldMid), newMid}}
	}

	oldLines, newLines := splitKeepEnds(oldMid), splitKeepEnds(newMid)
	var spans []span
	oi, ni := 0, 0 // lines consumed
	ob, nb := p, p // their byte offsets in old and new
	advance := func(lines []string, from, to int) int {
		n := 0
		for _, l := range lines[from:to] {
			n += len(l)
		}
		return n
	}
	for _, c := range diffSeq(oldLines, newLines) {
		ob += advance(oldLines, oi, c.oldStart)
		nb += advance(newLines, ni, c.newStart)
		oe := ob + advance(oldLines, c.oldStart, c.oldEnd)
		ne := nb + advance(newLines, c.newStart, c.newEnd)
		spans = append(spans, narrow(old, new, ob, oe, nb, ne))
		ob, nb, oi, ni = oe, ne, c.oldEnd, c.newEnd
	}
	return spans
}

// narrow turns the replacement of old[os:oe] by new[ns:ne] into one span
// covering only the bytes that differ.
func narrow(old, new string, os, oe, ns, ne int) span {
	p, s := trimCommon(old[:oe], new[:ne], os, ns)
	return span{os + p, oe - s, new[ns+p : ne-s]}
}

// trimCommon returns the lengths of the common prefix and suffix of
// a[ao:] and b[bo:], not overlapping, each shortened until its edge is a
// safe place to cut in both texts. The whole texts are passed so safety
// can look at the byte before a cut.
func trimCommon(a, b string, ao, bo int) (prefix, suffix int) {
	am, bm := a[ao:], b[bo:]
	p := commonPrefixLen(am, bm)
	for p > 0 && !(safeCut(a, ao+p) && safeCut(b, bo+p)) {
		p--
	}
	am, bm = am[p:], bm[p:]
	s := commonSuffixLen(am, bm)
	for s > 0 && !(safeCut(a, len(a)-s) && safeCut(b, len(b)-s)) {
		s--
	}
	return p, s
}

// safeCut reports whether an edit may begin or end at byte i of text: not
// inside a UTF-8 sequence and not between "\r" and "\n". Cutting only before
// bytes that can start a sequence keeps the cut on a code point boundary
// however the text decodes, even when it is not valid UTF-8.
func safeCut(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return true
	}
	return utf8.RuneStart(text[i]) && !(text[i-1] == '\r' && text[i] == '\n')
}

// commonPrefixLen is the length of the longest common prefix of a and b.
// Comparing blocks first lets the runtime's vectorised equality do most of
// the work on large texts.
func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	const block = 1024
	i := 0
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffixLen is the length of the longest common suffix of a and b.
func commonSuffixLen(a, b string) int {
	n := min(len(a), len(b))
	const block = 1024
	i := 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// ApplyEdits applies edits to text with LSP semantics: every range refers
// to text as it was before any edit, positions count characters in enc,
// and positions past the end of a line or of the text clamp to it. The
// edits may come in any order; inserts at the same place keep their
// order. It fails if a range ends before it starts or two ranges overlap.
func ApplyEdits(text string, edits []Edit, enc workspace.Encoding) (string, error) {
	if len(edits) == 0 {
		return text, nil
	}
	m := workspace.NewMapper(text)
	spans := make([]span, len(edits))
	for i, e := range edits {
		start, end := m.Offset(e.Range.Start, enc), m.Offset(e.Range.End, enc)
		if end < start {
			return "", fmt.Errorf("edit %d: range %v ends before it starts", i, e.Range)
		}
		spans[i] = span{start, end, e.NewText}
	}
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return spans[order[x]].start < spans[order[y]].start })

	var b strings.Builder
	size := len(text)
	for _, s := range spans {
		size += len(s.text) - (s.end - s.start)
	}
	b.Grow(max(size, 0))
	last := 0
	for k, i := range order {
		s := spans[i]
		if s.start < last {
			prev := order[k-1]
			return "", fmt.Errorf("edit %d (%v) overlaps edit %d (%v)", i, edits[i].Range, prev, edits[prev].Range)
		}
		b.WriteString(text[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}
