package edit

import (
	"strings"
	"unicode"
)

// level is how loosely two lines are compared. Each level forgives more
// than the one before; a match is always looked for at the strictest level
// first, so a looser level only decides when nothing stricter fits.
type level int

const (
	exact     level = iota // byte for byte (terminators aside)
	trimRight              // trailing whitespace ignored
	trimBoth               // leading and trailing whitespace ignored
	punct                  // as trimBoth, with Unicode punctuation normalised
	numLevels
)

func (l level) String() string {
	switch l {
	case exact:
		return "exact"
	case trimRight:
		return "ignoring trailing whitespace"
	case trimBoth:
		return "ignoring surrounding whitespace"
	default:
		return "ignoring whitespace and Unicode punctuation"
	}
}

// key is the form of s that lines are compared in at level l.
func key(s string, l level) string {
	switch l {
	case exact:
		return s
	case trimRight:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case trimBoth:
		return strings.TrimSpace(s)
	default:
		return normalizePunct(strings.TrimSpace(s))
	}
}

// normalizePunct maps the typographic characters that models and word
// processors swap for ASCII ones (dashes, curly quotes, unusual spaces)
// back to ASCII, so a line a model retyped with "smart" punctuation still
// finds the line it means. It returns s itself when nothing changes.
func normalizePunct(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	changed := false
	for _, r := range s {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58', '\uFE63', '\uFF0D':
			b.WriteByte('-')
		case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\uFF07':
			b.WriteByte('\'')
		case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\uFF02':
			b.WriteByte('"')
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			b.WriteByte(' ')
		case '\u2026':
			b.WriteString("...")
		case '\u200B', '\uFEFF':
			// zero-width: dropped
		default:
			b.WriteRune(r)
			continue
		}
		changed = true
	}
	if !changed {
		return s
	}
	return b.String()
}

// matcher finds runs of lines in a document. The compared form of every
// line is computed once per level and only when that level is reached, so
// a strict match on a large file costs no more than the scan itself.
type matcher struct {
	lines []line
	keys  [numLevels][]string
}

func newMatcher(lines []line) *matcher {
	return &matcher{lines: lines}
}

func (m *matcher) keysAt(l level) []string {
	if m.keys[l] == nil {
		ks := make([]string, len(m.lines))
		for i, ln := range m.lines {
			ks[i] = key(ln.text, l)
		}
		m.keys[l] = ks
	}
	return m.keys[l]
}

func patternKeys(pattern []string, l level) []string {
	out := make([]string, len(pattern))
	for i, p := range pattern {
		out[i] = key(p, l)
	}
	return out
}

// find returns the first i >= from, at level l, where pattern matches and
// ok(i) holds, or -1. It runs Knuth-Morris-Pratt over whole lines, so a
// file with long runs of identical lines (blank lines, closing braces)
// costs one pass instead of one pass per candidate start.
func (m *matcher) find(pattern []string, from int, l level, ok func(i int) bool) int {
	from = max(from, 0)
	pk := patternKeys(pattern, l)
	ks := m.keysAt(l)
	if len(pk) == 0 {
		if from <= len(ks) && (ok == nil || ok(from)) {
			return from
		}
		return -1
	}
	// border[q]: length of the longest proper prefix of pk[:q+1] that is
	// also its suffix, where a failed comparison resumes.
	border := make([]int, len(pk))
	for q, k := 1, 0; q < len(pk); q++ {
		for k > 0 && pk[k] != pk[q] {
			k = border[k-1]
		}
		if pk[k] == pk[q] {
			k++
		}
		border[q] = k
	}
	k := 0
	for i := from; i < len(ks); i++ {
		for k > 0 && ks[i] != pk[k] {
			k = border[k-1]
		}
		if ks[i] == pk[k] {
			k++
		}
		if k == len(pk) {
			start := i - k + 1
			if ok == nil || ok(start) {
				return start
			}
			k = border[k-1]
		}
	}
	return -1
}
