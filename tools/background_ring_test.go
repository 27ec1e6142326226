package tools

import (
	"strings"
	"testing"
)

// TestBackgroundRingKeepsTheNewest: output past the ring's size between
// two reads is counted as dropped, and what is kept is the newest.
func TestBackgroundRingKeepsTheNewest(t *testing.T) {
	var r bgRing
	r.write([]byte("first\n"))
	if text, dropped := r.next(false); text != "first\n" || dropped != 0 {
		t.Errorf("next() = %q, %d", text, dropped)
	}
	big := strings.Repeat("x", bgKeep) + "end\n"
	r.write([]byte(big))
	text, dropped := r.next(false)
	if dropped != 4 || text != big[4:] {
		t.Errorf("next() after %d bytes: %d bytes dropped, text ends %q", len(big), dropped, text[max(0, len(text)-8):])
	}
	if text, dropped := r.next(false); text != "" || dropped != 0 {
		t.Errorf("next() with nothing new = %q, %d", text, dropped)
	}
}

// TestBackgroundRingHoldsASplitCharacter: a character whose last bytes
// have not come is left for the next read, unless the command has ended.
func TestBackgroundRingHoldsASplitCharacter(t *testing.T) {
	var r bgRing
	e := []byte("é")
	r.write(append([]byte("caf"), e[0]))
	if text, _ := r.next(false); text != "caf" {
		t.Errorf("next() = %q, want the text before the split character", text)
	}
	r.write(e[1:])
	if text, _ := r.next(false); text != "é" {
		t.Errorf("next() = %q, want the character once whole", text)
	}
	r.write(e[:1])
	if text, _ := r.next(true); text != string(e[:1]) {
		t.Errorf("final next() = %q, want the lone byte", text)
	}
}

// BenchmarkBackgroundRingWrite measures keeping a chatty command's output:
// 32 KiB reads into the ring, which holds the newest bgKeep bytes.
func BenchmarkBackgroundRingWrite(b *testing.B) {
	var r bgRing
	chunk := []byte(strings.Repeat("GET /index.html 200 1.2ms\n", 32<<10/26))
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		r.write(chunk)
	}
}
