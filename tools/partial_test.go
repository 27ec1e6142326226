package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// Narrow turns an edit of one file into the write of what the user kept
// of it, for every edit tool, and refuses what is not an edit of one
// existing file, saying why.
func TestNarrow(t *testing.T) {
	ctx := context.Background()
	const before = "one\ntwo\nthree\n"
	const kept = "ONE\ntwo\nthree\n"
	edits := []struct {
		tool string
		args any
	}{
		{"editor", map[string]any{"path": "a.txt", "old_text": "one\ntwo\nthree", "new_text": "ONE\ntwo\nTHREE"}},
		{"replace_in_file", map[string]any{"path": "a.txt", "diff": "------- SEARCH\nthree\n=======\nTHREE\n+++++++ REPLACE\n"}},
		{"write_to_file", map[string]any{"path": "a.txt", "content": "ONE\nTWO\nTHREE\n"}},
		{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n two\n-three\n+THREE\n*** End Patch\n"}},
	}
	for _, e := range edits {
		t.Run(e.tool, func(t *testing.T) {
			h := newEditHarness(t)
			h.write("a.txt", before)
			h.files.Seen(h.abs("a.txt"), before) // write_to_file replaces only what was read
			inv, err := h.build(e.tool, e.args)
			if err != nil {
				t.Fatal(err)
			}
			part, err := tools.Narrow(ctx, inv, kept)
			if err != nil {
				t.Fatalf("Narrow: %v", err)
			}
			if d := part.Describe(ctx); !strings.Contains(d.Preview, "-one\n+ONE") || strings.Contains(d.Preview, "THREE") {
				t.Errorf("the preview is not of the part kept:\n%s", d.Preview)
			}
			res, err := part.Execute(ctx, tools.ExecOptions{})
			if err != nil || res.IsError {
				t.Fatalf("Execute: %v %+v", err, res)
			}
			if got, _ := h.disk("a.txt"); got != kept {
				t.Errorf("a.txt = %q, want %q", got, kept)
			}
			if !strings.Contains(res.Content, "applied part of this edit") || !strings.Contains(res.Content, "-one\n+ONE\n") {
				t.Errorf("the model is not told which part landed: %s", res.Content)
			}
			if len(res.Edits) != 1 || res.Edits[0].Added != 1 || res.Edits[0].Removed != 1 {
				t.Errorf("the edit reported is not the part kept: %+v", res.Edits)
			}
		})
	}

	refused := []struct {
		name, tool string
		args       any
		want       string
	}{
		{"two files", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: b.txt\n+new\n*** End Patch\n"}, "changes 2 files"},
		{"a new file", "write_to_file", map[string]any{"path": "new.txt", "content": "x\n"}, "existing file"},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			h := newEditHarness(t)
			h.write("a.txt", before)
			inv, err := h.build(r.tool, r.args)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tools.Narrow(ctx, inv, kept); err == nil || !strings.Contains(err.Error(), r.want) {
				t.Errorf("Narrow = %v, want an error saying %q", err, r.want)
			}
			if got, _ := h.disk("a.txt"); got != before {
				t.Errorf("a.txt changed: %q", got)
			}
		})
	}
	if _, err := tools.Narrow(ctx, notEdit{}, kept); err == nil || !strings.Contains(err.Error(), "only an edit") {
		t.Errorf("Narrow of a call that edits nothing = %v, want an error saying so", err)
	}
}

// notEdit is a call of a tool that edits no file.
type notEdit struct{}

func (notEdit) Describe(context.Context) tools.Description { return tools.Description{Title: "Run x"} }
func (notEdit) Execute(context.Context, tools.ExecOptions) (tools.Result, error) {
	return tools.Result{}, nil
}
