package workspace

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// referenceApply applies one change the slow, obvious way: convert both
// positions with a fresh Mapper over the whole text and splice the string.
func referenceApply(text string, r Range, repl string, enc Encoding) string {
	m := NewMapper(text)
	s, e := m.Offset(r.Start, enc), m.Offset(r.End, enc)
	if e < s {
		e = s
	}
	return text[:s] + repl + text[e:]
}

var fragments = []string{
	"a", "b", "xyz", " ", "\n", "\r\n", "\r", "é", "€", "😀", "𝄞x", "\t", "line\n", "\r\n\r\n", "日本語",
}

func randomText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(fragments[r.IntN(len(fragments))])
	}
	return sb.String()
}

// randomPosition picks a position that is usually valid but sometimes past
// the end of its line or of the document, so clamping is exercised too.
func randomPosition(r *rand.Rand, text string, enc Encoding) Position {
	m := NewMapper(text)
	line := uint32(r.IntN(m.LineCount() + 1))
	var ch uint32
	if int(line) < m.LineCount() {
		s, e := m.lineBounds(int(line))
		ch = uint32(r.IntN(int(LineUnits(text[s:e], enc)) + 3))
	} else {
		ch = uint32(r.IntN(4))
	}
	return Position{Line: line, Character: ch}
}

func TestBuffersRandomIncrementalEdits(t *testing.T) {
	for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
		t.Run(string(enc), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(enc))))
			b := NewBuffers()
			want := randomText(r, 40)
			b.Open("file:///t.txt", "/t.txt", "text", 1, want)
			for i := range 1000 {
				p1, p2 := randomPosition(r, want, enc), randomPosition(r, want, enc)
				if p2.Line < p1.Line || p2.Line == p1.Line && p2.Character < p1.Character {
					p1, p2 = p2, p1
				}
				rg := Range{Start: p1, End: p2}
				repl := randomText(r, r.IntN(4))
				before := want
				want = referenceApply(want, rg, repl, enc)
				if err := b.Change("file:///t.txt", int32(i+2), enc, []Change{{Range: &rg, Text: repl}}); err != nil {
					t.Fatal(err)
				}
				got, _ := b.Get("file:///t.txt")
				if got.Text != want {
					t.Fatalf("edit %d: %+v %q on %q\ngot  %q\nwant %q", i, rg, repl, before, got.Text, want)
				}
				if d := b.get("file:///t.txt"); len(d.lines) != NewMapper(want).LineCount() || d.size != len(want) {
					t.Fatalf("edit %d: mirror has %d lines/%d bytes, text has %d/%d", i, len(d.lines), d.size, NewMapper(want).LineCount(), len(want))
				}
			}
		})
	}
}

func TestBuffersSeveralChangesInOneNotification(t *testing.T) {
	b := NewBuffers()
	b.Open("file:///a", "/a", "go", 1, "hello\nworld\n")
	// Each change applies to the text the previous one produced.
	changes := []Change{
		{Range: &Range{Start: Position{0, 0}, End: Position{0, 5}}, Text: "HELLO"},
		{Range: &Range{Start: Position{1, 5}, End: Position{1, 5}}, Text: "!"},
		{Text: "replaced\r\nall"},
		{Range: &Range{Start: Position{1, 0}, End: Position{1, 0}}, Text: "> "},
	}
	if err := b.Change("file:///a", 2, UTF16, changes); err != nil {
		t.Fatal(err)
	}
	s, _ := b.Get("file:///a")
	if s.Text != "replaced\r\n> all" || s.Version != 2 {
		t.Fatalf("got %q v%d", s.Text, s.Version)
	}
}

func TestBuffersRefuseVersionGoingBackwards(t *testing.T) {
	b := NewBuffers()
	b.Open("file:///a", "/a", "go", 5, "abc")
	one := &Range{Start: Position{0, 0}, End: Position{0, 1}}
	for _, v := range []int32{5, 4, -1} {
		err := b.Change("file:///a", v, UTF8, []Change{{Range: one, Text: "X"}})
		if !errors.Is(err, ErrStaleVersion) {
			t.Errorf("version %d: err = %v, want ErrStaleVersion", v, err)
		}
	}
	if s, _ := b.Get("file:///a"); s.Text != "abc" || s.Version != 5 {
		t.Fatalf("refused change altered the buffer: %q v%d", s.Text, s.Version)
	}
	if err := b.Change("file:///a", 9, UTF8, []Change{{Range: one, Text: "X"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Change("file:///nope", 1, UTF8, nil); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("change of unopened doc: %v", err)
	}
}

func TestBuffersCRLFFusion(t *testing.T) {
	cases := []struct {
		text string
		r    Range
		repl string
	}{
		{"a\rX\nb", Range{Position{1, 0}, Position{1, 1}}, ""},    // "\r" + "\n" fuse
		{"a\r", Range{Position{1, 0}, Position{1, 0}}, "\nb"},     // typing "\n" after a lone "\r"
		{"a\r\nb", Range{Position{0, 1}, Position{1, 0}}, "\r"},   // replace the break itself
		{"x\ny", Range{Position{0, 1}, Position{1, 0}}, "\r\r\n"}, // new breaks
	}
	for _, c := range cases {
		b := NewBuffers()
		b.Open("file:///a", "/a", "", 1, c.text)
		if err := b.Change("file:///a", 2, UTF16, []Change{{Range: &c.r, Text: c.repl}}); err != nil {
			t.Fatal(err)
		}
		want := referenceApply(c.text, c.r, c.repl, UTF16)
		s, _ := b.Get("file:///a")
		d := b.get("file:///a")
		if s.Text != want || len(d.lines) != NewMapper(want).LineCount() {
			t.Errorf("%q %+v %q: got %q (%d lines), want %q (%d lines)", c.text, c.r, c.repl, s.Text, len(d.lines), want, NewMapper(want).LineCount())
		}
	}
}

func TestBuffersWaitSeesLaterChange(t *testing.T) {
	b := NewBuffers()
	b.Open("file:///a", "/a", "", 1, "one")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // failure guard only
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	var got Snapshot
	var err error
	go func() {
		defer wg.Done()
		got, err = b.Wait(ctx, "file:///a", func(s Snapshot) bool { return s.Text == "two" })
	}()
	b.Change("file:///a", 2, UTF8, []Change{{Text: "zero"}})
	b.Change("file:///a", 3, UTF8, []Change{{Text: "two"}})
	wg.Wait()
	if err != nil || got.Version != 3 {
		t.Fatalf("Wait = %+v, %v", got, err)
	}
	// A close wakes waiters with ErrNotOpen.
	done := make(chan error, 1)
	go func() {
		_, err := b.Wait(ctx, "file:///a", func(Snapshot) bool { return false })
		done <- err
	}()
	// Once the waiter blocks: a Wait that starts after the close finds no
	// buffer and answers ErrNotOpen without being woken.
	for !testenv.Parked("workspace.(*Buffers).Wait") {
		select {
		case err := <-done: // without this, a Wait that returns spins here until the test's timeout
			t.Fatalf("Wait returned (%v) before the close", err)
		case <-time.After(time.Millisecond):
		}
	}
	b.Close("file:///a")
	if err := <-done; !errors.Is(err, ErrNotOpen) {
		t.Fatalf("Wait after close = %v", err)
	}
}

// TestBuffersConcurrentDocuments changes many documents from many
// goroutines at once; under -race this proves the locking, and each
// document still ends with exactly its own edits in order.
func TestBuffersConcurrentDocuments(t *testing.T) {
	b := NewBuffers()
	var wg sync.WaitGroup
	for g := range 8 {
		u := "file:///doc" + string(rune('a'+g))
		b.Open(u, "/doc"+string(rune('a'+g)), "", 0, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				end := Position{Line: uint32(i), Character: 0}
				b.Change(u, int32(i+1), UTF16, []Change{{Range: &Range{Start: end, End: end}, Text: "x\n"}})
				b.Get(u)
			}
		}()
	}
	wg.Wait()
	for _, u := range b.URIs() {
		s, _ := b.Get(u)
		if s.Text != strings.Repeat("x\n", 200) || s.Version != 200 {
			t.Fatalf("%s: %d bytes v%d", u, len(s.Text), s.Version)
		}
	}
}
