package tools_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/cline-ls/cline-ls/tools"
)

// TestEditPlanKeptUntilTheTextChanges: an edit call plans once. Execute
// delivers the very changes Describe (the approval's preview) computed
// while the file holds the same text; when the user typed between the two
// it plans again on what is there now, keeping the typing, and when the
// typing removed what the edit was to change it fails and changes
// nothing. The buffer's version is left alone on purpose: texts, not
// versions, decide.
func TestEditPlanKeptUntilTheTextChanges(t *testing.T) {
	const text = "one\ntwo\n"
	kept := map[string]bool{tools.NameEditor: true, tools.NameReplaceInFile: true}
	for _, c := range editCases(text) {
		t.Run(c.tool, func(t *testing.T) {
			ctx := context.Background()
			for _, step := range []struct {
				name    string
				typed   string // the buffer after the user typed, "" for no typing
				want    string // the buffer after Execute
				wantErr bool
			}{
				{"unchanged", "", "one\nTWO\n", false},
				{"typed elsewhere", "typed by the user\none\ntwo\n", "typed by the user\none\nTWO\n", false},
				{"typed over the match", "one\nto\n", "one\nto\n", true},
			} {
				t.Run(step.name, func(t *testing.T) {
					h := newEditHarness(t)
					abs := h.files.OpenBuffer("a.txt", text)
					h.files.Seen(abs, text)
					inv, err := h.build(c.tool, c.args)
					if err != nil {
						t.Fatal(err)
					}
					d := inv.Describe(ctx)
					if d.Refusal != "" || len(d.Changes) != 1 || d.Changes[0].NewText == nil {
						t.Fatalf("description %+v", d)
					}
					if step.typed != "" {
						h.files.OpenBuffer("a.txt", step.typed)
					}
					res, err := inv.Execute(ctx, tools.ExecOptions{})
					if err != nil {
						t.Fatal(err)
					}
					got, _ := h.files.Buffer(abs)
					if c.tool == tools.NameWriteToFile && step.typed != "" {
						// The model has not seen the typing: refused.
						step.want, step.wantErr = step.typed, true
					}
					if res.IsError != step.wantErr || got != step.want {
						t.Fatalf("result %q (error %v), buffer %q; want buffer %q, error %v", res.Content, res.IsError, got, step.want, step.wantErr)
					}
					if step.wantErr {
						return
					}
					wantOld := text
					if step.typed != "" {
						wantOld = step.typed
					}
					if res.Edits[0].OldText != wantOld {
						t.Errorf("the edit was recorded against %q", res.Edits[0].OldText)
					}
					if c.tool == tools.NameWriteToFile {
						return // its new text is the argument itself, planned again or not
					}
					// The same string, not an equal one: the plan was not
					// made again.
					reused := unsafe.StringData(res.Edits[0].NewText) == unsafe.StringData(*d.Changes[0].NewText)
					if want := kept[c.tool] && step.typed == ""; reused != want {
						t.Errorf("Execute reused the preview's plan: %v, want %v", reused, want)
					}
				})
			}
		})
	}
}
