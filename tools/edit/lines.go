package edit

import "strings"

// bom is the UTF-8 byte order mark. It belongs to no line: it is set aside
// before lines are compared, so that a first line can match, and put back
// when the text is rebuilt.
const bom = "\uFEFF"

// eolCounts records how often each line terminator occurs in a text.
type eolCounts struct {
	lf, crlf, cr int
}

// countEOL counts the terminators of s. strings.Count runs vectorised, so
// this costs far less than a byte loop even on a 10 MiB file, and the
// "\r\n" pass is skipped for the common file without any '\r'.
func countEOL(s string) eolCounts {
	n := strings.Count(s, "\n")
	r := strings.Count(s, "\r")
	crlf := 0
	if r > 0 {
		crlf = strings.Count(s, "\r\n")
	}
	return eolCounts{lf: n - crlf, crlf: crlf, cr: r - crlf}
}

// dominant is the terminator new lines get. Ties go to LF, the most common
// convention; a text without line breaks also gets LF.
func (c eolCounts) dominant() string {
	switch {
	case c.lf >= c.crlf && c.lf >= c.cr:
		return "\n"
	case c.crlf >= c.cr:
		return "\r\n"
	default:
		return "\r"
	}
}

// kinds lists the terminators present in the text, dominant first.
func (c eolCounts) kinds() []string {
	d := c.dominant()
	out := []string{d}
	for _, k := range []struct {
		eol string
		n   int
	}{{"\n", c.lf}, {"\r\n", c.crlf}, {"\r", c.cr}} {
		if k.n > 0 && k.eol != d {
			out = append(out, k.eol)
		}
	}
	return out
}

// toEOL rewrites the line breaks of s ("\r\n" or "\n"; a lone '\r' is
// left alone, it is more likely a character than a line break in text a
// model wrote) as eol. It returns s itself when nothing changes, which is
// the common case and keeps the large-file path free of copies.
func toEOL(s, eol string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	hasCR := strings.Contains(s, "\r\n")
	if eol == "\n" && !hasCR {
		return s
	}
	if hasCR {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	if eol != "\n" {
		s = strings.ReplaceAll(s, "\n", eol)
	}
	return s
}

// line is one line of a document: its text, its terminator ("" only for a
// last line without one) and whether the edit produced it.
type line struct {
	text  string
	eol   string
	fresh bool
}

// document is a text split into lines, with what is needed to rebuild it.
type document struct {
	bom   bool
	lines []line
	// eol is the dominant terminator, given to new lines.
	eol string
	// finalNewline says whether the text ended with a terminator; an
	// empty text counts as ending with one, so content written into an
	// empty file gets a final newline.
	finalNewline bool
}

// parseDocument splits text into lines at "\r\n", "\n" and a lone "\r".
// The lines share text's memory; only the slice of headers is allocated.
func parseDocument(text string) document {
	var d document
	if strings.HasPrefix(text, bom) {
		d.bom = true
		text = text[len(bom):]
	}
	c := countEOL(text)
	d.eol = c.dominant()
	d.finalNewline = text == "" || text[len(text)-1] == '\n' || text[len(text)-1] == '\r'
	d.lines = make([]line, 0, c.lf+c.crlf+c.cr+1)
	if c.cr == 0 && c.crlf == 0 {
		// Fast path: only '\n', found with the vectorised IndexByte.
		for text != "" {
			i := strings.IndexByte(text, '\n')
			if i < 0 {
				d.lines = append(d.lines, line{text: text})
				break
			}
			d.lines = append(d.lines, line{text: text[:i], eol: "\n"})
			text = text[i+1:]
		}
		return d
	}
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			d.lines = append(d.lines, line{text: text[start:i], eol: "\n"})
			start = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				d.lines = append(d.lines, line{text: text[start:i], eol: "\r\n"})
				i++
			} else {
				d.lines = append(d.lines, line{text: text[start:i], eol: "\r"})
			}
			start = i + 1
		}
	}
	if start < len(text) {
		d.lines = append(d.lines, line{text: text[start:]})
	}
	return d
}

// render joins lines back into a text with d's byte order mark. Every
// line but the last needs a terminator: an old last line that had none
// gets the dominant one once something follows it. A fresh last line
// ends the way the original text ended, so an edit neither adds nor drops
// the final newline; an original last line keeps whatever it had, which is
// what happens when the edit deleted the lines after it.
func (d document) render(lines []line) string {
	n := 0
	if d.bom {
		n += len(bom)
	}
	for _, l := range lines {
		n += len(l.text) + 2
	}
	var b strings.Builder
	b.Grow(n)
	if d.bom {
		b.WriteString(bom)
	}
	for i, l := range lines {
		b.WriteString(l.text)
		eol := l.eol
		last := i == len(lines)-1
		switch {
		case last && l.fresh:
			eol = ""
			if d.finalNewline {
				eol = d.eol
			}
		case !last && eol == "":
			eol = d.eol
		}
		b.WriteString(eol)
	}
	return b.String()
}

// freshLines turns text the model wrote into new lines. One final line
// break ends the last line rather than starting an empty one, matching how
// files are split.
func freshLines(texts []string) []line {
	out := make([]line, len(texts))
	for i, t := range texts {
		out[i] = line{text: t, fresh: true}
	}
	return out
}
