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
	oldMid, newMid, firstLine := trimCommonLines(oldText, newText)
	if oldMid == "" && newMid == "" {
		return nil
	}
	oldLines, newLines := splitLines(oldMid), splitLines(newMid)
	oldRunes, newRunes, ok := toRunes(oldLines, newLines)
	if !ok {
		// More distinct lines than runes to name them: report the whole
		// middle as replaced rather than fail.
		return []Hunk{{
			OldLine: firstLine, NewLine: firstLine,
			Removed: texts(oldLines), Added: texts(newLines),
		}}
	}
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffMainRunes(oldRunes, newRunes, false)

	var hunks []Hunk
	var cur *Hunk
	oi, ni := 0, 0 // indexes into oldLines, newLines
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			cur = nil
			oi += n
			ni += n
			continue
		}
		if cur == nil {
			hunks = append(hunks, Hunk{OldLine: firstLine + oi, NewLine: firstLine + ni})
			cur = &hunks[len(hunks)-1]
		}
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			cur.Removed = append(cur.Removed, texts(oldLines[oi:oi+n])...)
			oi += n
		case diffmatchpatch.DiffInsert:
			cur.Added = append(cur.Added, texts(newLines[ni:ni+n])...)
			ni += n
		}
	}
	return hunks
}

// trimCommonLines drops the whole lines the two texts share at both ends
// and returns what is left of each, with the 1-based number of its first
// line. Working on bytes keeps this cheap: the ends are compared in blocks
// and the shared prefix is only scanned for newlines, with strings.Count.
func trimCommonLines(a, b string) (aMid, bMid string, firstLine int) {
	p := commonPrefixLen(a, b)
	// Back off to the start of the line the texts first differ in.
	for p > 0 && a[p-1] != '\n' {
		p--
	}
	firstLine = 1 + strings.Count(a[:p], "\n")
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
	return a[:len(a)-s], b[:len(b)-s], firstLine
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

func texts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
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
