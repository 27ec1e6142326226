package workspace

import (
	"strings"
	"testing"
)

// tenMiB is a 10 MiB text of 80-byte lines.
func tenMiB() string {
	line := strings.Repeat("x", 79) + "\n"
	return strings.Repeat(line, 10<<20/len(line))
}

// BenchmarkBufferKeystroke10MiB types one character into the middle of a
// 10 MiB buffer per iteration: the cost must not grow with the buffer.
func BenchmarkBufferKeystroke10MiB(b *testing.B) {
	bufs := NewBuffers()
	text := tenMiB()
	bufs.Open("file:///big", "/big", "", 0, text)
	mid := uint32(strings.Count(text, "\n") / 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := Position{Line: mid, Character: 10}
		if err := bufs.Change("file:///big", int32(i+1), UTF16, []Change{{Range: &Range{Start: p, End: p}, Text: "a"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBufferNewline10MiB inserts a line break per iteration, which
// changes the line count and so moves the line table.
func BenchmarkBufferNewline10MiB(b *testing.B) {
	bufs := NewBuffers()
	text := tenMiB()
	bufs.Open("file:///big", "/big", "", 0, text)
	mid := uint32(strings.Count(text, "\n") / 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := Position{Line: mid, Character: 10}
		if err := bufs.Change("file:///big", int32(i+1), UTF16, []Change{{Range: &Range{Start: p, End: p}, Text: "\n"}}); err != nil {
			b.Fatal(err)
		}
	}
}
