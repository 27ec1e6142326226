package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// TestWriteToFileTool checks that a whole-file write creates freely but
// replaces only text the model has read, as it is now.
func TestWriteToFileTool(t *testing.T) {
	write := func(h *editHarness, path, content string) tools.Result {
		return h.run(tools.NameWriteToFile, map[string]any{"path": path, "content": content})
	}
	t.Run("creates with parents", func(t *testing.T) {
		h := newEditHarness(t)
		inv, err := h.build(tools.NameWriteToFile, map[string]any{"path": "x/y/z.txt", "content": "z\n"})
		if err != nil {
			t.Fatal(err)
		}
		if d := inv.Describe(context.Background()); d.Title != "Create x/y/z.txt" || d.Preview != "--- /dev/null\n+++ b/x/y/z.txt\n@@ -0,0 +1 @@\n+z\n" {
			t.Errorf("description %+v", d)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || res.IsError || res.Content != "File created successfully at: x/y/z.txt" {
			t.Fatalf("%v %+v", err, res)
		}
		if got, _ := h.disk("x/y/z.txt"); got != "z\n" {
			t.Errorf("file %q", got)
		}
		if len(res.Edits) != 1 || res.Edits[0].Added != 1 || res.Edits[0].Path != "x/y/z.txt" {
			t.Errorf("edits %+v", res.Edits)
		}
		// It wrote the whole text, so it may write it again.
		if res := write(h, "x/y/z.txt", "Z\n"); res.IsError {
			t.Errorf("second write refused: %s", res.Content)
		}
	})
	t.Run("refuses a file never read", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "precious\n")
		inv, err := h.build(tools.NameWriteToFile, map[string]any{"path": "a.txt", "content": "x"})
		if err != nil {
			t.Fatal(err)
		}
		if d := inv.Describe(context.Background()); d.Preview != "" || d.Title != "Write a.txt" {
			t.Errorf("description of a write that will be refused: %+v", d)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || !res.IsError || !strings.Contains(res.Content, "a.txt already exists and you have not read it") {
			t.Errorf("%v %+v", err, res)
		}
		if got, _ := h.disk("a.txt"); got != "precious\n" {
			t.Errorf("file %q", got)
		}
		if h.files.Applied != 0 {
			t.Errorf("Applied = %d", h.files.Applied)
		}
	})
	t.Run("refuses a file changed since it was read", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "v1\n")
		h.files.Seen(h.abs("a.txt"), "v1\n")
		h.write("a.txt", "v1\nthe user's line\n")
		res := write(h, "a.txt", "v2\n")
		if !res.IsError || !strings.Contains(res.Content, "a.txt has changed since you last read it") {
			t.Errorf("%+v", res)
		}
		if got, _ := h.disk("a.txt"); got != "v1\nthe user's line\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("refuses a buffer the user typed in", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "v1\n")
		abs := h.files.OpenBuffer("a.txt", "v1\n")
		h.files.Seen(abs, "v1\n")
		h.files.OpenBuffer("a.txt", "v1\nunsaved typing\n")
		if res := write(h, "a.txt", "v2\n"); !res.IsError {
			t.Errorf("write over unseen typing succeeded: %q", res.Content)
		}
		if got, _ := h.files.Buffer(abs); got != "v1\nunsaved typing\n" {
			t.Errorf("buffer %q", got)
		}
	})
	t.Run("overwrites what was read", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "one\ntwo\n")
		h.files.Seen(h.abs("a.txt"), "one\ntwo\n")
		inv, err := h.build(tools.NameWriteToFile, map[string]any{"path": "a.txt", "content": "one\n2\n"})
		if err != nil {
			t.Fatal(err)
		}
		d := inv.Describe(context.Background())
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
		if res.Content != "Edited a.txt\n```diff\n-2: two\n+2: 2\n```" {
			t.Errorf("result %q", res.Content)
		}
		if want := editUnified("a.txt", "one\ntwo\n", "one\n2\n"); d.Preview != want || d.Title != "Write a.txt" {
			t.Errorf("preview %q, want %q", d.Preview, want)
		}
		if seen, _ := h.files.SeenText(h.abs("a.txt")); seen != "one\n2\n" {
			t.Errorf("SeenText %q", seen)
		}
		if res := write(h, "a.txt", "one\n2\n"); res.IsError || res.Content != "No change: a.txt already held this content." {
			t.Errorf("identical write: %+v", res)
		}
	})
	t.Run("keeps CRLF and BOM", func(t *testing.T) {
		h := newEditHarness(t)
		const old = "\uFEFFa\r\nb\r\n"
		h.write("w.txt", old)
		h.files.Seen(h.abs("w.txt"), old)
		if res := write(h, "w.txt", "a\nB\nc\n"); res.IsError {
			t.Fatal(res.Content)
		}
		if got, _ := h.disk("w.txt"); got != "\uFEFFa\r\nB\r\nc\r\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("LF file takes content as given", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("w.txt", "a\n")
		h.files.Seen(h.abs("w.txt"), "a\n")
		if res := write(h, "w.txt", "x\r\ny\n"); res.IsError {
			t.Fatal(res.Content)
		}
		if got, _ := h.disk("w.txt"); got != "x\r\ny\n" {
			t.Errorf("file %q", got)
		}
	})
	t.Run("after edits", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("read.txt", "a\nb\n")
		h.write("unread.txt", "a\nb\n")
		h.files.Seen(h.abs("read.txt"), "a\nb\n")
		for _, p := range []string{"read.txt", "unread.txt"} {
			if res := h.run(tools.NameEditor, map[string]any{"path": p, "old_text": "b", "new_text": "B"}); res.IsError {
				t.Fatal(res.Content)
			}
		}
		// The model knew read.txt whole and made the edit, so it still
		// knows it; of unread.txt it knows one line.
		if res := write(h, "read.txt", "all new\n"); res.IsError {
			t.Errorf("write after read and edit refused: %s", res.Content)
		}
		if res := write(h, "unread.txt", "all new\n"); !res.IsError {
			t.Errorf("write over a file only edited, never read, succeeded: %s", res.Content)
		}
		if got, _ := h.disk("unread.txt"); got != "a\nB\n" {
			t.Errorf("unread.txt %q", got)
		}
	})
}
