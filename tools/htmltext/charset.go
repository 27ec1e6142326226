package htmltext

import (
	"mime"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode converts a page to UTF-8. The charset is the one its byte-order
// mark names, else its Content-Type's, else a <meta> in its first 1024
// bytes; without one, UTF-8 when the whole page is valid UTF-8, else
// windows-1252. UTF-8, UTF-16 and windows-1252 (which pages labelled
// ISO-8859-1 or ASCII are in fact written in) are decoded; the other
// charsets, rare on the pages a coding agent reads, would bring tables
// of hundreds of kilobytes into the binary. A page in one of them is read
// as UTF-8 with what is not valid replaced by U+FFFD, and undecoded names
// that charset, for the reader to be told.
func Decode(body []byte, contentType string) (text, undecoded string) {
	switch {
	case len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF:
		return validUTF8(body[3:]), ""
	case len(body) >= 2 && body[0] == 0xFE && body[1] == 0xFF:
		return decodeUTF16(body[2:], true), ""
	case len(body) >= 2 && body[0] == 0xFF && body[1] == 0xFE:
		return decodeUTF16(body[2:], false), ""
	}
	label := ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		label = params["charset"]
	}
	cs := lookup(label)
	if cs == unknownCharset {
		meta := metaCharset(body[:min(len(body), 1024)])
		switch cs = lookup(meta); cs {
		case utf16BE, utf16LE:
			// A page saying it is UTF-16 in its own ASCII text is not.
			cs = utf8Charset
		case unknownCharset:
			if strings.TrimSpace(label) == "" {
				label = meta
			}
		}
	}
	switch cs {
	case utf8Charset:
		return validUTF8(body), ""
	case windows1252:
		return decode1252(body), ""
	case utf16BE, utf16LE:
		return decodeUTF16(body, cs == utf16BE), ""
	}
	if utf8.Valid(body) {
		return string(body), ""
	}
	if label = strings.ToLower(strings.TrimSpace(label)); label != "" {
		return validUTF8(body), label
	}
	return decode1252(body), ""
}

type charset uint8

const (
	unknownCharset charset = iota
	utf8Charset
	windows1252
	utf16BE
	utf16LE
)

// lookup knows the names browsers accept for the charsets decoded here.
func lookup(label string) charset {
	switch strings.ToLower(strings.Trim(label, " \t\n\f\r")) {
	case "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8":
		return utf8Charset
	case "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
		"iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252":
		return windows1252
	case "unicodefffe", "utf-16be":
		return utf16BE
	case "csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le":
		return utf16LE
	}
	return unknownCharset
}

// metaCharset finds the charset a <meta charset> or a <meta
// http-equiv="content-type" content="...; charset=..."> declares.
func metaCharset(head []byte) string {
	z := tokenizer{s: string(head)}
	for {
		t := z.next()
		switch {
		case t.typ == eofToken:
			return ""
		case t.typ != startTagToken:
			continue
		case t.name == "script" || t.name == "style" || t.name == "title" || t.name == "textarea":
			z.rawTag = t.name
			continue
		case t.name != "meta":
			continue
		}
		if cs := attrVal(t.attr, "charset"); cs != "" {
			return cs
		}
		if strings.EqualFold(attrVal(t.attr, "http-equiv"), "content-type") {
			if cs := contentCharset(strings.ToLower(attrVal(t.attr, "content"))); cs != "" {
				return cs
			}
		}
	}
}

// contentCharset reads "charset=" out of a content attribute.
func contentCharset(s string) string {
	for {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], spaces)
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], spaces)
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		if end := strings.IndexAny(s, "; \t\n\f\r"); end >= 0 {
			return s[:end]
		}
		return s
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

// cp1252 is what windows-1252 puts at 0x80-0x9F; its other bytes are
// the code points of the same number. The five bytes it leaves undefined
// are shown as U+FFFD (browsers make them invisible control characters).
var cp1252 = [32]rune{
	0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
	0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
}

func decode1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		switch {
		case c < 0x80:
			sb.WriteByte(c)
		case c < 0xA0:
			sb.WriteRune(cp1252[c-0x80])
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

func decodeUTF16(b []byte, bigEndian bool) string {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			units = append(units, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	s := string(utf16.Decode(units))
	if len(b)%2 == 1 {
		s += "\uFFFD"
	}
	return s
}
