package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// applyParts puts each part's New in place of its Old, back to front, and
// fails unless every Old is where it says.
func applyParts(t *testing.T, oldText string, parts []Part) string {
	t.Helper()
	out := oldText
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if p.At < 0 || p.At+len(p.Old) > len(out) || out[p.At:p.At+len(p.Old)] != p.Old {
			t.Fatalf("part %d: Old is not at %d", i, p.At)
		}
		if p.Line != 1+strings.Count(oldText[:p.At], "\n") {
			t.Errorf("part %d: line %d, want %d", i, p.Line, 1+strings.Count(oldText[:p.At], "\n"))
		}
		out = out[:p.At] + p.New + out[p.At+len(p.Old):]
	}
	return out
}

func preview(path, oldText, newText string) string {
	return Preview([]PreviewFile{{From: "a/" + path, To: "b/" + path, OldText: oldText, NewText: newText}})
}

// assertNotAPatch fails unless a cut preview says so and has none of the
// lines by which the editors' plugins read a unified diff to apply it
// ("--- "/"+++ " file headers, "@@ -" hunk headers): applied, a cut line
// would put its note into the file.
func assertNotAPatch(t *testing.T, u string) {
	t.Helper()
	if !strings.HasPrefix(u, "The preview is cut") || !strings.Contains(u, "for reading, not a patch") {
		t.Errorf("cut preview does not say so: %.200s", u)
	}
	for l := range strings.Lines(u) {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@ -") {
			t.Errorf("cut preview has a patch line %.100q", l)
			return
		}
	}
}

// A small edit's preview is the exact unified diff, which the plugins
// apply; of several files, too.
func TestPreviewExactWhenSmall(t *testing.T) {
	got := Preview([]PreviewFile{
		{From: "a/x.go", To: "b/x.go", OldText: "a\nb\nc\n", NewText: "a\nB\nc\n"},
		{From: "/dev/null", To: "b/new.txt", NewText: "hello\n"},
	})
	want := "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
	if got != want {
		t.Errorf("Preview =\n%s\nwant\n%s", got, want)
	}
}

// A long line that is only added (no removed line to compare it with) is
// cut too, and the whole preview then is no patch; one under the bound
// is sent exact, for the plugins to apply.
func TestPreviewOfAnAddedLongLine(t *testing.T) {
	u := preview("a.txt", "short\n", "short\n"+strings.Repeat("y", 2<<20)+"\n")
	if !strings.Contains(u, "characters left out") || len(u) > 1<<10 {
		t.Errorf("preview (%d bytes): %.300s", len(u), u)
	}
	assertNotAPatch(t, u)
	long := "short\n" + strings.Repeat("y", 5000) + "\n"
	if u := preview("a.txt", "short\n", long); u != Unified("a.txt", "short\n", long, -1) {
		t.Errorf("a 5,000-byte line made the preview %.200q, want the exact diff", u)
	}
}

func partBytes(parts []Part) int {
	n := 0
	for _, p := range parts {
		n += len(p.Old) + len(p.New)
	}
	return n
}

// oneLine is a minified file: 1.7 MB on one line, one token changed in
// the middle.
func oneLine() (oldText, newText string) {
	var b strings.Builder
	for i := 0; b.Len() < 1700<<10; i++ {
		b.WriteString(`{"k":"value`)
		b.WriteString(strings.Repeat("é", i%3))
		b.WriteString(`"},`)
	}
	oldText = b.String()
	mid := len(oldText) / 2
	mid = strings.Index(oldText[mid:], "value") + mid
	newText = oldText[:mid] + "VALUE" + oldText[mid+5:]
	return oldText, newText
}

func TestViewsOfAOneTokenEditToAHugeLine(t *testing.T) {
	oldText, newText := oneLine()
	cd := Compact("min.json", oldText, newText)
	if len(cd.Text) > 2<<10 {
		t.Errorf("compact diff is %d bytes for a one-token edit, want it bounded", len(cd.Text))
	}
	for _, want := range []string{"-1: ", "+1: ", "VALUE", "characters left out"} {
		if !strings.Contains(cd.Text, want) {
			t.Errorf("compact diff lacks %q:\n%s", want, cd.Text)
		}
	}
	if cd.Added != 1 || cd.Removed != 1 {
		t.Errorf("counts %d added, %d removed; want 1 and 1", cd.Added, cd.Removed)
	}
	u := preview("min.json", oldText, newText)
	if len(u) > 2<<10 || !strings.Contains(u, "VALUE") || !strings.Contains(u, "characters left out") || !strings.Contains(u, "@@@ -1 +1 @@@") {
		t.Errorf("preview (%d bytes) is not the change in its context:\n%.1000s", len(u), u)
	}
	assertNotAPatch(t, u)
	parts, left, _ := Regions(oldText, newText, -1, -1)
	if left != 0 || len(parts) != 1 || partBytes(parts) > 2*(2*regionKeep+10) {
		t.Fatalf("regions: %d parts of %d bytes, %d left out; want one small part", len(parts), partBytes(parts), left)
	}
	if got := applyParts(t, oldText, parts); got != newText {
		t.Error("the region does not make the new text")
	}
	if !utf8.ValidString(parts[0].Old) || !utf8.ValidString(parts[0].New) {
		t.Error("the region splits a character")
	}
}

// The note counts characters, not bytes, and the line keeps whole ones.
func TestCutLineCountsCharacters(t *testing.T) {
	line := strings.Repeat("é", 1000) // 2,000 bytes
	got := ClipLine(line)
	if !utf8.ValidString(got) || !strings.Contains(got, "[… 850 characters left out …]") {
		t.Errorf("ClipLine = %q", got)
	}
	short := strings.Repeat("x", MaxLineBytes)
	if ClipLine(short) != short {
		t.Error("a line at the bound was cut")
	}
}

func TestViewsOfEditsAtBothEndsOfALongFile(t *testing.T) {
	lines := make([]string, 50000)
	for i := range lines {
		lines[i] = "line " + strings.Repeat("x", i%40) + "\n"
	}
	oldText := strings.Join(lines, "")
	lines[0], lines[len(lines)-1] = "first changed\n", "last changed\n"
	newText := strings.Join(lines, "")
	cd := Compact("long.txt", oldText, newText)
	if len(cd.Text) > 1<<10 || !strings.Contains(cd.Text, "+1: first changed") || !strings.Contains(cd.Text, "+50000: last changed") {
		t.Errorf("compact diff (%d bytes):\n%s", len(cd.Text), cd.Text)
	}
	u := preview("long.txt", oldText, newText)
	if u != Unified("long.txt", oldText, newText, -1) || strings.Count(u, "\n@@ -") != 2 {
		t.Errorf("preview (%d bytes) is not the exact diff of two small hunks:\n%.1000s", len(u), u)
	}
	parts, left, _ := Regions(oldText, newText, -1, -1)
	if left != 0 || len(parts) != 2 || partBytes(parts) > 2<<10 {
		t.Fatalf("regions: %d parts of %d bytes, %d left out; want two small ones, not the file between", len(parts), partBytes(parts), left)
	}
	if parts[0].Line != 1 || parts[1].Line != 50000-3 {
		t.Errorf("regions start at lines %d and %d, want 1 and %d", parts[0].Line, parts[1].Line, 50000-3)
	}
	if got := applyParts(t, oldText, parts); got != newText {
		t.Error("the regions do not make the new text")
	}
}

// Bytes that are not text (past the head the edit tools sniff) are shown
// as valid text, bounded, and the regions keep them exact.
func TestViewsOfABinaryishFile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := []byte(strings.Repeat("text ", 2000))
	for range 1 << 20 {
		c := byte(r.IntN(256))
		if c == '\n' {
			c = 0xff
		}
		b = append(b, c)
	}
	oldText := string(b)
	mid := len(b) / 2
	newText := oldText[:mid] + "EDIT" + oldText[mid+1:]
	cd := Compact("blob.dat", oldText, newText)
	if len(cd.Text) > 4<<10 || !utf8.ValidString(cd.Text) || !strings.Contains(cd.Text, "EDIT") || !strings.Contains(cd.Text, "characters left out") {
		t.Errorf("compact diff of %d bytes, valid %v:\n%.600q", len(cd.Text), utf8.ValidString(cd.Text), cd.Text)
	}
	u := preview("blob.dat", oldText, newText)
	if len(u) > 4<<10 || !strings.Contains(u, "EDIT") {
		t.Errorf("preview of %d bytes", len(u))
	}
	assertNotAPatch(t, u)
	parts, left, _ := Regions(oldText, newText, -1, -1)
	if left != 0 || partBytes(parts) > 4<<10 {
		t.Fatalf("regions: %d parts of %d bytes, %d left out", len(parts), partBytes(parts), left)
	}
	if got := applyParts(t, oldText, parts); got != newText {
		t.Error("the regions do not make the new text")
	}
}

// Many long changed lines: the diffs stop at their byte bound and say how
// much they left out; a region too large to send whole is left out and
// counted, never cut.
func TestViewsOfALargeChangeAreBounded(t *testing.T) {
	var ob, nb strings.Builder
	for i := range 2000 {
		ob.WriteString(strings.Repeat("a", 1000) + "\n")
		nb.WriteString(strings.Repeat("b", 900+i%7) + "\n")
	}
	oldText, newText := ob.String(), nb.String()
	cd := Compact("big.txt", oldText, newText)
	if len(cd.Text) > MaxDiffBytes+2*MaxLineBytes || !strings.Contains(cd.Text, "diff truncated") || !strings.Contains(cd.Text, "characters left out") {
		t.Errorf("compact diff is %d bytes, want at most about %d with its notes", len(cd.Text), MaxDiffBytes)
	}
	if cd.Added != 2000 || cd.Removed != 2000 {
		t.Errorf("counts %d/%d, want every line counted", cd.Added, cd.Removed)
	}
	u := preview("big.txt", oldText, newText)
	if len(u) > MaxDiffBytes+2*MaxLineBytes || !strings.Contains(u, "preview cut at 32 KiB") {
		t.Errorf("preview is %d bytes, want it cut with a note:\n…%s", len(u), u[max(0, len(u)-200):])
	}
	assertNotAPatch(t, u)
	parts, left, _ := Regions(oldText, newText, -1, -1)
	if len(parts) != 0 || left != 1 {
		t.Errorf("regions: %d parts, %d left out; want the one region past the bound left out whole", len(parts), left)
	}
}

// The text form is exact while small and cut past MaxDiffBytes, where the
// patch form is still exact.
func TestPreviewTextIsShort(t *testing.T) {
	var ob, nb strings.Builder
	for i := range 3000 {
		ob.WriteString(strings.Repeat("o", 60) + "\n")
		nb.WriteString(strings.Repeat("n", 60+i%3) + "\n")
	}
	files := []PreviewFile{{From: "a/f", To: "b/f", OldText: ob.String(), NewText: nb.String()}}
	if p := Preview(files); p != Unified("f", ob.String(), nb.String(), -1) {
		t.Errorf("Preview of %d bytes is not the exact diff", len(p))
	}
	txt := PreviewText(files)
	if len(txt) > MaxDiffBytes+2*MaxLineBytes {
		t.Errorf("PreviewText is %d bytes", len(txt))
	}
	assertNotAPatch(t, txt)
}

// Random edits inside long lines, multi-byte characters and bytes that are
// not UTF-8 among them: the regions stay exact, small when the edit is,
// and the compact diff valid text.
func TestNarrowedRegionsAreExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "é", "語", "\n", "\xff", " ", "😀"}
	for i := range 300 {
		var b strings.Builder
		n := 500 + r.IntN(5000)
		for b.Len() < n {
			c := alphabet[r.IntN(len(alphabet))]
			if c == "\n" && r.IntN(50) != 0 {
				c = "x" // few line breaks: long lines
			}
			b.WriteString(c)
		}
		oldText := b.String()
		at := r.IntN(len(oldText) + 1)
		end := min(len(oldText), at+r.IntN(20))
		newText := oldText[:at] + alphabet[r.IntN(len(alphabet))] + oldText[end:]
		parts, left, _ := Regions(oldText, newText, r.IntN(4), -1)
		if left != 0 {
			t.Fatalf("case %d: %d regions left out", i, left)
		}
		if got := applyParts(t, oldText, parts); got != newText {
			t.Fatalf("case %d: the regions do not make the new text", i)
		}
		// At most: the context lines, each whole only when short, and
		// regionKeep bytes each side of the change, in both parts.
		if bound := 2 * (2*3*MaxLineBytes + 4*regionKeep + 40); partBytes(parts) > bound {
			t.Errorf("case %d: %d bytes of regions for a small edit, want at most %d", i, partBytes(parts), bound)
		}
		if cd := Compact("f", oldText, newText); !utf8.ValidString(cd.Text) {
			t.Fatalf("case %d: compact diff is not valid UTF-8", i)
		}
	}
}
