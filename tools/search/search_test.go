package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// writeTree creates files (relative path → content) under a new folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// found lists a query result as "rel:line" strings.
func found(root string, qr QueryResult) []string {
	var out []string
	for _, m := range qr.Matches {
		rel, _ := filepath.Rel(root, m.Path)
		out = append(out, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), m.Line))
	}
	return out
}

func search(t *testing.T, opts Options) *Result {
	t.Helper()
	res, err := Search(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSearchSkipsWhatItShould(t *testing.T) {
	minified := "var a=1;" + strings.Repeat("x", 10<<10) + "needle;\n"
	root := writeTree(t, map[string]string{
		".gitignore":          "build/\n*.log\n",
		"src/a.go":            "package a\n// needle here\n",
		"src/b.txt":           "no match\nneedle\n",
		"src/.hidden.go":      "needle hidden\n",
		"build/out.go":        "needle ignored\n",
		"debug.log":           "needle ignored\n",
		".git/config":         "needle in git\n",
		"bin/data.bin":        "needle\x00binary\n",
		"big/large.txt":       strings.Repeat("filler line\n", 3000) + "needle\n",
		"web/app.min.js":      minified,
		"sub/.clineignore":    "secret.txt\n",
		"sub/secret.txt":      "needle secret\n",
		"sub/visible.txt":     "needle visible\n",
		"latin1/caf\xe9.txt":  "needle caf\xe9\n",
		"deep/x/y/z/last.txt": "needle\n",
	})
	if err := os.Symlink(filepath.Join(root, "src", "a.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	ign := workspace.NewIgnoreMatcher([]string{root})
	res := search(t, Options{Root: root, Queries: []string{"needle"}, Ignored: ign.Ignored, MaxFileBytes: 20000})
	want := []string{"deep/x/y/z/last.txt:1", "latin1/caf\xe9.txt:1", "src/.hidden.go:1", "src/a.go:2", "src/b.txt:2", "sub/visible.txt:1"}
	if got := found(root, res.Queries[0]); !slices.Equal(got, want) {
		t.Errorf("found %q\nwant  %q", got, want)
	}
	if res.Binary != 1 || res.Large != 1 || res.Minified != 1 {
		t.Errorf("skipped binary %d, large %d, minified %d; want 1 each", res.Binary, res.Large, res.Minified)
	}
	if !res.Queries[0].Complete {
		t.Error("Complete is false for a search under its cap")
	}

	res = search(t, Options{Root: root, Queries: []string{"needle"}, Ignored: ign.Ignored, SkipHidden: true})
	for _, f := range found(root, res.Queries[0]) {
		if strings.Contains(f, "/.") {
			t.Errorf("SkipHidden still found %s", f)
		}
	}
}

func TestSearchGlob(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.go":          "x\n",
		"a_test.go":     "x\n",
		"pkg/b.go":      "x\n",
		"pkg/c.ts":      "x\n",
		"pkg/d.tsx":     "x\n",
		"pkg/sub/e.go":  "x\n",
		"other/f.md":    "x\n",
		"other/g.go.md": "x\n",
	})
	cases := []struct {
		glob string
		want []string
	}{
		{"*.go", []string{"a.go:1", "a_test.go:1", "pkg/b.go:1", "pkg/sub/e.go:1"}},
		{"*_test.go", []string{"a_test.go:1"}},
		{"*.{ts,tsx}", []string{"pkg/c.ts:1", "pkg/d.tsx:1"}},
		{"pkg/**/*.go", []string{"pkg/b.go:1", "pkg/sub/e.go:1"}},
		{"pkg/*.go", []string{"pkg/b.go:1"}},
	}
	for _, c := range cases {
		res := search(t, Options{Root: root, Queries: []string{"x"}, Glob: c.glob})
		if got := found(root, res.Queries[0]); !slices.Equal(got, c.want) {
			t.Errorf("glob %q: %q, want %q", c.glob, got, c.want)
		}
	}
	if _, err := Search(context.Background(), Options{Root: root, Queries: []string{"x"}, Glob: "[a-"}); err == nil ||
		!strings.Contains(err.Error(), "not a valid glob") {
		t.Errorf("bad glob: %v", err)
	}
}

// TestSearchCapIsDeterministic checks that a capped search keeps exactly
// the first matches in path order, whatever the number of workers, and
// says it is incomplete.
func TestSearchCapIsDeterministic(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		var b strings.Builder
		for j := range 7 {
			fmt.Fprintf(&b, "line %d hit %d\nmiss\n", j, i)
		}
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = b.String()
		files[fmt.Sprintf("d%d.txt", i)] = "hit at top\n"
	}
	root := writeTree(t, files)
	all := search(t, Options{Root: root, Queries: []string{"hit"}, MaxResults: -1, Workers: 1})
	if n := len(all.Queries[0].Matches); n != 40*7+40 {
		t.Fatalf("uncapped search found %d matches, want %d", n, 40*7+40)
	}
	if !all.Queries[0].Complete {
		t.Error("uncapped search is not Complete")
	}
	every := found(root, all.Queries[0])
	for _, workers := range []int{1, 2, 4, 8} {
		for _, max := range []int{1, 5, 7, 50} {
			res := search(t, Options{Root: root, Queries: []string{"hit"}, MaxResults: max, Workers: workers})
			got := found(root, res.Queries[0])
			if !slices.Equal(got, every[:max]) {
				t.Errorf("workers %d, max %d: %q\nwant %q", workers, max, got, every[:max])
			}
			if res.Queries[0].Complete {
				t.Errorf("workers %d, max %d: Complete although matches were left out", workers, max)
			}
		}
	}
	// Sorted as a walk meets them: a folder's files before "d1.txt".
	if every[0] != "d0/f00.txt:1" || !slices.Contains(every, "d1.txt:1") ||
		slices.Index(every, "d0/f39.txt:13") > slices.Index(every, "d0.txt:1") {
		t.Errorf("unexpected order: %q", every[:10])
	}
}

func TestSearchSeveralQueriesContextAndOverlay(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.txt": "one\ntwo alpha\nthree\nfour beta\n",
		"b.txt": "alpha on disk\n",
	})
	overlay := map[string][]byte{filepath.Join(root, "b.txt"): []byte("first\nbeta in the buffer\n")}
	res := search(t, Options{Root: root, Queries: []string{"alpha", "beta"}, Context: 1, Overlay: overlay})
	if got := found(root, res.Queries[0]); !slices.Equal(got, []string{"a.txt:2"}) {
		t.Errorf("alpha: %q (the buffer of b.txt has no alpha)", got)
	}
	if got := found(root, res.Queries[1]); !slices.Equal(got, []string{"a.txt:4", "b.txt:2"}) {
		t.Errorf("beta: %q", got)
	}
	m := res.Queries[0].Matches[0]
	if m.Text != "two alpha" || !slices.Equal(m.Before, []string{"one"}) || !slices.Equal(m.After, []string{"three"}) {
		t.Errorf("context: %+v", m)
	}
	last := res.Queries[1].Matches[0]
	if len(last.After) != 0 || !slices.Equal(last.Before, []string{"three"}) {
		t.Errorf("context of a last line: %+v", last)
	}
}

func TestSearchSingleFileAndLongLines(t *testing.T) {
	long := strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000)
	// Short lines around it, or the file would count as minified.
	root := writeTree(t, map[string]string{"one.txt": "x\n" + long + "\n" + strings.Repeat("short\n", 100), "two.txt": "NEEDLE\n"})
	res := search(t, Options{Root: filepath.Join(root, "one.txt"), Queries: []string{"NEEDLE"}, Glob: "*.go"})
	ms := res.Queries[0].Matches
	if len(ms) != 1 || ms[0].Line != 2 {
		t.Fatalf("single file: %+v", ms)
	}
	text := ms[0].Text
	if !strings.Contains(text, "NEEDLE") || !strings.HasPrefix(text, "…") || !strings.HasSuffix(text, "…") ||
		len(text) > DefaultMaxLineBytes+len("……") {
		t.Errorf("long line kept as %d bytes: %.60q…", len(text), text)
	}
}

func TestSearchErrorsAndCancel(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "a\n"})
	_, err := Search(context.Background(), Options{Root: root, Queries: []string{"ok", "(bad"}})
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Index != 1 {
		t.Errorf("bad query: %v", err)
	}
	_, err = Search(context.Background(), Options{Root: filepath.Join(root, "missing"), Queries: []string{"a"}})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing root: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, Options{Root: root, Queries: []string{"a"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

func TestComparePaths(t *testing.T) {
	paths := []string{"/r/a.go", "/r/a/b", "/r/a-b", "/r/a/a/z", "/r/A", "/r/a"}
	slices.SortFunc(paths, comparePaths)
	want := []string{"/r/A", "/r/a", "/r/a/a/z", "/r/a/b", "/r/a-b", "/r/a.go"}
	if !slices.Equal(paths, want) {
		t.Errorf("sorted %q, want %q", paths, want)
	}
}
