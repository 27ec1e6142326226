package search

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPrefilterLiterals bounds the alternatives a prefilter scans for; a
// query with more (a long alternation) is cheaper to hand to the regexp
// engine than to track that many scanners.
const maxPrefilterLiterals = 12

// QueryError is a query that is not a valid RE2 regular expression, or
// one that could never match a single line.
type QueryError struct {
	Index  int // in Options.Queries
	Query  string
	Reason string
}

// Error implements error.
func (e *QueryError) Error() string {
	return fmt.Sprintf("query %d %q: %s", e.Index+1, e.Query, e.Reason)
}

// CheckQuery reports whether query can be searched for: nil, or a
// *QueryError naming it as query number index+1 and saying what is wrong.
// Search checks its queries too; this is for refusing a call before
// running it.
func CheckQuery(index int, query string) error {
	_, err := compileQuery(index, query)
	return err
}

// matcher finds the lines of a text that match one query. Matching is
// line by line, as in grep and ripgrep: a match never spans a line break,
// and ^ and $ match at the ends of each line.
type matcher struct {
	query string
	line  *regexp.Regexp // the query as given, run on one line at a time
	pre   *prefilter     // nil when the query requires no usable literal
}

// compileQuery builds the matcher of query number index.
func compileQuery(index int, query string) (*matcher, error) {
	fail := func(reason string) (*matcher, error) {
		return nil, &QueryError{Index: index, Query: query, Reason: reason}
	}
	if query == "" {
		return fail("the query is empty")
	}
	re, err := regexp.Compile(query)
	if err != nil {
		if se, ok := errors.AsType[*syntax.Error](err); ok {
			return fail(syntaxReason(se))
		}
		return fail(err.Error())
	}
	tree, err := syntax.Parse(query, syntax.Perl)
	if err != nil {
		return fail(err.Error())
	}
	tree = tree.Simplify()
	if hasNewlineLiteral(tree) {
		return fail("matches are found line by line, so a query cannot contain a line break (\\n); search for one line of it")
	}
	m := &matcher{query: query, line: re}
	lits := wholeLiterals(tree)
	if lits == nil {
		lits = requiredLiterals(tree)
	}
	if len(lits) > 0 && len(lits) <= maxPrefilterLiterals {
		m.pre = newPrefilter(lits)
	}
	return m, nil
}

// syntaxReason words a parse error for someone who may have meant the
// query as plain text.
func syntaxReason(se *syntax.Error) string {
	reason := fmt.Sprintf("not a valid regular expression (RE2 syntax): %s in %q", se.Code, se.Expr)
	switch se.Code {
	case syntax.ErrInvalidPerlOp:
		reason += "; RE2 has no lookahead, lookbehind or backreferences"
	case syntax.ErrInvalidEscape:
		reason += "; RE2 knows escapes such as \\d \\w \\s \\b \\. \\("
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen, syntax.ErrMissingBracket,
		syntax.ErrMissingRepeatArgument, syntax.ErrInvalidRepeatOp:
		reason += "; put a backslash before ( ) [ ] { } * + ? . | to match it literally"
	}
	return reason
}

// hasNewlineLiteral reports whether the pattern requires a literal line
// break somewhere, which no single line can hold.
func hasNewlineLiteral(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return strings.ContainsRune(string(re.Rune), '\n')
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if hasNewlineLiteral(s) {
				return true
			}
		}
	case syntax.OpAlternate:
		// Every alternative must need one for the query to be hopeless.
		for _, s := range re.Sub {
			if !hasNewlineLiteral(s) {
				return false
			}
		}
		return len(re.Sub) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return hasNewlineLiteral(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min > 0 && hasNewlineLiteral(re.Sub[0])
	}
	return false
}

// literal is a string that a match must contain; fold means ASCII
// letters match in either case (text and full are then lower-cased).
type literal struct {
	text []byte
	fold bool
	// full, when set, is a whole branch of the query that text was taken
	// from, at offset off: finding all of it is a match, with no regexp
	// to run. A case-insensitive branch with non-ASCII letters has none.
	full []byte
	off  int
}

func (l *literal) equal(s, t []byte) bool {
	if l.fold {
		return asciiEqualFold(s, t)
	}
	return bytes.Equal(s, t)
}

// wholeLiterals returns the literals of a query that is nothing but one
// literal or an alternation of literals (parentheses aside), with full
// set; otherwise nil. Such queries are common ("TODO", "(?i)(mutex|
// semaphore)") and need no regexp at all once found.
func wholeLiterals(re *syntax.Regexp) []literal {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	if len(branches) > maxPrefilterLiterals {
		return nil
	}
	var lits []literal
	for _, b := range branches {
		for b.Op == syntax.OpCapture {
			b = b.Sub[0]
		}
		if b.Op != syntax.OpLiteral {
			return nil
		}
		fold := b.Flags&syntax.FoldCase != 0
		lit, ok := literalOf(b.Rune, fold)
		if !ok {
			return nil
		}
		if full := []byte(string(b.Rune)); !fold || isASCII(full) {
			if fold {
				full = bytes.ToLower(full)
			}
			lit.full = full
		}
		lits = append(lits, lit)
	}
	return lits
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// requiredLiterals returns literals one of which every match of re
// contains, or nil when it finds no such set. Where it has a choice (the
// parts of a concatenation) it takes the set that is rarest in source
// code, by the byte frequencies of byteFreq.
func requiredLiterals(re *syntax.Regexp) []literal {
	switch re.Op {
	case syntax.OpLiteral:
		if lit, ok := literalOf(re.Rune, re.Flags&syntax.FoldCase != 0); ok {
			return []literal{lit}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min > 0 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []literal
		bestCost := 0
		for _, s := range re.Sub {
			lits := requiredLiterals(s)
			if len(lits) == 0 {
				continue
			}
			if c := literalsCost(lits); best == nil || c < bestCost {
				best, bestCost = lits, c
			}
		}
		return best
	case syntax.OpAlternate:
		var all []literal
		for _, s := range re.Sub {
			lits := requiredLiterals(s)
			if len(lits) == 0 {
				return nil // this branch can match without any literal
			}
			all = append(all, lits...)
			if len(all) > maxPrefilterLiterals {
				return nil
			}
		}
		return all
	}
	return nil
}

// literalOf turns a literal node's runes into a literal to scan for. A
// case-insensitive literal keeps its longest run of characters whose case
// variants are all ASCII: under Unicode folding k also matches the Kelvin
// sign and s the long s, which an ASCII comparison would miss; the regexp
// confirms the rest. off is the run's byte offset in the literal.
func literalOf(runes []rune, fold bool) (literal, bool) {
	if !fold {
		s := string(runes)
		return literal{text: []byte(s)}, s != ""
	}
	var best, cur []byte
	bestOff, curOff, at := 0, 0, 0
	for _, r := range runes {
		if asciiFoldSafe(r) {
			if len(cur) == 0 {
				curOff = at
			}
			cur = append(cur, byte(unicode.ToLower(r)))
		} else {
			if len(cur) > len(best) {
				best, bestOff = cur, curOff
			}
			cur = nil
		}
		at += utf8.RuneLen(r)
	}
	if len(cur) > len(best) {
		best, bestOff = cur, curOff
	}
	return literal{text: best, fold: true, off: bestOff}, len(best) > 0
}

// asciiFoldSafe reports whether r and every character it folds to are
// ASCII.
func asciiFoldSafe(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// rareIndex returns the offset of the literal's rarest byte.
func (l literal) rareIndex() int {
	best, bestF := 0, -1
	for i, b := range l.text {
		if f := l.freq(b); bestF < 0 || f < bestF {
			best, bestF = i, f
		}
	}
	return best
}

// freq is how often b occurs, counting both cases when folding.
func (l literal) freq(b byte) int {
	f := byteFreq(b)
	if l.fold {
		if o := otherCase(b); o != b {
			f += byteFreq(o)
		}
	}
	return f
}

// literalsCost estimates how many candidates scanning for lits yields:
// the sum of their rarest bytes' frequencies, a longer literal winning a
// tie since it is confirmed more often.
func literalsCost(lits []literal) int {
	c := 0
	for _, l := range lits {
		c += l.freq(l.text[l.rareIndex()])*64 - min(len(l.text), 63)
	}
	return c
}

func otherCase(b byte) byte {
	switch {
	case 'a' <= b && b <= 'z':
		return b - 'a' + 'A'
	case 'A' <= b && b <= 'Z':
		return b - 'A' + 'a'
	}
	return b
}

// prefilter finds the lines that contain one of a set of literals. It
// scans for each literal's rarest byte (in both cases when folding) with
// the vectorised bytes.IndexByte, and compares the literal around each
// hit: far fewer hits than scanning for a first byte, which is often a
// common letter. (Scanning once for both cases of a letter, eight bytes
// at a time, was measured slower than two IndexByte scans.)
type prefilter struct {
	lits []literal
	rare []int // per literal, the offset of the byte scanned for
	// scan lists the distinct bytes scanned for; byLit[i] the literals
	// whose rare byte is scan[i].
	scan  []byte
	byLit [][]int
	// second, per literal, is a byte other than the rare one to look at
	// first at a hit: most hits of a common letter end there.
	second []quickByte
}

// quickByte is one byte of a literal, at offset off, compared after or'ing
// in mask (0x20 for a letter compared without case).
type quickByte struct {
	off        int
	mask, want byte
}

func newPrefilter(lits []literal) *prefilter {
	p := &prefilter{lits: lits, rare: make([]int, len(lits)), second: make([]quickByte, len(lits))}
	add := func(b byte, li int) {
		i := bytes.IndexByte(p.scan, b)
		if i < 0 {
			p.scan = append(p.scan, b)
			p.byLit = append(p.byLit, nil)
			i = len(p.scan) - 1
		}
		p.byLit[i] = append(p.byLit[i], li)
	}
	for li, l := range lits {
		r := l.rareIndex()
		p.rare[li] = r
		p.second[li] = secondByte(l, r)
		add(l.text[r], li)
		if l.fold && otherCase(l.text[r]) != l.text[r] {
			add(otherCase(l.text[r]), li)
		}
	}
	return p
}

// secondByte picks the literal's rarest byte besides the one at rare
// (the same one for a literal of one byte).
func secondByte(l literal, rare int) quickByte {
	off, best := rare, -1
	for i, b := range l.text {
		if f := l.freq(b); i != rare && (best < 0 || f < best) {
			off, best = i, f
		}
	}
	q := quickByte{off: off, want: l.text[off]}
	if l.fold && 'a' <= q.want && q.want <= 'z' {
		q.mask = 0x20 // exact for ASCII letters: b|0x20 is c only for c and its upper case
	}
	return q
}

// hit is what the prefilter makes of a position.
type hit int

const (
	noHit     hit = iota
	candidate     // a literal is there; the regexp decides
	match         // a whole branch of the query is there: the line matches
)

// at says whether one of the literals with scan byte si occurs with its
// rare byte at data[pos], and whether that settles the match.
func (p *prefilter) at(data []byte, pos, si int) hit {
	h := noHit
	for _, li := range p.byLit[si] {
		start := pos - p.rare[li]
		q := p.second[li]
		if k := start + q.off; k < 0 || k >= len(data) || data[k]|q.mask != q.want {
			continue
		}
		l := &p.lits[li]
		end := start + len(l.text)
		if start < 0 || end > len(data) || !l.equal(data[start:end], l.text) {
			continue
		}
		if l.full == nil {
			h = candidate
			continue
		}
		start -= l.off
		end = start + len(l.full)
		if start >= 0 && end <= len(data) && l.equal(data[start:end], l.full) {
			return match
		}
		h = candidate
	}
	return h
}

// asciiEqualFold compares s with lower, which is in lower case, ignoring
// the case of ASCII letters only.
func asciiEqualFold(s, lower []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// lines calls yield with the start and end (excluding the line break) of
// each line of data that matches, in order, until yield returns false.
func (m *matcher) lines(data []byte, yield func(start, end int) bool) {
	if m.pre != nil {
		m.prefiltered(data, yield)
		return
	}
	// Without a literal to look for, every line goes through the regexp.
	// One line at a time lets Go's regexp use its backtracker, faster on
	// short inputs than the NFA a whole file needs.
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		if m.line.Match(data[start:end]) && !yield(start, end) {
			return
		}
		start = end + 1
	}
}

// lineHit is a line the prefilter found, and what it found there.
type lineHit struct {
	start, end int
	h          hit
}

// prefiltered runs each of the prefilter's scanners over the whole of
// data, collecting the lines where a literal is, then reports those lines
// in order, each once, confirming with the regexp those that need it.
// One scanner at a time keeps each hit to a call of bytes.IndexByte and
// a comparison; running them side by side, always taking the nearest
// hit, cost as much again per hit in choosing and restarting scanners,
// which for a common letter (a case-insensitive query scans both cases of
// one) was most of the search's matching.
func (m *matcher) prefiltered(data []byte, yield func(start, end int) bool) {
	p := m.pre
	var buf [64]lineHit
	found := buf[:0]
	for si, b := range p.scan {
		// With one literal on the scanner (the usual case) its second
		// byte is looked at here, sparing most hits a call.
		one := len(p.byLit[si]) == 1
		var q quickByte
		if one {
			li := p.byLit[si][0]
			q = p.second[li]
			q.off -= p.rare[li]
		}
		for pos := 0; pos < len(data); {
			i := bytes.IndexByte(data[pos:], b)
			if i < 0 {
				break
			}
			pos += i
			if k := pos + q.off; one && (k < 0 || k >= len(data) || data[k]|q.mask != q.want) {
				pos++
				continue
			}
			h := p.at(data, pos, si)
			if h == noHit {
				pos++
				continue
			}
			start, end := lineAt(data, pos)
			found = append(found, lineHit{start, end, h})
			pos = end + 1
		}
	}
	if len(p.scan) > 1 {
		slices.SortFunc(found, func(a, b lineHit) int { return cmp.Compare(a.start, b.start) })
	}
	for i := 0; i < len(found); {
		f := found[i]
		// The same line found by several scanners: any whole-branch
		// hit settles it.
		for i++; i < len(found) && found[i].start == f.start; i++ {
			f.h = max(f.h, found[i].h)
		}
		if (f.h == match || m.line.Match(data[f.start:f.end])) && !yield(f.start, f.end) {
			return
		}
	}
}

// lineAt returns the bounds of the line holding data[pos], its line
// break excluded.
func lineAt(data []byte, pos int) (start, end int) {
	if pos > len(data) {
		pos = len(data)
	}
	start = bytes.LastIndexByte(data[:pos], '\n') + 1
	end = bytes.IndexByte(data[pos:], '\n')
	if end < 0 {
		return start, len(data)
	}
	return start, pos + end
}
