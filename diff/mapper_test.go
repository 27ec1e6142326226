package diff

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/workspace"
)

// TestMapperBoundaries pins the behaviour of workspace.Mapper that
// TextEdits and ApplyEdits rely on: any offset maps to a position that maps
// back to the start of the code point holding it, where every byte of an
// invalid sequence is a code point of its own (as workspace.LineUnits
// counts it). Offsets between "\r" and "\n" move back before the "\r".
func TestMapperBoundaries(t *testing.T) {
	texts := []string{
		"a€b",               // inside a valid 3-byte sequence
		"x😀y\r\nz",          // inside a 4-byte sequence, inside CRLF
		"a\x80\x80b",        // lone continuation bytes
		"\xe2\x82A\xe2\x82", // truncated sequences
		"é\xff\xc3\n\x80",
	}
	r := rand.New(rand.NewPCG(5, 8))
	for range 300 {
		texts = append(texts, randomText(r, textPieces, 12))
	}
	for _, text := range texts {
		m := workspace.NewMapper(text)
		for off := 0; off <= len(text); off++ {
			want := boundaryAtOrBefore(text, off)
			for _, enc := range encodings {
				p := m.Position(off, enc)
				if got := m.Offset(p, enc); got != want {
					t.Errorf("%q %s: offset %d -> %v -> %d, want %d", text, enc, off, p, got, want)
				}
			}
		}
	}
}

// boundaryAtOrBefore decodes text from the start and returns the last code
// point boundary at or before off, stepping back out of "\r\n".
func boundaryAtOrBefore(text string, off int) int {
	b := 0
	for i := 0; i < len(text); {
		if i > off {
			break
		}
		b = i
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if i <= off {
			b = i
		}
	}
	if b > 0 && b < len(text) && text[b-1] == '\r' && text[b] == '\n' {
		b--
	}
	return b
}
