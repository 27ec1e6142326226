package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/internal/shared"
	"github.com/cline-ls/cline-ls/tools"
)

type editReplaceCase struct {
	Name        string  `json:"name"`
	Original    string  `json:"original"`
	Diff        string  `json:"diff"`
	Expected    *string `json:"expected"`
	ExpectError bool    `json:"expect_error"`
	IsFinal     bool    `json:"isFinal"`
}

// TestReplaceInFileToolClineCases runs every case of Cline's SEARCH/REPLACE
// tests through the replace_in_file tool, on disk and in an open buffer.
func TestReplaceInFileToolClineCases(t *testing.T) {
	var data struct{ Cases []editReplaceCase }
	shared.ReadJSON(t, "cline/cline_replace_in_file_cases.json", &data)
	if len(data.Cases) == 0 {
		t.Fatal("no replace_in_file cases in the data file")
	}
	const rel = "pkg/a.txt"
	const saved = "the saved copy, older than the buffer\n"
	for _, c := range data.Cases {
		for _, open := range []bool{false, true} {
			name := c.Name + "/disk"
			if open {
				name = c.Name + "/buffer"
			}
			t.Run(name, func(t *testing.T) {
				if !c.IsFinal {
					t.Fatal("case is for streaming (isFinal false); the tool only sees complete diffs")
				}
				h := newEditHarness(t)
				abs := h.abs(rel)
				if open {
					h.write(rel, saved)
					h.files.OpenBuffer(rel, c.Original)
				} else {
					h.write(rel, c.Original)
				}
				res := h.run(tools.NameReplaceInFile, map[string]any{"path": rel, "diff": c.Diff})
				got, _ := h.disk(rel)
				if open {
					if got != saved {
						t.Errorf("disk changed to %q", got)
					}
					got, _ = h.files.Buffer(abs)
				}
				if c.ExpectError {
					if !res.IsError {
						t.Fatalf("succeeded with %q, want an error", got)
					}
					if !strings.Contains(res.Content, rel) || !strings.Contains(res.Content, "not changed") {
						t.Errorf("error does not name the file or say nothing changed: %s", res.Content)
					}
					if got != c.Original {
						t.Errorf("failed call changed the file to %q", got)
					}
					return
				}
				if res.IsError {
					t.Fatalf("unexpected error: %s", res.Content)
				}
				if c.Expected == nil {
					t.Fatal("case has neither expected output nor expect_error")
				}
				if got != *c.Expected {
					t.Errorf("file\n got %q\nwant %q", got, *c.Expected)
				}
				want := diff.Compact(rel, c.Original, *c.Expected).Text
				if !strings.HasPrefix(res.Content, want) {
					t.Errorf("result\n got %q\nwant the compact diff %q", res.Content, want)
				}
				if len(res.Edits) != 1 || res.Edits[0].Diff != want || res.Edits[0].NewText != *c.Expected {
					t.Errorf("edit record %+v", res.Edits)
				}
			})
		}
	}
}

// TestReplaceInFileTool covers a missing file, creation by an empty
// SEARCH, loose-match notes and all-or-nothing blocks.
func TestReplaceInFileTool(t *testing.T) {
	block := func(search, repl string) string {
		return "------- SEARCH\n" + search + "\n=======\n" + repl + "\n+++++++ REPLACE\n"
	}
	t.Run("missing file", func(t *testing.T) {
		h := newEditHarness(t)
		res := h.run(tools.NameReplaceInFile, map[string]any{"path": "gone.txt", "diff": block("a", "b")})
		want := "replace_in_file failed for gone.txt: the file does not exist"
		if !res.IsError || !strings.HasPrefix(res.Content, want) || !strings.HasSuffix(res.Content, "The file was not changed.") {
			t.Errorf("result %q, want it to start %q", res.Content, want)
		}
		if len(h.tree()) != 0 {
			t.Errorf("files written: %v", h.tree())
		}
	})
	t.Run("malformed diff on a missing file", func(t *testing.T) {
		h := newEditHarness(t)
		res := h.run(tools.NameReplaceInFile, map[string]any{"path": "gone.txt", "diff": "-- SEARCH\na\n=======\nb\n+++++++ REPLACE"})
		if !res.IsError || !strings.Contains(res.Content, "not a valid marker") {
			t.Errorf("result %q", res.Content)
		}
	})
	t.Run("empty SEARCH creates", func(t *testing.T) {
		h := newEditHarness(t)
		inv, err := h.build(tools.NameReplaceInFile, map[string]any{"path": "new/file.txt", "diff": "------- SEARCH\n=======\nhello\n+++++++ REPLACE"})
		if err != nil {
			t.Fatal(err)
		}
		if d := inv.Describe(context.Background()); d.Title != "Create new/file.txt" || !strings.Contains(d.Preview, "+hello") {
			t.Errorf("description %+v", d)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || res.Content != "File created successfully at: new/file.txt" {
			t.Fatalf("%v %+v", err, res)
		}
		if got, ok := h.disk("new/file.txt"); !ok || got != "hello\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("loose match is noted", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "one\n  two  \nthree\n")
		res := h.run(tools.NameReplaceInFile, map[string]any{"path": "a.txt", "diff": block("two", "TWO")})
		if res.IsError || !strings.Contains(res.Content, "```\nNote: Block 1 matched line 2 only with leading and trailing whitespace ignored.") {
			t.Errorf("result %q", res.Content)
		}
	})
	t.Run("one failing block changes nothing", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "one\ntwo\nthree\n")
		res := h.run(tools.NameReplaceInFile, map[string]any{"path": "a.txt", "diff": block("one", "ONE") + block("four", "FOUR")})
		if !res.IsError || !strings.Contains(res.Content, "block 2") {
			t.Errorf("result %q", res.Content)
		}
		if got, _ := h.disk("a.txt"); got != "one\ntwo\nthree\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("CRLF file stays CRLF", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "one\r\ntwo\r\nthree\r\n")
		res := h.run(tools.NameReplaceInFile, map[string]any{"path": "a.txt", "diff": block("two", "2a\n2b")})
		if res.IsError {
			t.Fatal(res.Content)
		}
		if got, _ := h.disk("a.txt"); got != "one\r\n2a\r\n2b\r\nthree\r\n" {
			t.Errorf("file %q", got)
		}
	})
}
