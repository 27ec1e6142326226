package diff

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// largeFile returns go-diff's own 100,001-line benchmark text when the
// conformance data is present, else a generated text of the same length.
func largeFile(b *testing.B) string {
	b.Helper()
	if dir, err := shared.Find(); err == nil {
		data, err := os.ReadFile(filepath.Join(dir, "go-diff", "diff10klinestest.txt"))
		if err == nil {
			return string(data)
		}
	}
	var s strings.Builder
	for i := range 100001 {
		s.WriteString("line number " + strconv.Itoa(i) + " of a generated benchmark text\n")
	}
	return s.String()
}

// changeLine replaces the text of the n-th line (0-based).
func changeLine(text string, n int, repl string) string {
	start := 0
	for range n {
		start += strings.IndexByte(text[start:], '\n') + 1
	}
	end := start + strings.IndexByte(text[start:], '\n')
	return text[:start] + repl + text[end:]
}

func BenchmarkCompact100kLinesOneChange(b *testing.B) {
	old := largeFile(b)
	if n := strings.Count(old, "\n"); n < 100000 {
		b.Fatalf("benchmark text has %d lines", n)
	}
	changed := changeLine(old, 50000, "a changed line")
	b.SetBytes(int64(len(old)))
	b.ResetTimer()
	for b.Loop() {
		d := Compact("big.txt", old, changed)
		if d.Added != 1 || d.Removed != 1 {
			b.Fatalf("Added, Removed = %d, %d", d.Added, d.Removed)
		}
	}
}

func BenchmarkTextEdits10MiB(b *testing.B) {
	var s strings.Builder
	for i := 0; s.Len() < 10<<20; i++ {
		s.WriteString("func f" + strconv.Itoa(i) + "() { return \"😀 é\" } // some code\n")
	}
	old := s.String()
	changed := changeLine(old, strings.Count(old, "\n")/2, "func g() {}")
	for _, enc := range encodings {
		b.Run(string(enc), func(b *testing.B) {
			b.SetBytes(int64(len(old)))
			for b.Loop() {
				if e := TextEdits(old, changed, enc); len(e) != 1 {
					b.Fatalf("got %d edits", len(e))
				}
			}
		})
	}
}

func BenchmarkUnified(b *testing.B) {
	// A 10,000-line file with a change every 250 lines: 40 hunks.
	var s strings.Builder
	for i := range 10000 {
		s.WriteString("\tvalue" + strconv.Itoa(i) + " := compute(" + strconv.Itoa(i%97) + ")\n")
	}
	old := s.String()
	changed := old
	for n := 100; n < 10000; n += 250 {
		changed = changeLine(changed, n, "\t// changed")
	}
	b.Run("10k-lines-40-hunks", func(b *testing.B) {
		b.SetBytes(int64(len(old)))
		for b.Loop() {
			if u := Unified("f.go", old, changed, 3); strings.Count(u, "\n@@ ") != 40 {
				b.Fatalf("want 40 hunks:\n%s", u[:200])
			}
		}
	})
	big := largeFile(b)
	bigChanged := changeLine(big, 50000, "a changed line")
	b.Run("100k-lines-one-change", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			Unified("big.txt", big, bigChanged, 3)
		}
	})
}
