package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRegion fails unless Region's parts are a faithful cut of the edit:
// put back in place of the old part, the new part gives newText; both
// start and end on line boundaries; and the unified diff of the parts,
// with the same context, has the same hunk bodies as that of the whole
// texts (so no context line is missing and none is extra).
func checkRegion(t *testing.T, oldText, newText string, context int) {
	t.Helper()
	o, n, line := Region(oldText, newText, context)
	if oldText == newText {
		if o != "" || n != "" {
			t.Fatalf("equal texts gave parts %q, %q", o, n)
		}
		return
	}
	// The offset of the old part: the text before it is line-1 lines.
	at := 0
	for range line - 1 {
		at += strings.IndexByte(oldText[at:], '\n') + 1
	}
	if !strings.HasPrefix(oldText[at:], o) {
		t.Fatalf("old part %q is not at line %d of %q", o, line, oldText)
	}
	if got := oldText[:at] + n + oldText[at+len(o):]; got != newText {
		t.Fatalf("applying the region to %q gives %q, want %q (parts %q → %q)", oldText, got, newText, o, n)
	}
	for _, p := range []struct{ part, whole string }{{o, oldText}, {n, newText}} {
		if p.part != "" && !strings.HasSuffix(p.part, "\n") && !strings.HasSuffix(p.whole, p.part) {
			t.Fatalf("part %q ends inside a line of %q", p.part, p.whole)
		}
	}
	if at > 0 && oldText[at-1] != '\n' {
		t.Fatalf("parts start inside a line (byte %d of %q)", at, oldText)
	}
	hunks := func(u string) string {
		var b strings.Builder
		for l := range strings.Lines(u) {
			if !strings.HasPrefix(l, "@@") && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	if whole, cut := hunks(Unified("f", oldText, newText, context)), hunks(Unified("f", o, n, context)); whole != cut {
		t.Fatalf("the region's diff differs from the whole texts' diff:\n%s\nagainst\n%s", cut, whole)
	}
}

func TestRegion(t *testing.T) {
	many := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString("line " + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + "\n")
		}
		return b.String()
	}
	base := many(0, 40)
	for _, tc := range []struct {
		name     string
		old, new string
		context  int
		wantOld  string
		wantNew  string
		wantLine int
	}{
		{"one line in the middle, one line of context", "a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n", 1, "b\nc\nd\n", "b\nC\nd\n", 2},
		{"no context", "a\nb\nc\n", "a\nB\nc\n", 0, "b\n", "B\n", 2},
		{"change at the start", "a\nb\nc\nd\n", "A\nb\nc\nd\n", 1, "a\nb\n", "A\nb\n", 1},
		{"change at the end, no final newline", "a\nb\nc", "a\nb\nC", 1, "b\nc", "b\nC", 2},
		{"newline added at the end", "a\nb", "a\nb\n", 0, "b", "b\n", 2},
		{"pure insertion", "a\nb\nc\n", "a\nb\nnew\nc\n", 1, "b\nc\n", "b\nnew\nc\n", 2},
		{"pure deletion", "a\nb\nc\nd\n", "a\nd\n", 1, "a\nb\nc\nd\n", "a\nd\n", 1},
		{"change inside a line keeps the whole line", "keep\nabcdef\nkeep\n", "keep\nabXdef\nkeep\n", 0, "abcdef\n", "abXdef\n", 2},
		{"everything from empty", "", "a\nb\n", 3, "", "a\nb\n", 1},
		{"equal", "a\n", "a\n", 3, "", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n, line := Region(tc.old, tc.new, tc.context)
			if o != tc.wantOld || n != tc.wantNew || line != tc.wantLine {
				t.Fatalf("Region = %q, %q, line %d; want %q, %q, line %d", o, n, line, tc.wantOld, tc.wantNew, tc.wantLine)
			}
			checkRegion(t, tc.old, tc.new, tc.context)
		})
	}
	// Random edits of a 40-line text: replacements, insertions and
	// deletions of whole lines and of parts of lines, with 0 to 4 lines of
	// context.
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		a, b := r.IntN(len(base)+1), r.IntN(len(base)+1)
		if a > b {
			a, b = b, a
		}
		repl := []string{"", "Z", "new line\n", "two\nlines\n", many(r.IntN(40), 40)}[r.IntN(5)]
		newText := base[:a] + repl + base[b:]
		ctx := i % 5
		checkRegion(t, base, newText, ctx)
		checkRegion(t, newText, base, ctx)
	}
}

func FuzzRegion(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 1)
	f.Add("a\r\nb\r\n", "a\r\nb\n", 3)
	f.Add("", "x", 0)
	f.Fuzz(func(t *testing.T, oldText, newText string, context int) {
		checkRegion(t, oldText, newText, context%8)
	})
}
