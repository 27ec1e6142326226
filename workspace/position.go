package workspace

import (
	"sort"
	"unicode/utf8"
)

// Encoding is an LSP position encoding: what a Position's Character counts.
type Encoding string

// The position encodings of LSP 3.17. UTF16 is the protocol default.
const (
	UTF8  Encoding = "utf-8"
	UTF16 Encoding = "utf-16"
	UTF32 Encoding = "utf-32"
)

// Position is a zero-based line and character in some Encoding.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Mapper converts between byte offsets and positions in one text. Lines end
// at "\n", "\r\n" or a lone "\r", as LSP says. Positions out of range clamp:
// a character past the end of its line means the end of the line (before
// its terminator), a line past the last one means the end of the text.
//
// All position conversion in cline-ls goes through Mapper or the two
// line-level functions below it, so there is one place to get it right.
type Mapper struct {
	text   string
	starts []int // byte offset of each line's first byte
}

// NewMapper indexes the line starts of text.
func NewMapper(text string) *Mapper {
	return &Mapper{text: text, starts: LineStarts(text)}
}

// LineStarts returns the byte offset at which each line of text begins.
// There is always at least one line.
func LineStarts(text string) []int {
	starts := make([]int, 1, 1+len(text)/32)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// LineCount is the number of lines (a trailing newline starts an empty one).
func (m *Mapper) LineCount() int { return len(m.starts) }

// lineBounds returns the byte span of line n's content, terminator excluded.
func (m *Mapper) lineBounds(n int) (start, end int) {
	start = m.starts[n]
	if n+1 < len(m.starts) {
		end = m.starts[n+1]
		if end > start && m.text[end-1] == '\n' {
			end--
		}
		if end > start && m.text[end-1] == '\r' {
			end--
		}
	} else {
		end = len(m.text)
	}
	return start, end
}

// Offset converts p to a byte offset, clamping as LSP says.
func (m *Mapper) Offset(p Position, enc Encoding) int {
	if int64(p.Line) >= int64(len(m.starts)) {
		return len(m.text)
	}
	start, end := m.lineBounds(int(p.Line))
	return start + LineByteOffset(m.text[start:end], p.Character, enc)
}

// Position converts a byte offset to a position. An offset inside a line
// terminator or inside a UTF-8 sequence moves back to the nearest boundary;
// one outside the text clamps to its ends.
func (m *Mapper) Position(off int, enc Encoding) Position {
	if off < 0 {
		off = 0
	}
	if off > len(m.text) {
		off = len(m.text)
	}
	n := sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > off }) - 1
	start, end := m.lineBounds(n)
	if off > end {
		off = end
	}
	off = start + codePointStart(m.text[start:end], off-start)
	return Position{Line: uint32(n), Character: LineUnits(m.text[start:off], enc)}
}

// codePointStart returns the start of the code point holding byte i of s,
// decoding as LineUnits does: each byte of an invalid sequence stands for
// itself, so only a valid sequence is ever stepped back over.
func codePointStart(s string, i int) int {
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			// A byte that can start a sequence is always a code point
			// boundary; i is inside only if the sequence reaches past it.
			if _, size := utf8.DecodeRuneInString(s[j:]); j+size > i {
				return j
			}
			break
		}
	}
	return i
}

// LineByteOffset returns the byte offset within line (a line's content,
// without terminator) of character ch counted in enc. A character past the
// end clamps to len(line); one that falls inside a code point (half of a
// UTF-16 surrogate pair, the middle of a UTF-8 sequence) moves back to that
// code point's start, so an edit never splits a character.
func LineByteOffset(line string, ch uint32, enc Encoding) int {
	if enc == UTF8 {
		if int64(ch) >= int64(len(line)) {
			return len(line)
		}
		return codePointStart(line, int(ch))
	}
	var units uint32
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		w := uint32(1)
		if enc != UTF32 && r >= 0x10000 && size == 4 {
			w = 2
		}
		if units+w > ch {
			return i
		}
		units += w
		i += size
	}
	return len(line)
}

// LineUnits counts the units of enc in s. An invalid UTF-8 byte counts as
// one unit in every encoding (it stands for U+FFFD).
func LineUnits(s string, enc Encoding) uint32 {
	if enc == UTF8 {
		return uint32(len(s))
	}
	var n uint32
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if enc != UTF32 && r >= 0x10000 && size == 4 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
