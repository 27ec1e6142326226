package tools_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
)

func TestSearchCodebaseOutput(t *testing.T) {
	files := wsTree(t, map[string]string{
		".gitignore":      "gen/\n",
		"a.go":            "package a\n\nfunc NewA() {}\nfunc helper() {}\nfunc NewB() {}\n\n\n\nfunc NewC() {}\n",
		"sub/b.go":        "package sub\nfunc NewSub() {}\n",
		"sub/b.txt":       "func NewText() {}\n",
		"gen/gen.go":      "func NewGenerated() {}\n",
		".git/hooks/x.go": "func NewHook() {}\n",
		"img.bin":         "func NewBinary() {}\x00\x00",
	})
	res := wsRun(t, files, tools.NameSearchCodebase, `{"queries":["func New\\w+"]}`)
	want := "`func New\\w+`: 5 matches in 3 files\n" +
		"a.go\n2-\n3:func NewA() {}\n4-func helper() {}\n5:func NewB() {}\n6-\n--\n8-\n9:func NewC() {}\n" +
		"sub/b.go\n1-package sub\n2:func NewSub() {}\n" +
		"sub/b.txt\n1:func NewText() {}\n" +
		"\nSearched 4 files in the workspace folder; skipped 1 binary file.\n"
	if res.Content != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Content, want)
	}

	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["func New"],"path":"sub","file_pattern":"*.go"}`)
	wsWant(t, res.Content, "sub/b.go\n", "Searched 1 file in sub (*.go).")
	wsWantNot(t, res.Content, "b.txt", "a.go")

	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["nothing like this"]}`)
	wsWant(t, res.Content, "`nothing like this`: no matches\n")
	if res.IsError {
		t.Error("no matches is not an error")
	}

	// A folder the rules hide is searched when named.
	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["NewGenerated"],"path":"gen"}`)
	wsWant(t, res.Content, "gen/gen.go\n1:func NewGenerated", "itself excluded")
}

func TestSearchCodebaseErrors(t *testing.T) {
	files := wsTree(t, map[string]string{"a.txt": "a\n"})
	_, err := wsBuild(t, files, tools.NameSearchCodebase, `{"queries":["ok","(foo","a(?=b)"],"file_pattern":"[x-"}`)
	wsWant(t, wsErrorText(t, err),
		`queries[1]: "(foo" is not a valid regular expression (RE2 syntax): missing closing )`,
		"put a backslash before ( ) [ ] { } * + ? . | to match it literally",
		`queries[2]: "a(?=b)" is not a valid regular expression`, "no lookahead",
		`file_pattern: "[x-" is not a valid glob`)

	_, err = wsBuild(t, files, tools.NameSearchCodebase, `{"queries":[""]}`)
	wsWant(t, wsErrorText(t, err), `queries[0]: "" is empty`)

	for _, c := range []struct{ args, want string }{
		{`{"queries":["a"],"path":"missing"}`, "Not found: missing."},
		{`{"queries":["a"],"path":"/"}`, "outside the workspace"},
	} {
		res := wsRun(t, files, tools.NameSearchCodebase, c.args)
		if !res.IsError {
			t.Errorf("%s: not an error", c.args)
		}
		wsWant(t, res.Content, c.want)
	}
}

func TestSearchCodebaseSharesResultsAmongQueries(t *testing.T) {
	var common strings.Builder
	for i := range 400 {
		fmt.Fprintf(&common, "common %d\n\n", i)
	}
	files := wsTree(t, map[string]string{"c.txt": common.String(), "r.txt": "rare one\nrare two\n"})
	res := wsRun(t, files, tools.NameSearchCodebase, `{"queries":["common","rare"]}`)
	wsWant(t, res.Content,
		"## `common`: at least 300 matches in 1 file (showing the first 298, in path order",
		"## `rare`: 2 matches in 1 file\n", "r.txt\n1:rare one\n2:rare two\n",
		"595:common 297\n", "Searched 2 files")
	wsWantNot(t, res.Content, "common 298\n")
}

func TestSearchCodebaseCutsLongOutput(t *testing.T) {
	var b strings.Builder
	// Short lines between the long ones keep the file from counting as
	// minified.
	for i := range 500 {
		fmt.Fprintf(&b, "hit %d %s\nshort\nshort\nshort\n", i, strings.Repeat("w", 1000))
	}
	files := wsTree(t, map[string]string{"wide.txt": b.String()})
	res := wsRun(t, files, tools.NameSearchCodebase, `{"queries":["hit"]}`)
	wsWant(t, res.Content, "characters cut from the middle", "1:hit 0 ", "Searched 1 file")
	if len(res.Content) > tools.MaxToolOutput+200 {
		t.Errorf("output is %d bytes", len(res.Content))
	}
	// Lines are cut to a window around the match.
	wsWantNot(t, res.Content, strings.Repeat("w", 600))
}

// bufferFiles adds the list of open buffers to toolstest.Files.
type bufferFiles struct {
	*toolstest.Files
	open []string
}

func (b *bufferFiles) OpenBuffers() []string { return b.open }

func TestSearchCodebaseSearchesOpenBuffers(t *testing.T) {
	disk := wsTree(t, map[string]string{"a.txt": "saved text\n", "b.txt": "saved text\n"})
	files := &bufferFiles{Files: disk}
	files.open = append(files.open, disk.OpenBuffer("a.txt", "unsaved text\n"))
	res := wsRun(t, files, tools.NameSearchCodebase, `{"queries":["saved text"]}`)
	wsWant(t, res.Content, "a.txt\n1:unsaved text\n", "b.txt\n1:saved text\n")
	wsWantNot(t, res.Content, "a.txt\n1:saved")

	inv, err := wsBuild(t, files, tools.NameSearchCodebase, `{"queries":["x","y","z","w"],"path":"a.txt","file_pattern":"*.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Describe(context.Background())
	if d.Title != "Search `x`, `y` and 2 more in a.txt (*.txt)" || d.Kind != tools.KindSearch {
		t.Errorf("description %+v", d)
	}
	if len(d.Locations) != 1 || d.Locations[0].Path != filepath.Join(disk.Root(), "a.txt") {
		t.Errorf("locations %+v", d.Locations)
	}
}
