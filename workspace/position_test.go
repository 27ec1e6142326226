package workspace

import (
	"testing"
	"unicode/utf8"
)

func TestMapperOffset(t *testing.T) {
	const text = "a😀b\r\nxy\rz\n" // lines: "a😀b", "xy", "z", ""
	tests := []struct {
		p    Position
		enc  Encoding
		want int
	}{
		{Position{0, 0}, UTF16, 0},
		{Position{0, 1}, UTF16, 1},
		{Position{0, 2}, UTF16, 1}, // inside the surrogate pair: back to the emoji's start
		{Position{0, 3}, UTF16, 5},
		{Position{0, 2}, UTF32, 5},
		{Position{0, 3}, UTF8, 1}, // inside the UTF-8 sequence
		{Position{0, 5}, UTF8, 5},
		{Position{0, 4}, UTF16, 6},  // end of line, before "\r\n"
		{Position{0, 99}, UTF16, 6}, // past the end of the line clamps before the break
		{Position{1, 0}, UTF16, 8},
		{Position{1, 2}, UTF16, 10},
		{Position{2, 1}, UTF16, 12},
		{Position{3, 0}, UTF16, 13}, // the empty last line
		{Position{3, 7}, UTF16, 13},
		{Position{40, 0}, UTF16, 13}, // past the last line: end of text
	}
	m := NewMapper(text)
	if m.LineCount() != 4 {
		t.Fatalf("LineCount = %d", m.LineCount())
	}
	for _, tt := range tests {
		if got := m.Offset(tt.p, tt.enc); got != tt.want {
			t.Errorf("Offset(%v, %s) = %d, want %d", tt.p, tt.enc, got, tt.want)
		}
	}
}

func TestMapperPosition(t *testing.T) {
	const text = "a😀b\r\nxy"
	m := NewMapper(text)
	tests := []struct {
		off  int
		enc  Encoding
		want Position
	}{
		{0, UTF16, Position{0, 0}},
		{5, UTF16, Position{0, 3}},
		{5, UTF32, Position{0, 2}},
		{5, UTF8, Position{0, 5}},
		{7, UTF16, Position{0, 4}}, // inside "\r\n": end of the line
		{8, UTF16, Position{1, 0}},
		{10, UTF16, Position{1, 2}},
		{99, UTF16, Position{1, 2}},
		{-3, UTF16, Position{0, 0}},
	}
	for _, tt := range tests {
		if got := m.Position(tt.off, tt.enc); got != tt.want {
			t.Errorf("Position(%d, %s) = %v, want %v", tt.off, tt.enc, got, tt.want)
		}
	}
}

func TestLineUnitsInvalidUTF8(t *testing.T) {
	s := "a\xffb\xe2\x82" // an invalid byte and a truncated sequence
	for _, enc := range []Encoding{UTF16, UTF32} {
		if n := LineUnits(s, enc); n != 5 {
			t.Errorf("%s: LineUnits = %d, want 5 (one unit per invalid byte)", enc, n)
		}
	}
	if off := LineByteOffset(s, 2, UTF16); off != 2 {
		t.Errorf("LineByteOffset past invalid byte = %d", off)
	}
}

// FuzzPositionMapper checks the mapper's invariants on arbitrary text: an
// offset is always inside the text and on a code point boundary, and a
// position computed from a boundary offset maps back to it.
func FuzzPositionMapper(f *testing.F) {
	f.Add("a😀b\r\nxy\rz\n", uint32(0), uint32(2), 3)
	f.Add("", uint32(5), uint32(5), 0)
	f.Add("\r\r\n\n\xff\xfe", uint32(2), uint32(1), 4)
	f.Fuzz(func(t *testing.T, text string, line, char uint32, off int) {
		m := NewMapper(text)
		for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
			o := m.Offset(Position{line, char}, enc)
			if o < 0 || o > len(text) {
				t.Fatalf("Offset out of range: %d of %d", o, len(text))
			}
			if o < len(text) && utf8.ValidString(text) && !utf8.RuneStart(text[o]) {
				t.Fatalf("Offset %d splits a code point", o)
			}
			p := m.Position(o, enc)
			if back := m.Offset(p, enc); back != o {
				t.Fatalf("%s: offset %d -> %v -> %d", enc, o, p, back)
			}
			q := m.Position(off, enc)
			if int(q.Line) >= m.LineCount() {
				t.Fatalf("Position(%d) line %d of %d", off, q.Line, m.LineCount())
			}
		}
	})
}
