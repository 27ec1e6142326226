package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

func TestListFiles(t *testing.T) {
	files := wsTree(t, map[string]string{
		".gitignore":           "build/\n*.log\n",
		".clineignore":         "secrets/\n",
		"README.md":            "r",
		"a.go":                 "a",
		"a/z.go":               "z",
		"a/b/deep.go":          "d",
		"a-b.txt":              "x",
		"build/out.bin":        "o",
		"debug.log":            "l",
		"secrets/key.pem":      "k",
		".git/HEAD":            "ref",
		".github/workflow.yml": "w",
		"node/x.js":            "x",
	})
	if err := os.Mkdir(filepath.Join(files.Root(), "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(files.Root(), "a"), filepath.Join(files.Root(), "link")); err != nil {
		t.Fatal(err)
	}

	res := wsRun(t, files, tools.NameListFiles, `{"path":"."}`)
	want := "The workspace folder (10 entries):\n.clineignore\n.github/\n.gitignore\nREADME.md\na/\na-b.txt\na.go\nempty/\nlink/\nnode/\n" +
		"[3 entries hidden by .gitignore or .clineignore are not listed.]\n"
	if res.Content != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Content, want)
	}

	res = wsRun(t, files, tools.NameListFiles, `{"path":"a","recursive":true}`)
	if want := "a/ (3 entries, recursive):\na/b/\na/b/deep.go\na/z.go\n"; res.Content != want {
		t.Errorf("recursive: got:\n%s\nwant:\n%s", res.Content, want)
	}

	res = wsRun(t, files, tools.NameListFiles, `{"path":"","recursive":true}`)
	wsWant(t, res.Content, "a/b/deep.go\n", ".github/workflow.yml\n", "node/x.js\n", "link/\n")
	wsWantNot(t, res.Content, "link/z.go", ".git/", "HEAD", "build", "debug.log", "secrets")

	res = wsRun(t, files, tools.NameListFiles, `{"path":"empty"}`)
	if res.Content != "empty/ is empty.\n" {
		t.Errorf("empty folder: %q", res.Content)
	}

	// A folder the rules hide is listed when named.
	res = wsRun(t, files, tools.NameListFiles, `{"path":"build"}`)
	wsWant(t, res.Content, "build/out.bin\n", "itself excluded")
}

func TestListFilesErrors(t *testing.T) {
	files := wsTree(t, map[string]string{"f.txt": "x"})
	for _, c := range []struct{ args, want string }{
		{`{"path":"missing"}`, "Folder not found: missing/"},
		{`{"path":"f.txt"}`, "f.txt is a file, not a folder; use read_files"},
		{`{"path":"../.."}`, "out of the workspace"},
		{`{"path":"/"}`, "outside the workspace"},
	} {
		res := wsRun(t, files, tools.NameListFiles, c.args)
		if !res.IsError {
			t.Errorf("%s: not an error: %s", c.args, res.Content)
		}
		wsWant(t, res.Content, c.want)
	}
}

func TestListFilesLimit(t *testing.T) {
	tree := map[string]string{}
	for i := range 150 {
		tree[fmt.Sprintf("top%03d.txt", i)] = "x"
		tree[fmt.Sprintf("sub/f%03d.txt", i)] = "x"
	}
	files := wsTree(t, tree)
	res := wsRun(t, files, tools.NameListFiles, `{"path":".","recursive":true}`)
	lines := strings.Split(strings.TrimSpace(res.Content), "\n")
	entries := 0
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "[") {
			entries++
		}
	}
	if entries != 200 {
		t.Errorf("%d entries shown, want 200", entries)
	}
	// Breadth first: every top-level entry makes the cut.
	wsWant(t, res.Content, "top000.txt\n", "top149.txt\n", "sub/\n", "sub/f000.txt\n",
		"[Showing 200 of 301 entries: the list was cut at 200.")
	wsWantNot(t, res.Content, "sub/f149.txt")
	// Output is sorted: sub/ and its files come before the top files.
	if strings.Index(res.Content, "sub/f000.txt") > strings.Index(res.Content, "top000.txt") {
		t.Error("entries are not sorted by path")
	}

	inv, err := wsBuild(t, files, tools.NameListFiles, `{"path":"sub","recursive":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(context.Background()); d.Title != "List sub/ (recursive)" || d.Kind != tools.KindRead ||
		len(d.Locations) != 1 || d.Locations[0].Path != filepath.Join(files.Root(), "sub") {
		t.Errorf("description %+v", d)
	}
}
