package edit

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the rules every engine uses to place lines the model
// sent where they did not match byte for byte (docs/DESIGN.md §3, "Where
// a loose match may land"). They exist for one promise: a loose match
// either lands where the model meant, written the way the file is
// written, or does not land at all.
//
//   - A loose match is applied only when it is the one place that fits at
//     its level; two places are refused, never resolved by order.
//   - Lines matched with their indentation ignored must differ from the
//     model's by one uniform shift (or tabs for spaces, level for level);
//     the new lines get the same shift.
//   - Copied line numbers ("12 | ", "    12\t") are stripped only when
//     every line has them and they count up by one.
//   - A line that stands for code the model left out ("// ... existing
//     code ...") is refused unless the file has that very line there.
//   - With the text the model last read (LastRead): lines exact there that
//     fit only loosely now land only where the file changed since, and
//     lines at one place there that occur several times now go to that
//     place or nowhere.

// placement is where a run of lines fits and what it took.
type placement struct {
	at int
	// pattern is the model's lines as they matched (numbers stripped).
	pattern []string
	level   level
	numbers bool
	// indent maps the model's indentation to the file's; nil when the
	// lines match with their indentation as sent.
	indent *indenter
}

// how describes the tolerances a placement used, for the note the model
// is shown; "" for an exact match.
func (p placement) how() string {
	var parts []string
	if p.numbers {
		parts = append(parts, "without the line numbers copied from read_files")
	}
	switch {
	case p.indent != nil && p.indent.converted:
		parts = append(parts, "with tabs and spaces converted to the file's indentation")
	case p.indent != nil:
		parts = append(parts, "with its indentation shifted to the file's")
	case p.level == trimRight:
		parts = append(parts, "ignoring whitespace at line ends")
	case p.level >= trimBoth:
		parts = append(parts, "with leading and trailing whitespace ignored")
	}
	if p.level == punct {
		parts = append(parts, "with Unicode punctuation read as ASCII")
	}
	return strings.Join(parts, ", ")
}

// ambiguity is the refusal of a match that fits at several places.
type ambiguity struct {
	places []int // 0-based starts
	n      int   // lines per place
	what   string
}

func (a *ambiguity) message() string {
	var b strings.Builder
	if a.what == "" {
		fmt.Fprintf(&b, "the lines match at %d places (", len(a.places))
	} else {
		fmt.Fprintf(&b, "the lines match only %s, and then at %d places (", a.what, len(a.places))
	}
	for i, p := range a.places {
		if i == 4 {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(lineRange(p, a.n))
	}
	b.WriteString("), so the place to edit is ambiguous. Include more of the surrounding lines, copied exactly, to make it unique.")
	return b.String()
}

// looseLevels are the levels a loose match is tried at, strictest first;
// apply_patch adds punct, its own conformance data's fourth level.
var (
	looseLevels      = []level{trimRight, trimBoth}
	patchLooseLevels = []level{trimRight, trimBoth, punct}
)

// placeLoose finds the one place where pattern fits at the first of
// levels that fits anywhere (from line from on, where ok allows), with the
// copied line numbers stripped when every line has them. A level whose
// fits are several is an ambiguity, returned as such rather than passed
// over: a looser level would only find more. extra are the model's other
// lines (the new text), which decide its indentation unit.
func (m *matcher) placeLoose(pattern []string, from int, ok func(int) bool, levels []level, extra []string) (placement, *ambiguity) {
	variants := [][]string{pattern}
	stripped, hasNumbers := stripLineNumbers(pattern)
	if hasNumbers {
		variants = append(variants, stripped)
	}
	for vi, pat := range variants {
		numbered := vi == 1
		lv := levels
		if numbered {
			lv = append([]level{exact}, levels...)
		}
		for _, l := range lv {
			var fits []placement
			for i := from; ; {
				at := m.find(pat, i, l, ok)
				if at < 0 {
					break
				}
				i = at + 1
				p := placement{at: at, pattern: pat, level: l, numbers: numbered}
				if l >= trimBoth {
					// A place whose indentation maps by no rule still
					// counts against uniqueness: the model may have meant
					// it.
					ind, ok := newIndenter(pat, fileTexts(m.lines[at:at+len(pat)]), extra, m.lines)
					if !ok {
						p.at = -1
					} else if !ind.identity {
						p.indent = ind
					}
				}
				fits = append(fits, p)
				if len(fits) > 8 {
					break
				}
			}
			switch len(fits) {
			case 0:
				continue
			case 1:
				if fits[0].at < 0 {
					return placement{at: -1}, nil
				}
				return fits[0], nil
			}
			a := &ambiguity{n: len(pat), what: placement{level: l, numbers: numbered}.describeLevel()}
			for i := from; len(a.places) < len(fits); {
				at := m.find(pat, i, l, ok)
				a.places = append(a.places, at)
				i = at + 1
			}
			return placement{at: -1}, a
		}
	}
	return placement{at: -1}, nil
}

func (p placement) describeLevel() string {
	switch p.level {
	case exact:
		return "without their line numbers"
	case trimRight:
		return "with whitespace at line ends ignored"
	case trimBoth:
		return "with their indentation ignored"
	}
	return "with whitespace and Unicode punctuation ignored"
}

// LineRange names n lines from the 1-based line first, the way every
// message of the edit tools does: "line 3", "lines 3-7".
func LineRange(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, first+n-1)
}

// lineRange is LineRange from a 0-based index.
func lineRange(at, n int) string { return LineRange(at+1, n) }

// LinesAt is the 1-based line where lines occur in text as whole lines,
// whitespace at line ends aside, or 0.
func LinesAt(text string, lines []string) int {
	if len(lines) == 0 {
		return 0
	}
	return newMatcher(parseDocument(text).lines).find(lines, 0, trimRight, nil) + 1
}

func fileTexts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// lineNumberRE is a line as read_files shows it ("12 | text") or as
// cat -n does ("    12\ttext").
var lineNumberRE = regexp.MustCompile(`^\s*(\d+)(?: \| ?|\t)`)

// stripLineNumbers removes copied line numbers from lines when every line
// carries one and they count up by one; otherwise the numbers may be the
// text itself, and lines is returned as it is.
func stripLineNumbers(lines []string) ([]string, bool) {
	if len(lines) == 0 {
		return lines, false
	}
	out := make([]string, len(lines))
	prev := -1
	for i, l := range lines {
		m := lineNumberRE.FindStringSubmatch(l)
		if m == nil {
			return lines, false
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || prev >= 0 && n != prev+1 {
			return lines, false
		}
		prev = n
		out[i] = l[len(m[0]):]
	}
	return out, true
}

// stripNewNumbers removes line numbers from the model's new lines when
// its old lines had them and every new line has one too (the numbers of
// new lines need not count up: the model numbers what it inserts as it
// likes).
func stripNewNumbers(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		m := lineNumberRE.FindString(l)
		if m == "" {
			if strings.TrimSpace(l) == "" {
				out[i] = ""
				continue
			}
			return lines
		}
		out[i] = l[len(m):]
	}
	return out
}

// indenter maps the model's indentation to the file's.
type indenter struct {
	// A uniform shift: the model's indentation from, the file's to.
	from, to string
	// Tabs for spaces: each model level of munit becomes funit, with
	// delta levels added.
	converted    bool
	munit, funit string
	delta        int
	identity     bool
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// newIndenter finds how the model's lines (model) are indented against
// the file's (file, the same number of lines): one shift of the same
// whitespace, or tabs for spaces with the levels kept. extra are the
// model's other lines and all the file's lines, used only to learn how
// many spaces make one level. It fails when no one rule maps every line.
func newIndenter(model, file, extra []string, all []line) (*indenter, bool) {
	var ms, fs []string
	for i := range model {
		if strings.TrimSpace(model[i]) == "" || strings.TrimSpace(file[i]) == "" {
			continue
		}
		ms, fs = append(ms, indentOf(model[i])), append(fs, indentOf(file[i]))
	}
	if len(ms) == 0 {
		return &indenter{identity: true}, true
	}
	// A uniform shift: the least indented model line gives from, its
	// file line gives to, and every other line must agree.
	k := 0
	for i := range ms {
		if len(ms[i]) < len(ms[k]) {
			k = i
		}
	}
	from, to := ms[k], fs[k]
	shift := true
	for i := range ms {
		if !strings.HasPrefix(ms[i], from) || fs[i] != to+ms[i][len(from):] {
			shift = false
			break
		}
	}
	// The model's indentation, its new lines' included, against the
	// file's: a shift carries the model's characters over, which is only
	// right when both indent with the same one.
	modelAll := append(slices.Clone(ms), indentsOf(extra)...)
	mch, mok := indentChar(modelAll)
	fch, fok := indentChar(fs)
	clash := mok && fok && mch != 0 && fch != 0 && mch != fch
	if shift && !clash {
		return &indenter{from: from, to: to, identity: from == to}, true
	}
	// Tabs for spaces or spaces for tabs, level for level.
	if !mok || !fok || mch == fch || mch == 0 || fch == 0 {
		return nil, false
	}
	munit := unitOf(mch, modelAll)
	// The file's level is learned where the lines matched, and from the
	// whole file only when they are all at one level.
	funit := unitOf(fch, fs)
	if fch == ' ' && len(slices.Compact(slices.Clone(fs))) == 1 {
		var fileIndents []string
		for _, l := range all {
			if strings.TrimSpace(l.text) != "" {
				fileIndents = append(fileIndents, indentOf(l.text))
			}
		}
		funit = unitOf(fch, fileIndents)
	}
	if munit == "" || funit == "" {
		return nil, false
	}
	delta, first := 0, true
	for i := range ms {
		ml, ok1 := levelOf(ms[i], munit)
		fl, ok2 := levelOf(fs[i], funit)
		if !ok1 || !ok2 {
			return nil, false
		}
		if first {
			delta, first = fl-ml, false
		} else if fl-ml != delta {
			return nil, false
		}
	}
	return &indenter{converted: true, munit: munit, funit: funit, delta: delta}, true
}

func indentsOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, indentOf(l))
		}
	}
	return out
}

// indentChar is the one character the indentations use (0 for none), or
// false when they mix tabs and spaces.
func indentChar(ins []string) (byte, bool) {
	var c byte
	for _, s := range ins {
		for i := 0; i < len(s); i++ {
			if c == 0 {
				c = s[i]
			} else if s[i] != c {
				return 0, false
			}
		}
	}
	return c, true
}

// unitOf is one level of indentation: a tab, or as many spaces as the
// greatest common divisor of the space indentations (at most 8).
func unitOf(c byte, ins []string) string {
	switch c {
	case '\t':
		return "\t"
	case 0:
		return ""
	}
	g := 0
	for _, s := range ins {
		if n := len(s); n > 0 && strings.Trim(s, " ") == "" {
			g = gcd(g, n)
		}
	}
	if g == 0 || g > 8 {
		return ""
	}
	return strings.Repeat(" ", g)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func levelOf(ind, unit string) (int, bool) {
	if ind == "" {
		return 0, true
	}
	if len(ind)%len(unit) != 0 || strings.ReplaceAll(ind, unit, "") != "" {
		return 0, false
	}
	return len(ind) / len(unit), true
}

// apply gives a new line of the model's the file's indentation. It fails
// for a line it cannot map: less indented than the shift allows, or
// indented in a way the conversion does not know.
func (ind *indenter) apply(s string) (string, bool) {
	if ind == nil || ind.identity || strings.TrimSpace(s) == "" {
		return s, true
	}
	in, rest := indentOf(s), strings.TrimLeft(s, " \t")
	if ind.converted {
		l, ok := levelOf(in, ind.munit)
		if !ok || l+ind.delta < 0 {
			return "", false
		}
		return strings.Repeat(ind.funit, l+ind.delta) + rest, true
	}
	if strings.HasPrefix(in, ind.from) {
		return ind.to + in[len(ind.from):] + rest, true
	}
	// Less indented than the block's least indented line: the part of
	// from it lacks must be the end of to, so that it can come off.
	if cut, ok := strings.CutPrefix(ind.from, in); ok && strings.HasSuffix(ind.to, cut) {
		return ind.to[:len(ind.to)-len(cut)] + rest, true
	}
	return "", false
}

// reindent maps every new line through ind, or says which line it could
// not place.
func reindent(ind *indenter, lines []string) ([]string, error) {
	if ind == nil || ind.identity {
		return lines, nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		r, ok := ind.apply(l)
		if !ok {
			return nil, fmt.Errorf("the lines matched with their indentation changed, but new line %d (%q) is indented in a way that cannot be carried over to the file's indentation. Send the lines with the file's own indentation", i+1, l)
		}
		out[i] = r
	}
	return out, nil
}

// LastRead is the text of a file as the model last read it, when the
// session knows it (Known). A loose match is then held to the place the
// model's lines had in that text (sinceRead).
type LastRead struct {
	Text  string
	Known bool
}

// sinceRead checks a loose placement p of pattern in the current lines
// against the text the model last read. Lines that were exactly there
// then, and match only loosely now, changed under the model: the loose
// place is accepted only where the file changed since (the user's
// typing, a format-on-save re-indenting the lines), never at a look-alike
// elsewhere while the place the model read is what changed. It returns
// the refusal, or "".
func sinceRead(read LastRead, cur []line, p placement) string {
	if !read.Known || p.at < 0 || p.level == exact && !p.numbers {
		return ""
	}
	seen := parseDocument(read.Text).lines
	n := len(p.pattern)
	x := newMatcher(seen).find(p.pattern, 0, exact, nil)
	if x < 0 {
		// The model's lines were not exact when it read them either: the
		// tolerance forgives its copying, not a change of the file.
		return ""
	}
	pre, suf := changedWindow(seen, cur)
	var ok bool
	switch {
	case x+n <= pre:
		ok = p.at == x
	case x >= len(seen)-suf:
		ok = p.at == x+len(cur)-len(seen)
	default:
		// Inside the changed window, and text that is new since the
		// read: lines the read already held as they are now were there
		// for the model to see, and its lines did not match them then.
		ok = p.at < len(cur)-suf && p.at+n > pre &&
			newMatcher(seen).find(fileTexts(cur[p.at:p.at+n]), 0, exact, nil) < 0
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("your lines are exactly %s of the file as you last read it, and they do not match there now; what matches them loosely now, %s, is another place. The file changed since you read it: read it again and send the lines as they are now.",
		lineRange(x, n), lineRange(p.at, n))
}

// changedWindow is where two versions of a file differ: the first pre
// lines and the last suf lines are the same in both.
func changedWindow(seen, cur []line) (pre, suf int) {
	for pre < len(seen) && pre < len(cur) && seen[pre].text == cur[pre].text {
		pre++
	}
	for suf < len(seen)-pre && suf < len(cur)-pre && seen[len(seen)-1-suf].text == cur[len(cur)-1-suf].text {
		suf++
	}
	return pre, suf
}

// exactPlaces lists where pattern occurs exactly from line from on, as
// far as ok allows, up to nine places.
func (m *matcher) exactPlaces(pattern []string, from int, ok func(int) bool) []int {
	var places []int
	for i := m.find(pattern, from, exact, ok); i >= 0 && len(places) < 9; i = m.find(pattern, i+1, exact, ok) {
		places = append(places, i)
	}
	return places
}

// resolveCopies decides between the exact places of pattern (two or
// more, from line from on) with the text the model last read: the place
// the lines had there, carried through the change since (mapLines), or a
// refusal when they were unique there and no place is certain now. It
// returns -1 and "" when the read does not decide, and the caller's own
// rule stands.
func (m *matcher) resolveCopies(read LastRead, pattern []string, places []int, ok func(int) bool) (int, string) {
	at, unique, mapped := mapLines(read, m.lines, pattern)
	if mapped && at >= places[0] && (ok == nil || ok(at)) {
		return at, ""
	}
	if !unique {
		return -1, ""
	}
	a := &ambiguity{places: places, n: len(pattern)}
	return -1, a.message() + " They were at one place when you last read the file, and it changed since; read it again."
}

// mapLines finds pattern, which occurs exactly more than once in the
// current lines, at the one place it had in the text the model last read,
// carried through the change since: it must have been unique there and
// lie before or after everything that changed. unique says whether it was
// unique in what was read (so that several places now are news to the
// model); ok whether the place is certain and holds the lines now.
func mapLines(read LastRead, cur []line, pattern []string) (at int, unique, ok bool) {
	if !read.Known {
		return -1, false, false
	}
	seen := parseDocument(read.Text).lines
	sm := newMatcher(seen)
	x := sm.find(pattern, 0, exact, nil)
	if x < 0 || sm.find(pattern, x+1, exact, nil) >= 0 {
		return -1, false, false
	}
	n := len(pattern)
	pre, suf := changedWindow(seen, cur)
	switch {
	case x+n <= pre:
		at = x
	case x >= len(seen)-suf:
		at = x + len(cur) - len(seen)
	default:
		return -1, true, false
	}
	for j := range n {
		if cur[at+j].text != pattern[j] {
			return -1, true, false
		}
	}
	return at, true, true
}

// mapOffset is mapLines for editor's literal old_text o, by bytes: the
// offset of the one occurrence o had in what the model read, carried
// through the change since, when it holds o now and is not inside a word.
func mapOffset(read LastRead, text, o string) (int, bool) {
	if !read.Known {
		return -1, false
	}
	seen := read.Text
	x := strings.Index(seen, o)
	if x < 0 || strings.Contains(seen[x+1:], o) {
		return -1, false
	}
	pre := 0
	for pre < len(seen) && pre < len(text) && seen[pre] == text[pre] {
		pre++
	}
	suf := 0
	for suf < len(seen)-pre && suf < len(text)-pre && seen[len(seen)-1-suf] == text[len(text)-1-suf] {
		suf++
	}
	at := -1
	switch {
	case x+len(o) <= pre:
		at = x
	case x >= len(seen)-suf:
		at = x + len(text) - len(seen)
	default:
		return -1, false
	}
	if text[at:at+len(o)] != o || insideWord(text, at, at+len(o)) {
		return -1, false
	}
	return at, true
}

// Placeholders.

// placeholderWords are the words of a comment that stands for code left
// out, when it has an ellipsis.
var placeholderWords = map[string]bool{
	"existing": true, "rest": true, "remaining": true, "unchanged": true, "omitted": true, "same": true,
	"previous": true, "other": true, "more": true, "code": true, "here": true, "etc": true, "snip": true,
	"truncated": true, "elided": true, "before": true, "above": true, "below": true, "remains": true,
}

// placeholderPhraseRE is such a comment without an ellipsis.
var placeholderPhraseRE = regexp.MustCompile(`^(keep |keeping |the )?(existing code|rest of\b|remaining\b)|\bunchanged$|\bremains? the same$|\bomitted( for brevity)?$|^(previous|other) code\b`)

// commentWrappers are what may surround a placeholder's words.
var (
	placeholderOpen  = []string{"<!--", "{/*", "/*", "//", "--", "#", ";", "%", "(", "[", "{", "*"}
	placeholderClose = []string{"*/}", "-->", "*/", ")", "]", "}"}
)

// isPlaceholder reports whether the line at i of lines stands for code
// the model left out: a bare ellipsis, or a comment (or bracketed note)
// that is only an ellipsis or says the code is elsewhere ("// ...
// existing code ...", "# rest unchanged", "(rest of file unchanged)").
// Code that merely contains "..." (a variadic, a spread, a Python stub
// body after a line ending in ':') is not one.
func isPlaceholder(lines []string, i int) bool {
	t := strings.TrimSpace(lines[i])
	if t == "" || len(t) > 100 {
		return false
	}
	// Most lines are neither an ellipsis nor a comment, and are let go
	// without the full reading below.
	if !strings.Contains(t, "...") && !strings.Contains(t, "…") && !strings.ContainsRune("/#-;%([{*<", rune(t[0])) {
		return false
	}
	core, wrapped := t, false
	for {
		before := core
		for _, p := range placeholderOpen {
			if s, ok := strings.CutPrefix(core, p); ok {
				core, wrapped = strings.TrimSpace(s), true
				break
			}
		}
		for _, p := range placeholderClose {
			if s, ok := strings.CutSuffix(core, p); ok {
				core, wrapped = strings.TrimSpace(s), true
				break
			}
		}
		if core == before {
			break
		}
	}
	c := strings.ToLower(strings.ReplaceAll(core, "…", "..."))
	if strings.Trim(c, ". ") == "" {
		if !strings.Contains(c, "...") {
			return false
		}
		if !wrapped && pythonBody(lines, i) {
			return false
		}
		return true
	}
	words := strings.FieldsFunc(c, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > 8 {
		return false
	}
	if strings.Contains(c, "...") {
		for _, w := range words {
			if placeholderWords[w] {
				return true
			}
		}
		return false
	}
	return wrapped && placeholderPhraseRE.MatchString(strings.Join(words, " "))
}

// pythonBody reports whether a bare "..." at i is the whole body of the
// block the line before it opens: a Python stub. A "..." with more of the
// block after it stands for the lines it leaves out.
func pythonBody(lines []string, i int) bool {
	head := -1
	for j := i - 1; j >= 0; j-- {
		if t := strings.TrimSpace(lines[j]); t != "" {
			if strings.HasSuffix(t, ":") && len(indentOf(lines[i])) > len(indentOf(lines[j])) {
				head = j
			}
			break
		}
	}
	if head < 0 {
		return false
	}
	for j := i + 1; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) != "" {
			return len(indentOf(lines[j])) <= len(indentOf(lines[head]))
		}
	}
	return true
}

// firstPlaceholder returns the first placeholder line of lines whose text
// is not among keep (the file's own lines at the matched place), or -1.
func firstPlaceholder(lines []string, keep []string) int {
	return firstPlaceholderOf(lines, func() []string { return keep })
}

// firstPlaceholderOf is firstPlaceholder with the file's lines computed
// only when a placeholder is there to be looked up.
func firstPlaceholderOf(lines []string, keepOf func() []string) int {
	var keep []string
	known := false
	for i := range lines {
		if !isPlaceholder(lines, i) {
			continue
		}
		if !known {
			keep, known = keepOf(), true
		}
		t := strings.TrimSpace(lines[i])
		kept := false
		for _, k := range keep {
			if strings.TrimSpace(k) == t {
				kept = true
				break
			}
		}
		if !kept {
			return i
		}
	}
	return -1
}

// Placeholder returns the first line of newText that stands for code left
// out (isPlaceholder) and that oldText does not hold too, for a tool that
// replaces a whole text (write_to_file); ok is false when there is none.
func Placeholder(newText, oldText string) (line string, ok bool) {
	lines := strings.Split(toEOL(newText, "\n"), "\n")
	if i := firstPlaceholder(lines, strings.Split(toEOL(oldText, "\n"), "\n")); i >= 0 {
		return strings.TrimSpace(lines[i]), true
	}
	return "", false
}

// placeholderMessage refuses a call whose lines hold a placeholder.
func placeholderMessage(side, line string) string {
	return fmt.Sprintf("%s contains the placeholder line %q, which stands for code left out rather than being code. Nothing is ever written in place of real lines on the strength of such a line: send the actual lines, every one of them, or make several smaller edits that each cover only lines you send in full.", side, strings.TrimSpace(line))
}

// Words.

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// insideWord reports whether text[at:end], a match of the model's text,
// starts or ends in the middle of a word: a word character of the model's
// text next to one of the file's.
func insideWord(text string, at, end int) bool {
	if at > 0 && at < end {
		before, _ := utf8.DecodeLastRuneInString(text[:at])
		first, _ := utf8.DecodeRuneInString(text[at:])
		if isWordRune(before) && isWordRune(first) {
			return true
		}
	}
	if end < len(text) && end > at {
		last, _ := utf8.DecodeLastRuneInString(text[:end])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if isWordRune(last) && isWordRune(after) {
			return true
		}
	}
	return false
}
