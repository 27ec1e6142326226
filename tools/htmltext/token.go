package htmltext

import (
	"html"
	"strings"
)

type tokenType uint8

const (
	eofToken tokenType = iota
	textToken
	startTagToken
	endTagToken
	doctypeToken
)

type token struct {
	typ         tokenType
	name        string // lower-case tag name, or the doctype's text
	data        string // text, character references decoded unless raw
	attr        []Attr
	selfClosing bool
}

// maxAttrs bounds the attributes kept per tag: the duplicate check is
// quadratic in them, and no page needs more.
const maxAttrs = 64

// tokenizer splits HTML into tokens. The tree builder tells it, after each
// start tag, whether what follows is raw text (script, style, title...),
// and whether CDATA sections are text (inside svg and math).
type tokenizer struct {
	s   string
	pos int

	rawTag    string // set: the text up to </rawTag is raw text
	rcdata    bool   // the raw text has character references (title, textarea)
	plaintext bool   // everything left is text
	cdata     bool   // <![CDATA[...]]> is text (foreign content)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func isLetter(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z'
}

// lower lower-cases ASCII letters and makes NUL the replacement
// character, as tag and attribute names are read.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c == 0 {
			s = strings.ToLower(s)
			return strings.ReplaceAll(s, "\x00", "\uFFFD")
		}
	}
	return s
}

func (z *tokenizer) next() token {
	for z.pos < len(z.s) {
		if z.plaintext {
			t := token{typ: textToken, data: nulToReplacement(z.s[z.pos:])}
			z.pos = len(z.s)
			return t
		}
		if z.rawTag != "" {
			return z.rawText()
		}
		start := z.pos
		i := start
		for {
			j := strings.IndexByte(z.s[i:], '<')
			if j < 0 {
				z.pos = len(z.s)
				return textTok(z.s[start:])
			}
			i += j
			if i+1 < len(z.s) {
				if c := z.s[i+1]; isLetter(c) || c == '/' || c == '!' || c == '?' {
					break
				}
			}
			i++
		}
		if i > start {
			z.pos = i
			return textTok(z.s[start:i])
		}
		if t, ok := z.markup(); ok {
			return t
		}
	}
	return token{typ: eofToken}
}

func textTok(s string) token {
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return token{typ: textToken, data: s}
}

func nulToReplacement(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// markup reads what starts with '<' at z.pos; ok is false for what
// yields no token (a comment, "</>").
func (z *tokenizer) markup() (token, bool) {
	s, i := z.s, z.pos
	switch c := s[i+1]; {
	case c == '!':
		rest := s[i+2:]
		switch {
		case strings.HasPrefix(rest, "--"):
			z.pos = commentEnd(s, i+4)
			return token{}, false
		case len(rest) >= 7 && strings.EqualFold(rest[:7], "doctype"):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				end = len(s) - i
				z.pos = len(s)
			} else {
				z.pos = i + end + 1
			}
			return token{typ: doctypeToken, name: strings.ToLower(strings.TrimSpace(s[i+9 : i+end]))}, true
		case z.cdata && strings.HasPrefix(rest, "[CDATA["):
			body := s[i+9:]
			end := strings.Index(body, "]]>")
			if end < 0 {
				z.pos = len(s)
				return token{typ: textToken, data: body}, true
			}
			z.pos = i + 9 + end + 3
			return token{typ: textToken, data: body[:end]}, true
		}
		z.bogusComment(i + 2)
		return token{}, false
	case c == '?':
		z.bogusComment(i + 1)
		return token{}, false
	case c == '/':
		switch {
		case i+2 >= len(s):
			z.pos = len(s)
			return token{typ: textToken, data: "</"}, true
		case s[i+2] == '>':
			z.pos = i + 3
			return token{}, false
		case !isLetter(s[i+2]):
			z.bogusComment(i + 2)
			return token{}, false
		}
		t, ok := z.tag(i+2, endTagToken)
		if ok {
			t.attr, t.selfClosing = nil, false
		}
		return t, ok
	}
	return z.tag(i+1, startTagToken)
}

// commentEnd is the position after a comment whose text starts at i:
// after "-->" or "--!>", or the end of the input.
func commentEnd(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], ">"):
		return i + 1
	case strings.HasPrefix(s[i:], "->"):
		return i + 2
	}
	for j := i; j < len(s); {
		k := strings.Index(s[j:], "--")
		if k < 0 {
			break
		}
		j += k + 2
		for j < len(s) && s[j] == '-' {
			j++
		}
		if j < len(s) && s[j] == '>' {
			return j + 1
		}
		if strings.HasPrefix(s[j:], "!>") {
			return j + 2
		}
	}
	return len(s)
}

func (z *tokenizer) bogusComment(i int) {
	if end := strings.IndexByte(z.s[i:], '>'); end >= 0 {
		z.pos = i + end + 1
	} else {
		z.pos = len(z.s)
	}
}

// tag reads a tag whose name starts at i. A tag cut by the end of the
// input is no token: the input ends there.
func (z *tokenizer) tag(i int, typ tokenType) (token, bool) {
	s := z.s
	p := i
	for p < len(s) && !isSpace(s[p]) && s[p] != '/' && s[p] != '>' {
		p++
	}
	t := token{typ: typ, name: lower(s[i:p])}
	for {
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		if p >= len(s) {
			z.pos = len(s)
			return token{}, false
		}
		switch s[p] {
		case '>':
			z.pos = p + 1
			return t, true
		case '/':
			p++
			if p < len(s) && s[p] == '>' {
				t.selfClosing = true
				z.pos = p + 1
				return t, true
			}
			continue
		}
		q := p
		p++ // a name may start with '='
		for p < len(s) && !isSpace(s[p]) && s[p] != '/' && s[p] != '>' && s[p] != '=' {
			p++
		}
		key := lower(s[q:p])
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		val := ""
		if p < len(s) && s[p] == '=' {
			p++
			for p < len(s) && isSpace(s[p]) {
				p++
			}
			if p >= len(s) {
				z.pos = len(s)
				return token{}, false
			}
			switch quote := s[p]; quote {
			case '"', '\'':
				end := strings.IndexByte(s[p+1:], quote)
				if end < 0 {
					z.pos = len(s)
					return token{}, false
				}
				val = s[p+1 : p+1+end]
				p += end + 2
			case '>':
			default:
				v := p
				for p < len(s) && !isSpace(s[p]) && s[p] != '>' {
					p++
				}
				val = s[v:p]
			}
		}
		if typ == startTagToken && len(t.attr) < maxAttrs && !hasAttr(t.attr, key) {
			t.attr = append(t.attr, Attr{Key: key, Val: nulToReplacement(unescapeAttr(val))})
		}
	}
}

func hasAttr(attrs []Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// unescapeAttr decodes the character references of an attribute value.
// A named reference without its semicolon is left as written when a
// letter, digit or '=' follows it, as browsers do, so that a query such
// as "?a=1&copy=2" keeps its "&copy".
func unescapeAttr(v string) string {
	amp := strings.IndexByte(v, '&')
	if amp < 0 {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for amp >= 0 {
		b.WriteString(v[:amp])
		v = v[amp:]
		n := 1
		for n < len(v) && isAlnum(v[n]) {
			n++
		}
		switch {
		case len(v) > 1 && v[1] == '#':
			// Numeric: decoded wherever it stands; find its end.
			n = 2
			if n < len(v) && (v[n] == 'x' || v[n] == 'X') {
				n++
			}
			for n < len(v) && isAlnum(v[n]) {
				n++
			}
			if n < len(v) && v[n] == ';' {
				n++
			}
			b.WriteString(html.UnescapeString(v[:n]))
		case n == 1:
			b.WriteByte('&')
		case n < len(v) && v[n] == ';':
			ref := v[:n+1]
			if d := html.UnescapeString(ref); d != ref && (!strings.HasSuffix(d, ";") || ref == "&semi;") {
				b.WriteString(d)
			} else {
				b.WriteString(ref)
			}
			n++
		default:
			// No semicolon: only a whole legacy name (as "&amp" or
			// "&copy") not followed by '=' is a reference.
			ref := v[:n]
			d := html.UnescapeString(ref)
			if d != ref && d[len(d)-1] != ref[len(ref)-1] && !(n < len(v) && v[n] == '=') {
				b.WriteString(d)
			} else {
				b.WriteString(ref)
			}
		}
		v = v[n:]
		amp = strings.IndexByte(v, '&')
	}
	b.WriteString(v)
	return b.String()
}

func isAlnum(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9'
}

// rawText reads the text of a raw-text element up to its end tag, which
// is then read as a tag.
func (z *tokenizer) rawText() token {
	s := z.s[z.pos:]
	end := len(s)
	if z.rawTag == "script" {
		end = scriptEnd(s)
	} else {
		for i := 0; ; {
			j := strings.Index(s[i:], "</")
			if j < 0 {
				break
			}
			i += j
			if endTagAt(s, i, z.rawTag) {
				end = i
				break
			}
			i += 2
		}
	}
	text := s[:end]
	z.pos += end
	rc := z.rcdata
	z.rawTag, z.rcdata = "", false
	if text == "" {
		return z.next()
	}
	if rc {
		t := textTok(text)
		t.data = nulToReplacement(t.data)
		return t
	}
	return token{typ: textToken, data: nulToReplacement(text)}
}

// endTagAt reports whether s[i:] starts with the end tag </name
// followed by what ends a tag name.
func endTagAt(s string, i int, name string) bool {
	j := i + 2 + len(name)
	if j > len(s) || !strings.EqualFold(s[i+2:j], name) {
		return false
	}
	return j < len(s) && (isSpace(s[j]) || s[j] == '/' || s[j] == '>')
}

// scriptEnd finds the </script> that ends a script's text. Inside an
// escape "<!-- ... -->" a nested "<script>" makes the next "</script>"
// part of the text, as old pages that document.write scripts rely on.
func scriptEnd(s string) int {
	const (
		data = iota
		escaped
		double
	)
	state := data
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			switch {
			case state == data && strings.HasPrefix(s[i:], "<!--"):
				state = escaped
				i++ // at '!': the dashes may close it at once ("<!-->")
			case state != double && endTagAt(s, i, "script"):
				return i
			case state == escaped && startTagAt(s, i, "script"):
				state = double
				i += 7
			case state == double && endTagAt(s, i, "script"):
				state = escaped
				i += 8
			}
		case '-':
			if state != data && strings.HasPrefix(s[i:], "-->") {
				state = data
				i += 2
			}
		}
	}
	return len(s)
}

func startTagAt(s string, i int, name string) bool {
	j := i + 1 + len(name)
	if j >= len(s) || !strings.EqualFold(s[i+1:j], name) {
		return false
	}
	return isSpace(s[j]) || s[j] == '/' || s[j] == '>'
}
