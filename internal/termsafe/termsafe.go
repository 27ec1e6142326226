// Package termsafe makes text from models, files, commands and file
// names safe to print on a terminal: whatever a terminal would act on
// (escape sequences, carriage returns, 8-bit CSI) or draw misleadingly
// (bidi overrides, invisible characters, bytes that are not UTF-8) is
// written as a visible escape, so the reader sees that something was
// there and what. It is the one rule for every line cline-ls exec and
// demo print.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// mode says what a kind of text keeps as it is.
type mode struct {
	newline bool // '\n' breaks the line
	tab     bool // '\t' is spacing
	joiners bool // ZWJ and ZWNJ, which emoji and several scripts need
}

var (
	text  = mode{newline: true, tab: true, joiners: true}
	exact = mode{newline: true}
	line  = mode{}
)

// Text is for prose and content: a model's reply, a file's text, a
// command's output, a diff. Lines and tabs stay; joiners stay, since
// emoji and several scripts need them.
func Text(s string) string { return escape(s, text) }

// Exact is for what the user approves, a command above all: every
// character that is not plainly visible is escaped, tabs and joiners
// included, so what is shown is what runs; lines stay lines.
func Exact(s string) string { return escape(s, exact) }

// Line is for one-line fields: titles, file names, identifiers,
// statuses. Exact's rule, with line breaks escaped too, so the field
// cannot pass for another line.
func Line(s string) string { return escape(s, line) }

// Safe reports whether Exact leaves s as it is, i.e. whether s holds
// nothing a terminal would hide or act on beyond line breaks.
func Safe(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError && !validAt(s, i) || hidden(r, exact) {
			return false
		}
	}
	return true
}

func escape(s string, m mode) string {
	clean := true
	for i, r := range s {
		if r == utf8.RuneError && !validAt(s, i) || hidden(r, m) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !hidden(r, m):
			b.WriteString(s[i : i+size])
		default:
			writeEscape(&b, r)
		}
		i += size
	}
	return b.String()
}

// validAt reports whether the U+FFFD at s[i] is really there (encoded),
// not a byte that is not UTF-8.
func validAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		switch {
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r <= 0xFFFF:
			b.WriteString(`\u`)
			b.WriteString(hexN(uint32(r), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(hexN(uint32(r), 8))
		}
	}
}

// hidden reports whether a terminal would act on r, or draw it so that
// it hides or reorders what is around it.
func hidden(r rune, m mode) bool {
	switch {
	case r == '\n':
		return !m.newline
	case r == '\t':
		return !m.tab
	case r < 0x20, r == 0x7F, r >= 0x80 && r <= 0x9F: // C0, DEL, C1 (0x9B is an 8-bit CSI)
		return true
	case r == 0x200C || r == 0x200D: // ZWNJ, ZWJ
		return !m.joiners
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, // bidi embeddings, overrides, isolates
		r == 0x200E || r == 0x200F || r == 0x061C,                               // bidi marks
		r == 0x200B || r >= 0x2060 && r <= 0x2064 || r == 0xFEFF || r == 0x180E, // zero-width
		r == 0x2028 || r == 0x2029,                                              // line and paragraph separators
		r >= 0xE0000 && r <= 0xE007F,                                            // tags: invisible ASCII
		r >= 0xFFF9 && r <= 0xFFFB:                                              // interlinear annotation
		return true
	case r < 0x80:
		return false
	}
	if unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && r != 0x034F {
		return true // Hangul fillers and the like: blanks that pass for nothing
	}
	// Every other format character (soft hyphen, Arabic and Syriac
	// marks, shorthand controls) and the variation selectors and the
	// grapheme joiner are invisible or nearly: in a title, a file name or
	// a command, escape them too.
	return !m.joiners && (unicode.In(r, unicode.Cf, unicode.Variation_Selector) || r == 0x034F)
}

const digits = "0123456789abcdef"

func hex2(c byte) string { return string([]byte{digits[c>>4], digits[c&15]}) }

func hexN(v uint32, n int) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", n-len(s)) + s
}

// JSON returns a JSON text with every character Exact would escape
// written as a \u escape instead, so a JSON line printed on a terminal
// is as safe as the rest, and decodes to the same value. Outside
// strings JSON has only ASCII and its whitespace, which stay; a byte
// that is not UTF-8 becomes U+FFFD, as encoding/json decodes it.
func JSON(b []byte) []byte {
	s := string(b)
	if jsonSafe(s) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || jsonEscaped(r) {
			if r > 0xFFFF {
				hi, lo := utf16Pair(r)
				out = append(out, `\u`+hexN(uint32(hi), 4)+`\u`+hexN(uint32(lo), 4)...)
			} else {
				out = append(out, `\u`+hexN(uint32(r), 4)...)
			}
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return out
}

func jsonSafe(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError && !validAt(s, i) || jsonEscaped(r) {
			return false
		}
	}
	return true
}

// jsonEscaped: what Exact escapes but JSON's own whitespace.
func jsonEscaped(r rune) bool {
	return r != '\t' && r != '\n' && r != '\r' && hidden(r, exact)
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + r>>10&0x3FF, 0xDC00 + r&0x3FF
}
