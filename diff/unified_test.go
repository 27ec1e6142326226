package diff

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// diffU runs the system diff -u and returns its hunks without the header.
func diffU(t *testing.T, old, new string, context int) string {
	t.Helper()
	bin, err := exec.LookPath("diff")
	if err != nil {
		testenv.Missing(t, "diff is not installed (Debian: diffutils); TestUnifiedMatchesDiffU compares with it")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(new), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-U"+strconv.Itoa(context), a, b).Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("diff: %v", err)
	}
	return stripHeader(string(out))
}

func stripHeader(s string) string {
	for range 2 {
		if i := strings.IndexByte(s, '\n'); i >= 0 && (strings.HasPrefix(s, "---") || strings.HasPrefix(s, "+++")) {
			s = s[i+1:]
		}
	}
	return s
}

func numbered(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
	}
	return b.String()
}

func TestUnifiedMatchesDiffU(t *testing.T) {
	base := numbered(40, func(i int) string { return "line " + strconv.Itoa(i) + "\n" })
	tests := []struct {
		name     string
		old, new string
		context  int
	}{
		{"one changed line", base, strings.Replace(base, "line 20\n", "LINE 20\n", 1), 3},
		{"change at the start", base, "first\n" + base[len("line 1\n"):], 3},
		{"change at the end", base, base + "line 41\n", 3},
		{"two far hunks", base, strings.Replace(strings.Replace(base, "line 5\n", "five\n", 1), "line 30\n", "", 1), 3},
		{"near hunks merge", base, strings.Replace(strings.Replace(base, "line 10\n", "ten\n", 1), "line 16\n", "sixteen\n", 1), 3},
		{"gap of seven stays split", base, strings.Replace(strings.Replace(base, "line 10\n", "ten\n", 1), "line 18\n", "eighteen\n", 1), 3},
		{"no context", base, strings.Replace(base, "line 7\n", "seven\nand more\n", 1), 0},
		{"pure insertion without context", base, strings.Replace(base, "line 7\n", "line 7\nnew\n", 1), 0},
		{"pure deletion without context", base, strings.Replace(base, "line 7\n", "", 1), 0},
		{"one line of context", base, strings.Replace(base, "line 2\n", "two\n", 1), 1},
		{"no newline at end of old", "a\nb\nc", "a\nb\nc\n", 3},
		{"no newline at end of new", "a\nb\nc\n", "a\nB\nc", 3},
		{"no newline at end of either", "a\nb\nc", "a\nB\nc", 3},
		{"no newline, context line at end", "a\nb\nc\nd", "a\nB\nc\nd", 3},
		{"from empty", "", "x\ny\n", 3},
		{"to empty", "x\ny\n", "", 3},
		{"CRLF to LF is a change", "a\r\nb\r\n", "a\nb\r\n", 3},
		{"big context", base, strings.Replace(base, "line 20\n", "", 1), 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unified("f.txt", tt.old, tt.new, tt.context)
			if !strings.HasPrefix(got, "--- a/f.txt\n+++ b/f.txt\n") {
				t.Fatalf("bad header:\n%s", got)
			}
			if want := diffU(t, tt.old, tt.new, tt.context); stripHeader(got) != want {
				t.Errorf("Unified:\n%s\ndiff -u:\n%s", stripHeader(got), want)
			}
		})
	}
}

func TestUnifiedEqual(t *testing.T) {
	if got := Unified("f", "a\nb\n", "a\nb\n", 3); got != "" {
		t.Errorf("Unified of equal texts = %q, want empty", got)
	}
}

func TestUnifiedDefaultContext(t *testing.T) {
	base := numbered(20, func(i int) string { return strconv.Itoa(i) + "\n" })
	changed := strings.Replace(base, "10\n", "ten\n", 1)
	if got, want := Unified("f", base, changed, -1), Unified("f", base, changed, DefaultContext); got != want {
		t.Errorf("negative context:\n%s\nwant:\n%s", got, want)
	}
}

// applyUnified applies a unified diff produced by Unified to old, checking
// every context and removed line against it.
func applyUnified(t *testing.T, old, patch string) string {
	t.Helper()
	oldLines := splitKeepEnds(old)
	lines := splitKeepEnds(stripHeader(patch))
	var out strings.Builder
	next := 0 // index of the next old line to copy
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "@@ -") {
			t.Fatalf("expected a hunk header, got %q in\n%s", l, patch)
		}
		field := strings.Fields(l)[1][1:]
		start, count, _ := strings.Cut(field, ",")
		n, err := strconv.Atoi(start)
		if err != nil {
			t.Fatal(err)
		}
		if count != "0" {
			n-- // 1-based first line, unless the old side is empty
		}
		for _, ol := range oldLines[next:n] {
			out.WriteString(ol)
		}
		next = n
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "@@ ") {
			i++
			l := lines[i]
			body := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if oldLines[next] != body {
					t.Fatalf("line %d is %q, patch says %q", next+1, oldLines[next], body)
				}
				next++
				if l[0] == ' ' {
					out.WriteString(body)
				}
			case '+':
				out.WriteString(body)
			default:
				t.Fatalf("bad patch line %q", l)
			}
		}
	}
	for _, ol := range oldLines[next:] {
		out.WriteString(ol)
	}
	return out.String()
}

func TestUnifiedAppliesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	pieces := []string{"a\n", "b\n", "c\n", "d\r\n", "é\n", "x", "\n", "same\n", "same\n", "same\n"}
	for range 2000 {
		old := randomText(r, pieces, 40)
		new := randomText(r, pieces, 40)
		if r.IntN(2) == 0 {
			i := r.IntN(len(old) + 1)
			new = old[:i] + randomText(r, pieces, 4) + old[i:]
		}
		ctx := r.IntN(5)
		patch := Unified("p", old, new, ctx)
		if old == new {
			if patch != "" {
				t.Fatalf("patch for equal texts: %q", patch)
			}
			continue
		}
		if got := applyUnified(t, old, patch); got != new {
			t.Fatalf("Unified(%q, %q, %d) =\n%s\napplies to %q", old, new, ctx, patch, got)
		}
	}
}
