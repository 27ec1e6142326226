package diff

import (
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Hunk is one run of changed lines: the lines Removed from the old text,
// starting at line OldLine, and the lines Added in their place, starting at
// line NewLine of the new text. Line numbers are 1-based. A pure insertion
// has no Removed lines and OldLine is the old line it is inserted before
// (one past the last line when appending); a pure deletion likewise has
// NewLine pointing where the removed lines used to be.
//
// Lines are split at "\n"; a "\r" before the "\n" is part of the terminator
// and is left out of the line's text, so CRLF and LF files read the same.
type Hunk struct {
	OldLine int
	NewLine int
	Removed []string
	Added   []string
}

// Lines returns the changed lines between oldText and newText as hunks in
// document order. Two lines are equal when their text is equal and either
// both or neither have a terminator: swapping CRLF for LF is no change, but
// adding or dropping the final newline changes the last line.
//
// Common leading and trailing lines are trimmed before go-diff sees the
// texts, so the cost grows with the changed region rather than the file.
func Lines(oldText, newText string) []Hunk {
	p, s := trimCommonLines(oldText, newText)
	oldLines := splitLines(oldText[p : len(oldText)-s])
	newLines := splitLines(newText[p : len(newText)-s])
	first := 1 + strings.Count(oldText[:p], "\n")
	var hunks []Hunk
	for _, c := range diffSeq(oldLines, newLines) {
		hunks = append(hunks, Hunk{
			OldLine: first + c.oldStart,
			NewLine: first + c.newStart,
			Removed: texts(oldLines[c.oldStart:c.oldEnd]),
			Added:   texts(newLines[c.newStart:c.newEnd]),
		})
	}
	return hunks
}

// trimCommonLines returns the byte lengths of the whole lines a and b share
// at their start and at their end, not overlapping. Comparing bytes in
// blocks keeps this cheap; lines inside the two lengths are identical.
func trimCommonLines(a, b string) (prefix, suffix int) {
	p := commonPrefixLen(a, b)
	// Back off to the start of the line the texts first differ in.
	for p > 0 && a[p-1] != '\n' {
		p--
	}
	a, b = a[p:], b[p:]
	s := commonSuffixLen(a, b)
	// Move forward to a point that starts a line in both texts. Inside the
	// shared suffix the preceding bytes agree, so one '\n' check serves both.
	for s > 0 {
		i, j := len(a)-s, len(b)-s
		if (i == 0 || a[i-1] == '\n') && (j == 0 || b[j-1] == '\n') {
			break
		}
		s--
	}
	return p, s
}

// line is one line of a text: its content without terminator, and whether
// it had one.
type line struct {
	text       string
	terminated bool
}

// splitLines splits s at "\n". A trailing "\n" ends the last line rather
// than starting an empty one, and "" has no lines.
func splitLines(s string) []line {
	lines := make([]line, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, line{text: s})
			break
		}
		lines = append(lines, line{text: strings.TrimSuffix(s[:i], "\r"), terminated: true})
		s = s[i+1:]
	}
	return lines
}

// splitKeepEnds splits s after each "\n", keeping the terminators so the
// pieces concatenate back to s.
func splitKeepEnds(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

func texts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// change says that a[oldStart:oldEnd] was replaced by b[newStart:newEnd].
type change struct {
	oldStart, oldEnd int
	newStart, newEnd int
}

// diffSeq diffs two sequences with go-diff and returns the changed runs in
// order; everything between them is equal.
func diffSeq[K comparable](a, b []K) []change {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	ra, rb, ok := toRunes(a, b)
	if !ok {
		// More distinct elements than runes to name them: call it all
		// replaced rather than fail.
		return []change{{0, len(a), 0, len(b)}}
	}
	// Equal runs at both ends are no change; past them, middles with
	// nothing in common are one replacement. go-diff would search the
	// whole edit graph (up to its one-second timeout) to learn that.
	pre := 0
	for pre < len(ra) && pre < len(rb) && ra[pre] == rb[pre] {
		pre++
	}
	suf := 0
	for suf < len(ra)-pre && suf < len(rb)-pre && ra[len(ra)-1-suf] == rb[len(rb)-1-suf] {
		suf++
	}
	if !shareAny(ra[pre:len(ra)-suf], rb[pre:len(rb)-suf]) {
		if pre == len(ra) && pre == len(rb) {
			return nil
		}
		return []change{{pre, len(a) - suf, pre, len(b) - suf}}
	}
	var changes []change
	pending := false
	oi, ni := 0, 0
	for _, d := range diffmatchpatch.New().DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		if d.Type == diffmatchpatch.DiffEqual {
			pending = false
			oi += n
			ni += n
			continue
		}
		if !pending {
			changes = append(changes, change{oi, oi, ni, ni})
			pending = true
		}
		c := &changes[len(changes)-1]
		if d.Type == diffmatchpatch.DiffDelete {
			oi += n
			c.oldEnd = oi
		} else {
			ni += n
			c.newEnd = ni
		}
	}
	return changes
}

// shareAny reports whether a and b have an element in common.
func shareAny(a, b []rune) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	seen := make(map[rune]struct{}, len(a))
	for _, r := range a {
		seen[r] = struct{}{}
	}
	for _, r := range b {
		if _, ok := seen[r]; ok {
			return true
		}
	}
	return false
}

// toRunes names each distinct element of a and b with a rune so go-diff
// can diff them as characters. go-diff turns rune slices back into
// strings, which replaces surrogate code points with U+FFFD and would merge
// distinct elements, so the surrogate range is skipped. It reports false if
// the elements need more names than Unicode has.
func toRunes[K comparable](a, b []K) (ra, rb []rune, ok bool) {
	ids := make(map[K]rune, len(a)+len(b))
	var next rune
	conv := func(keys []K) ([]rune, bool) {
		out := make([]rune, len(keys))
		for i, k := range keys {
			r, seen := ids[k]
			if !seen {
				if next == 0xD800 {
					next = 0xE000
				}
				if next > utf8.MaxRune {
					return nil, false
				}
				r = next
				ids[k] = r
				next++
			}
			out[i] = r
		}
		return out, true
	}
	if ra, ok = conv(a); !ok {
		return nil, nil, false
	}
	rb, ok = conv(b)
	return ra, rb, ok
}
