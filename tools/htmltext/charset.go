package htmltext

import (
	"bytes"
	"errors"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
)

// Decode converts a page to UTF-8, in whichever of the encodings of the
// WHATWG Encoding Standard it is written (see Sniff).
func Decode(body []byte, contentType string) string {
	enc, name, bom := Sniff(body, contentType)
	body = body[bom:]
	if name == "utf-8" {
		return validUTF8(body)
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		// The decoders replace what they cannot read with U+FFFD and do
		// not fail; should one, the text is still shown.
		return validUTF8(body)
	}
	return string(out)
}

// Sniff determines a page's encoding as the HTML standard's encoding
// sniffing does, in its order: a byte order mark (bom is its length, to
// drop), else the Content-Type's charset, else a <meta> found by the
// prescan of the first 1024 bytes, else one further on; without any, UTF-8 when the page is
// valid UTF-8 beyond ASCII, else windows-1252 (the standard leaves this
// last guess to the browser; this is the common one, and ASCII reads the
// same in both). name is the encoding's WHATWG name.
func Sniff(body []byte, contentType string) (enc encoding.Encoding, name string, bom int) {
	switch {
	case bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")):
		return named("utf-8", 3)
	case bytes.HasPrefix(body, []byte("\xFE\xFF")):
		return named("utf-16be", 2)
	case bytes.HasPrefix(body, []byte("\xFF\xFE")):
		return named("utf-16le", 2)
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if e, err := getEncoding(params["charset"]); err == nil {
			return named1(e)
		}
	}
	if e := prescan(body[:min(len(body), 1024)]); e != nil {
		return named1(e)
	}
	// With the encoding still a guess, a <meta> the parser meets later
	// changes it (the standard's "change the encoding", which a browser
	// does by reparsing). The prescan of the rest stands in for the
	// parser; the page is whole in memory, so nothing is reparsed.
	if len(body) > 1024 {
		if e := prescan(body); e != nil {
			return named1(e)
		}
	}
	if !isASCII(body) && utf8.Valid(body) {
		return named("utf-8", 0)
	}
	return named("windows-1252", 0)
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func named(label string, bom int) (encoding.Encoding, string, int) {
	e, _ := htmlindex.Get(label)
	name, _ := htmlindex.Name(e)
	return e, name, bom
}

func named1(e encoding.Encoding) (encoding.Encoding, string, int) {
	name, err := htmlindex.Name(e)
	if err != nil {
		return named("windows-1252", 0)
	}
	return e, name, 0
}

// getEncoding is the standard's "get an encoding": a label, ASCII
// whitespace around it ignored, case ignored.
func getEncoding(label string) (encoding.Encoding, error) {
	label = strings.Trim(label, asciiSpace)
	if label == "" {
		return nil, errNoLabel
	}
	return htmlindex.Get(label)
}

var errNoLabel = errors.New("no encoding label")

// asciiSpace is ASCII whitespace as the encoding rules count it.
const asciiSpace = "\t\n\f\r "

func isSpaceByte(c byte) bool { return strings.IndexByte(asciiSpace, c) >= 0 }

// prescan looks in head for a <meta> that declares the encoding, as the
// HTML standard's prescan does: byte by byte, skipping comments and the
// attributes of other tags, without building any tree. A declaration of
// UTF-16 is read as UTF-8 (the page could not have been prescanned in
// UTF-16), and x-user-defined as windows-1252.
func prescan(head []byte) encoding.Encoding {
	p := &prescanner{b: head}
	for p.i < len(p.b) {
		rest := p.b[p.i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			// The comment ends at the first "-->" whose dashes may be
			// those of its opening.
			end := bytes.Index(rest[2:], []byte("-->"))
			if end < 0 {
				return nil
			}
			p.i += 2 + end + 2
		case len(rest) > 5 && asciiPrefixFold(rest, "<meta") && (isSpaceByte(rest[5]) || rest[5] == '/'):
			p.i += 5
			if e := p.meta(); e != nil {
				return e
			}
		case len(rest) > 1 && rest[0] == '<' && isASCIILetter(rest[1]),
			len(rest) > 2 && rest[0] == '<' && rest[1] == '/' && isASCIILetter(rest[2]):
			for p.i < len(p.b) && !isSpaceByte(p.b[p.i]) && p.b[p.i] != '>' {
				p.i++
			}
			for {
				if _, _, ok := p.attribute(); !ok {
					break
				}
			}
		case bytes.HasPrefix(rest, []byte("<!")) || bytes.HasPrefix(rest, []byte("</")) || bytes.HasPrefix(rest, []byte("<?")):
			end := bytes.IndexByte(rest[1:], '>')
			if end < 0 {
				return nil
			}
			p.i += 1 + end
		}
		p.i++
	}
	return nil
}

type prescanner struct {
	b []byte
	i int
}

// meta reads the attributes of a <meta> and returns the encoding it
// declares, if it does: by charset, or by content when http-equiv says
// content-type. An attribute named twice counts the first time.
func (p *prescanner) meta() encoding.Encoding {
	seen := map[string]bool{}
	gotPragma := false
	needPragma := 0 // 0: not known, 1: needed, 2: not needed
	var charset encoding.Encoding
	for {
		name, value, ok := p.attribute()
		if !ok {
			break
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "http-equiv":
			gotPragma = gotPragma || value == "content-type"
		case "content":
			if charset == nil {
				if label, ok := contentCharset(value); ok {
					if e, err := getEncoding(label); err == nil {
						charset, needPragma = e, 1
					}
				}
			}
		case "charset":
			charset, _ = getEncoding(value)
			needPragma = 2
		}
	}
	if needPragma == 0 || needPragma == 1 && !gotPragma || charset == nil {
		return nil
	}
	switch name, _ := htmlindex.Name(charset); name {
	case "utf-16be", "utf-16le":
		e, _ := htmlindex.Get("utf-8")
		return e
	case "x-user-defined":
		e, _ := htmlindex.Get("windows-1252")
		return e
	}
	return charset
}

// attribute reads the next attribute of a tag, its name and value with
// ASCII letters lowered; ok is false at the tag's end (or the input's).
func (p *prescanner) attribute() (name, value string, ok bool) {
	b := p.b
	for p.i < len(b) && (isSpaceByte(b[p.i]) || b[p.i] == '/') {
		p.i++
	}
	if p.i >= len(b) || b[p.i] == '>' {
		return "", "", false
	}
	var n, v []byte
	for {
		if p.i >= len(b) {
			return "", "", false
		}
		c := b[p.i]
		switch {
		case c == '=' && len(n) > 0:
			p.i++
			goto value
		case isSpaceByte(c):
			for p.i < len(b) && isSpaceByte(b[p.i]) {
				p.i++
			}
			if p.i >= len(b) || b[p.i] != '=' {
				return string(n), "", true
			}
			p.i++
			goto value
		case c == '/' || c == '>':
			return string(n), "", true
		}
		n = append(n, lowerASCII(c))
		p.i++
	}
value:
	for p.i < len(b) && isSpaceByte(b[p.i]) {
		p.i++
	}
	if p.i >= len(b) {
		return "", "", false
	}
	if q := b[p.i]; q == '"' || q == '\'' {
		p.i++
		for {
			if p.i >= len(b) {
				return "", "", false
			}
			if b[p.i] == q {
				p.i++
				return string(n), string(v), true
			}
			v = append(v, lowerASCII(b[p.i]))
			p.i++
		}
	}
	if b[p.i] == '>' {
		return string(n), "", true
	}
	for p.i < len(b) && !isSpaceByte(b[p.i]) && b[p.i] != '>' {
		v = append(v, lowerASCII(b[p.i]))
		p.i++
	}
	if p.i >= len(b) {
		return "", "", false
	}
	return string(n), string(v), true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func asciiPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// contentCharset reads the encoding label out of a meta's content value
// ("text/html; charset=koi8-r"), as the standard's rule for it does: the
// first "charset" followed, past spaces, by "=", then a quoted value or
// one ending at a space or ';'.
func contentCharset(s string) (string, bool) {
	for {
		i := strings.Index(strings.ToLower(s), "charset")
		if i < 0 {
			return "", false
		}
		s = strings.TrimLeft(s[i+len("charset"):], asciiSpace)
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], asciiSpace)
		if s == "" {
			return "", false
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return "", false
			}
			return s[1 : 1+end], true
		}
		if end := strings.IndexAny(s, ";"+asciiSpace); end >= 0 {
			return s[:end], true
		}
		return s, true
	}
}

// validUTF8 replaces each maximal ill-formed subsequence with U+FFFD, as
// browsers do.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[:size])
			b = b[size:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[illFormed(b):]
	}
	return sb.String()
}

// illFormed is the length of the ill-formed sequence at the start of b:
// a lead byte and the continuation bytes that may follow it.
func illFormed(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	var size int
	switch c := b[0]; {
	case 0xC2 <= c && c <= 0xDF:
		size = 2
	case c == 0xE0:
		size, lo = 3, 0xA0
	case c == 0xED:
		size, hi = 3, 0x9F
	case 0xE1 <= c && c <= 0xEF:
		size = 3
	case c == 0xF0:
		size, lo = 4, 0x90
	case 0xF1 <= c && c <= 0xF3:
		size = 4
	case c == 0xF4:
		size, hi = 4, 0x8F
	default:
		return 1
	}
	n := 1
	for n < size && n < len(b) && lo <= b[n] && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}
