package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
	"github.com/cline-ls/cline-ls/tools"
)

type editEditorCase struct {
	Name    string `json:"name"`
	Options struct {
		MaxDiffLines int `json:"maxDiffLines"`
	} `json:"options"`
	Original       *string                    `json:"original"`
	Args           map[string]json.RawMessage `json:"args"`
	ExpectedFile   string                     `json:"expected_file"`
	ExpectedResult *string                    `json:"expected_result"`
	ExpectedError  *string                    `json:"expected_error"`
}

// TestEditorToolClineCases runs every case of Cline's editor tests through
// the editor tool: arguments as JSON, built by the registry, executed over
// a temporary workspace, once with the file closed (on disk) and once with
// it open in the editor (the buffer changes, the disk does not).
func TestEditorToolClineCases(t *testing.T) {
	var data struct{ Cases []editEditorCase }
	shared.ReadJSON(t, "cline/cline_editor_cases.json", &data)
	if len(data.Cases) == 0 {
		t.Fatal("no editor cases in the data file")
	}
	const rel = "src/notes.txt"
	// The buffer runs put this on disk, so a tool that read the disk
	// instead of the buffer would fail the case.
	const saved = "the saved copy, older than the buffer\n"
	for _, c := range data.Cases {
		for _, open := range []bool{false, true} {
			if open && c.Original == nil {
				continue // a missing file cannot be open in the editor
			}
			name := c.Name + "/disk"
			if open {
				name = c.Name + "/buffer"
			}
			t.Run(name, func(t *testing.T) {
				var opts []tools.EditOption
				if c.Options.MaxDiffLines > 0 {
					opts = append(opts, tools.EditDiffLines(c.Options.MaxDiffLines))
				}
				h := newEditHarness(t, opts...)
				abs := h.abs(rel)
				if c.Original != nil {
					if open {
						h.write(rel, saved)
						h.files.OpenBuffer(rel, *c.Original)
					} else {
						h.write(rel, *c.Original)
					}
				}
				args := map[string]json.RawMessage{"path": json.RawMessage(`"` + rel + `"`)}
				for k, v := range c.Args {
					args[k] = v
				}
				res := editRunCase(t, h, args)

				got, exists := h.disk(rel)
				if open {
					if got != saved {
						t.Errorf("disk changed to %q; an open buffer's edit must stay in the buffer", got)
					}
					got, exists = h.files.Buffer(abs)
				}
				if !exists || got != c.ExpectedFile {
					t.Errorf("file %q (exists %v), want %q", got, exists, c.ExpectedFile)
				}

				if c.ExpectedError != nil {
					want := strings.ReplaceAll(*c.ExpectedError, "{path}", rel)
					if !res.IsError || res.Content != want {
						t.Errorf("result %q (IsError %v), want error %q", res.Content, res.IsError, want)
					}
					if len(res.Edits) != 0 {
						t.Errorf("failed call lists edits: %+v", res.Edits)
					}
					return
				}
				if res.IsError {
					t.Fatalf("unexpected error: %s", res.Content)
				}
				if c.ExpectedResult != nil {
					want := strings.ReplaceAll(*c.ExpectedResult, "{path}", rel)
					if res.Content != want {
						t.Errorf("result\n got %q\nwant %q", res.Content, want)
					}
				} else if !strings.HasPrefix(res.Content, "Edited "+rel+"\n```diff\n") {
					t.Errorf("result %q is not a compact diff of %s", res.Content, rel)
				}
				if len(res.Edits) != 1 {
					t.Fatalf("%d edits, want 1", len(res.Edits))
				}
				e := res.Edits[0]
				if e.Path != rel || e.NewText != c.ExpectedFile || e.Added == 0 && e.Removed == 0 {
					t.Errorf("edit record %+v", e)
				}
				if c.Original != nil && (e.OldText != *c.Original || e.Diff != res.Content) {
					t.Errorf("edit record old %q diff %q; want the original and the result", e.OldText, e.Diff)
				}
			})
		}
	}
}

// editRunCase builds and runs one editor call. Arguments the schema
// refuses (insert_line below 1) never reach the tool through the registry,
// which answers with a validation error naming the field; the case's
// expected message is then checked against the tool's own build function,
// which is what a caller without the schema check would get.
func editRunCase(t *testing.T, h *editHarness, args map[string]json.RawMessage) tools.Result {
	t.Helper()
	raw := h.args(args)
	inv, err := h.build(tools.NameEditor, raw)
	var ve *tools.ValidationError
	if errors.As(err, &ve) {
		if len(ve.Problems) != 1 || ve.Problems[0].Path != "insert_line" {
			t.Fatalf("validation error %v, want one about insert_line", err)
		}
		inv, err = h.impls[tools.NameEditor](raw)
	}
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// TestEditorTool covers what the conformance cases do not: parents
// created, the unique match re-run on whatever the current text is, the
// description of a creation and of an insertion.
func TestEditorTool(t *testing.T) {
	t.Run("creates parents", func(t *testing.T) {
		h := newEditHarness(t)
		inv, err := h.build(tools.NameEditor, map[string]any{"path": "a/b/c.txt", "new_text": "hi\n"})
		if err != nil {
			t.Fatal(err)
		}
		d := inv.Describe(context.Background())
		if d.Title != "Create a/b/c.txt" || d.Preview != "--- /dev/null\n+++ b/a/b/c.txt\n@@ -0,0 +1 @@\n+hi\n" {
			t.Errorf("description %+v", d)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || res.Content != "File created successfully at: a/b/c.txt" {
			t.Fatalf("result %+v %v", res, err)
		}
		if got, _ := h.disk("a/b/c.txt"); got != "hi\n" {
			t.Errorf("file %q", got)
		}
		// The model wrote the whole text, so it may now replace it.
		if seen, ok := h.files.SeenText(h.abs("a/b/c.txt")); !ok || seen != "hi\n" {
			t.Errorf("SeenText = %q, %v", seen, ok)
		}
	})
	t.Run("existing file needs old_text", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "keep\n")
		res := h.run(tools.NameEditor, map[string]any{"path": "a.txt", "new_text": "clobber"})
		if !res.IsError || !strings.Contains(res.Content, "a.txt already exists") {
			t.Errorf("result %+v", res)
		}
		if got, _ := h.disk("a.txt"); got != "keep\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("old_text on a missing file", func(t *testing.T) {
		h := newEditHarness(t)
		res := h.run(tools.NameEditor, map[string]any{"path": "nope.txt", "old_text": "x", "new_text": "y"})
		if !res.IsError || !strings.Contains(res.Content, "nope.txt does not exist") {
			t.Errorf("result %+v", res)
		}
		if len(h.tree()) != 0 {
			t.Errorf("files written: %v", h.tree())
		}
	})
	t.Run("directory", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("d/x.txt", "x")
		res := h.run(tools.NameEditor, map[string]any{"path": "d", "old_text": "x", "new_text": "y"})
		if !res.IsError || res.Content != "Could not read d: is a directory, not a file. Nothing was changed." {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("insert location", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "1\n2\n3\n4\n")
		inv, err := h.build(tools.NameEditor, map[string]any{"path": "a.txt", "new_text": "x", "insert_line": 3})
		if err != nil {
			t.Fatal(err)
		}
		d := inv.Describe(context.Background())
		if d.Title != "Edit a.txt" || d.Kind != tools.KindEdit || len(d.Locations) != 1 || d.Locations[0] != (tools.Location{Path: "a.txt", Line: 3}) {
			t.Errorf("description %+v", d)
		}
	})
	t.Run("match runs on the text at execution", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "alpha\nbeta\n")
		inv, err := h.build(tools.NameEditor, map[string]any{"path": "a.txt", "old_text": "beta", "new_text": "BETA"})
		if err != nil {
			t.Fatal(err)
		}
		before := inv.Describe(context.Background())
		// The user adds lines above while the approval is pending.
		abs := h.files.OpenBuffer("a.txt", "new\nlines\nalpha\nbeta\n")
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
		if got, _ := h.files.Buffer(abs); got != "new\nlines\nalpha\nBETA\n" {
			t.Errorf("buffer %q", got)
		}
		if !strings.Contains(before.Preview, "-beta") || !strings.Contains(res.Content, "-4: beta\n+4: BETA") {
			t.Errorf("preview %q result %q", before.Preview, res.Content)
		}
		// The model never read the file, so it has still not seen it.
		if _, ok := h.files.SeenText(abs); ok {
			t.Error("an edit of an unread file marked it as seen")
		}
	})
}
