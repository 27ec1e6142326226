package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRegion fails unless Regions' parts are a faithful cut of the edit:
// put back in place of the old parts, the new parts give newText; each
// starts and ends on line boundaries (the lines here are short); and the
// unified diffs of the parts, with the same context, have together the
// hunks as that of the whole texts (so no context line is missing and
// none is extra).
func checkRegion(t *testing.T, oldText, newText string, context int) []Part {
	t.Helper()
	parts, left, _ := Regions(oldText, newText, context, -1)
	if left != 0 {
		t.Fatalf("%d regions left out of a small edit", left)
	}
	if oldText == newText {
		if len(parts) != 0 {
			t.Fatalf("equal texts gave parts %+v", parts)
		}
		return parts
	}
	if got := applyParts(t, oldText, parts); got != newText {
		t.Fatalf("applying the regions to %q gives %q, want %q (parts %+v)", oldText, got, newText, parts)
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
	whole := Unified("f", oldText, newText, context)
	if n := strings.Count(whole, "\n@@ -"); n != len(parts) {
		t.Fatalf("%d regions for %d hunks", len(parts), n)
	}
	var cut strings.Builder
	for _, p := range parts {
		if p.At > 0 && oldText[p.At-1] != '\n' {
			t.Fatalf("a part starts inside a line (byte %d of %q)", p.At, oldText)
		}
		end := p.At + len(p.Old)
		if p.Old != "" && end < len(oldText) && oldText[end-1] != '\n' {
			t.Fatalf("part %q ends inside a line of %q", p.Old, oldText)
		}
		cut.WriteString(hunks(Unified("f", p.Old, p.New, context)))
	}
	// One region is the window the whole diff is made of, so their diffs
	// are the same; apart, a region may align its lines another way.
	if len(parts) == 1 && hunks(whole) != cut.String() {
		t.Fatalf("the region's diff differs from the whole texts' diff:\n%s\nagainst\n%s", cut.String(), hunks(whole))
	}
	return parts
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
			parts := checkRegion(t, tc.old, tc.new, tc.context)
			if tc.old == tc.new {
				return
			}
			if len(parts) != 1 {
				t.Fatalf("Regions = %+v, want one part", parts)
			}
			if p := parts[0]; p.Old != tc.wantOld || p.New != tc.wantNew || p.Line != tc.wantLine {
				t.Fatalf("Regions = %q, %q, line %d; want %q, %q, line %d", p.Old, p.New, p.Line, tc.wantOld, tc.wantNew, tc.wantLine)
			}
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
		if len(oldText)+len(newText) > MaxRegionBytes {
			return
		}
		parts, _, _ := Regions(oldText, newText, context%8, -1)
		if got := applyParts(t, oldText, parts); got != newText {
			t.Fatalf("applying the regions gives %q, want %q", got, newText)
		}
	})
}
