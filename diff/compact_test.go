package diff

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCompactConformance(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "conformance", "cline", "cline_editor_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name     string  `json:"name"`
			Original *string `json:"original"`
			Options  struct {
				MaxDiffLines int `json:"maxDiffLines"`
			} `json:"options"`
			ExpectedFile   string `json:"expected_file"`
			ExpectedResult string `json:"expected_result"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	const path = "src/file.txt"
	ran := 0
	for _, c := range file.Cases {
		if !strings.Contains(c.ExpectedResult, "```diff") || c.Original == nil {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			var opts []Option
			if c.Options.MaxDiffLines > 0 {
				opts = append(opts, MaxLines(c.Options.MaxDiffLines))
			}
			got := Compact(path, *c.Original, c.ExpectedFile, opts...)
			want := strings.ReplaceAll(c.ExpectedResult, "{path}", path)
			if got.Text != want {
				t.Errorf("Compact text:\n%s\nwant:\n%s", got.Text, want)
			}
			if n := strings.Count(want, "\n-"); got.Removed < n {
				t.Errorf("Removed = %d, fewer than the %d shown", got.Removed, n)
			}
		})
	}
	if ran < 5 {
		t.Errorf("only %d conformance cases carry a compact diff; expected at least 5", ran)
	}
}

func TestCompact(t *testing.T) {
	fence := func(lines ...string) string {
		if len(lines) == 0 {
			return "Edited f\n```diff\n```"
		}
		return "Edited f\n```diff\n" + strings.Join(lines, "\n") + "\n```"
	}
	tests := []struct {
		name           string
		old, new       string
		opts           []Option
		want           string
		removed, added int
	}{
		{name: "no change", old: "a\nb\n", new: "a\nb\n", want: fence()},
		{name: "both empty", old: "", new: "", want: fence()},
		{name: "from empty", old: "", new: "x\ny\n", want: fence("+1: x", "+2: y"), added: 2},
		{name: "to empty", old: "x\ny", new: "", want: fence("-1: x", "-2: y"), removed: 2},
		{
			name: "two hunks in order",
			old:  "a\nb\nc\nd\ne\nf\ng\n", new: "a\nB\nc\nd\ne\nF\nG\nh\ng\n",
			want:    fence("-2: b", "+2: B", "-6: f", "+6: F", "+7: G", "+8: h"),
			removed: 2, added: 4,
		},
		{
			name: "line numbers shift between hunks",
			old:  "1\n2\n3\n4\n5\n", new: "0\n1\n2\n3\n5\n",
			want:    fence("+1: 0", "-4: 4"),
			removed: 1, added: 1,
		},
		{
			name: "CRLF lines shown without CR",
			old:  "a\r\nb\r\nc\r\n", new: "a\r\nB\r\nc\r\n",
			want:    fence("-2: b", "+2: B"),
			removed: 1, added: 1,
		},
		{
			name: "CRLF to LF alone is no line change",
			old:  "a\r\nb\r\n", new: "a\nb\n",
			want: fence(),
		},
		{
			name: "final newline added shows the last line",
			old:  "a\nb", new: "a\nb\n",
			want:    fence("-2: b", "+2: b"),
			removed: 1, added: 1,
		},
		{
			name: "budget shared across hunks in order",
			old:  "a\nb\nc\nd\ne\n", new: "A\nb\nC\nd\nE\n",
			opts:    []Option{MaxLines(4)},
			want:    fence("-1: a", "+1: A", "-3: c", "+3: C", "... diff truncated (1 more removed, 1 more added lines) ..."),
			removed: 3, added: 3,
		},
		{
			name: "unused added budget goes to removed lines",
			old:  "a\nb\nc\nd\n", new: "",
			opts:    []Option{MaxLines(3)},
			want:    fence("-1: a", "-2: b", "-3: c", "... diff truncated (1 more removed, 0 more added lines) ..."),
			removed: 4,
		},
		{
			name: "MaxLines(0) shows everything",
			old:  strings.Repeat("x\n", 300), new: "",
			opts:    []Option{MaxLines(0)},
			removed: 300,
		},
		{
			name: "invalid UTF-8 shown as replacement character",
			old:  "a\n\xff\xfe\n", new: "a\nb\n",
			want:    fence("-2: \uFFFD", "+2: b"),
			removed: 1, added: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compact("f", tt.old, tt.new, tt.opts...)
			if tt.want != "" && got.Text != tt.want {
				t.Errorf("Text:\n%s\nwant:\n%s", got.Text, tt.want)
			}
			if got.Removed != tt.removed || got.Added != tt.added {
				t.Errorf("Removed, Added = %d, %d; want %d, %d", got.Removed, got.Added, tt.removed, tt.added)
			}
			if tt.want == "" && strings.Contains(got.Text, "truncated") {
				t.Errorf("unexpected truncation:\n%s", got.Text)
			}
		})
	}
}

func TestCompactDefaultBudget(t *testing.T) {
	var old strings.Builder
	for range 500 {
		old.WriteString("line\n")
	}
	got := Compact("f", old.String(), "")
	shown := strings.Count(got.Text, "\n-")
	if shown != DefaultMaxLines {
		t.Errorf("shown %d removed lines, want %d", shown, DefaultMaxLines)
	}
	if !strings.Contains(got.Text, "(300 more removed, 0 more added lines)") {
		t.Errorf("missing truncation summary:\n%s", got.Text[len(got.Text)-200:])
	}
}

func TestSplitBudget(t *testing.T) {
	for _, tt := range []struct{ r, a, max, wr, wa int }{
		{10, 1, 3, 2, 1}, // from the conformance cases
		{6, 4, 6, 3, 3},
		{2, 2, 4, 2, 2},
		{0, 9, 4, 0, 4},
		{9, 0, 4, 4, 0},
		{1, 9, 4, 1, 3},
		{9, 1, 4, 3, 1},
		{5, 5, 5, 3, 2},
	} {
		r, a := splitBudget(tt.r, tt.a, tt.max)
		if r != tt.wr || a != tt.wa {
			t.Errorf("splitBudget(%d, %d, %d) = %d, %d; want %d, %d", tt.r, tt.a, tt.max, r, a, tt.wr, tt.wa)
		}
	}
}

// applyHunks rebuilds the new lines from the old ones and the hunks, so a
// test can check Lines against any pair of texts without an oracle.
func applyHunks(t *testing.T, oldLines []string, hunks []Hunk) []string {
	t.Helper()
	var out []string
	next := 1 // next old line to copy
	for _, h := range hunks {
		if h.OldLine < next {
			t.Fatalf("hunk at old line %d overlaps or is out of order (next %d)", h.OldLine, next)
		}
		out = append(out, oldLines[next-1:h.OldLine-1]...)
		if len(out)+1 != h.NewLine {
			t.Fatalf("hunk NewLine %d, but it starts at new line %d", h.NewLine, len(out)+1)
		}
		for i, r := range h.Removed {
			if oldLines[h.OldLine-1+i] != r {
				t.Fatalf("hunk removes %q at old line %d, which is %q", r, h.OldLine+i, oldLines[h.OldLine-1+i])
			}
		}
		out = append(out, h.Added...)
		next = h.OldLine + len(h.Removed)
	}
	return append(out, oldLines[next-1:]...)
}

func TestLinesRebuildsNewText(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "", "a\r", "\xff", "é", "😀"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(4) > 0 {
				b.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
			}
		}
		return b.String()
	}
	for range 3000 {
		old, new := gen(), gen()
		hunks := Lines(old, new)
		got := applyHunks(t, texts(splitLines(old)), hunks)
		want := texts(splitLines(new))
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("Lines(%q, %q) = %+v rebuilds %q, want %q", old, new, hunks, got, want)
		}
		for _, h := range hunks {
			if len(h.Removed) == 0 && len(h.Added) == 0 {
				t.Fatalf("empty hunk in %+v", hunks)
			}
		}
	}
}

func TestLinesManyDistinctLines(t *testing.T) {
	// More distinct lines than the surrogate gap: names must skip it and
	// stay distinct, or go-diff would merge lines and report them equal.
	var old, new strings.Builder
	for i := range 70000 {
		old.WriteString(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i) + "\n")
		if i == 60000 {
			new.WriteString("changed\n")
			continue
		}
		new.WriteString(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i) + "\n")
	}
	// Changing the first line too keeps every line in the region go-diff sees.
	hunks := Lines("0\n"+old.String(), "1\n"+new.String())
	var removed, added int
	for _, h := range hunks {
		removed += len(h.Removed)
		added += len(h.Added)
	}
	if removed != 2 || added != 2 {
		t.Errorf("got %d removed, %d added lines in %d hunks; want 2 and 2", removed, added, len(hunks))
	}
}

func FuzzCompact(f *testing.F) {
	f.Add("a\nb\nc", "a\nB\nc", 3)
	f.Add("a\r\nb\r\n", "a\nb", 0)
	f.Add("\xff\xfe\n\xed\xa0\x80", "\xc0", 1)
	f.Fuzz(func(t *testing.T, old, new string, max int) {
		got := Compact("p", old, new, MaxLines(max%300))
		if !strings.HasPrefix(got.Text, "Edited p\n```diff\n") || !strings.HasSuffix(got.Text, "```") {
			t.Fatalf("malformed message %q", got.Text)
		}
		hunks := Lines(old, new)
		rebuilt := applyHunks(t, texts(splitLines(old)), hunks)
		if strings.Join(rebuilt, "\n") != strings.Join(texts(splitLines(new)), "\n") {
			t.Fatalf("hunks %+v do not rebuild the new text", hunks)
		}
	})
}
