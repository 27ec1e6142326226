package tools_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
	"github.com/cline-ls/cline-ls/tools"
)

// TestApplyPatchToolCodexScenarios runs all 25 Codex scenarios of
// codex_scenarios.json through the apply_patch tool over a temporary
// folder and compares the whole resulting tree.
func TestApplyPatchToolCodexScenarios(t *testing.T) {
	for _, c := range shared.CodexScenarios(t) {
		t.Run(c.Name, func(t *testing.T) { editRunScenario(t, c) })
	}
}

// TestApplyPatchToolCodexScenarioDirs runs the scenario folders (input/,
// patch.txt, expected/) the same way, bytes as stored.
func TestApplyPatchToolCodexScenarioDirs(t *testing.T) {
	for _, c := range shared.CodexScenarioDirs(t) {
		t.Run(c.Name, func(t *testing.T) { editRunScenario(t, c) })
	}
}

func editRunScenario(t *testing.T, c shared.PatchCase) {
	t.Helper()
	mention := c.MustMention
	h := newEditHarness(t)
	for p, text := range c.Input {
		h.write(p, text)
	}
	res := h.run(tools.NameApplyPatch, map[string]any{"input": c.Patch})
	got := h.tree()
	if strings.Contains(res.Content, h.root) {
		t.Errorf("result shows the workspace's absolute path: %s", res.Content)
	}
	if c.ExpectError {
		if !res.IsError {
			t.Errorf("patch succeeded with %q, want an error", res.Content)
		}
		if !strings.Contains(res.Content, "No files were changed.") {
			t.Errorf("error does not say nothing changed: %s", res.Content)
		}
		if mention != "" && !strings.Contains(res.Content, mention) {
			t.Errorf("error does not name %s: %s", mention, res.Content)
		}
		if len(res.Edits) != 0 {
			t.Errorf("failed patch lists edits: %+v", res.Edits)
		}
		if !maps.Equal(got, c.Input) {
			t.Errorf("a failed patch changed the tree:\n got %q\nwant %q", got, c.Input)
		}
	} else {
		if res.IsError {
			t.Fatalf("unexpected error: %s", res.Content)
		}
		if !strings.HasPrefix(res.Content, "Success. Updated the following files:\n") || len(res.Edits) == 0 {
			t.Errorf("result %q, edits %d", res.Content, len(res.Edits))
		}
		for _, e := range res.Edits {
			if !strings.Contains(res.Content, " "+e.Path+"\n") && !strings.HasSuffix(res.Content, " "+e.Path) {
				t.Errorf("result does not list %s: %q", e.Path, res.Content)
			}
		}
	}
	if !maps.Equal(got, c.Expected) {
		t.Errorf("tree\n got %q\nwant %q", got, c.Expected)
	}
}

// TestApplyPatchTool covers the description of multi-file patches, moves
// that keep the file mode, open buffers, one file under two spellings and
// a refusal part-way through the files.
func TestApplyPatchTool(t *testing.T) {
	describe := func(t *testing.T, h *editHarness, patch string) tools.Description {
		t.Helper()
		inv, err := h.build(tools.NameApplyPatch, map[string]any{"input": patch})
		if err != nil {
			t.Fatal(err)
		}
		return inv.Describe(context.Background())
	}
	t.Run("multi-file preview", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("mod.txt", "a\nb\nc\n")
		h.write("del.txt", "gone\n")
		d := describe(t, h, "*** Begin Patch\n*** Add File: dir/new.txt\n+fresh\n*** Delete File: del.txt\n*** Update File: mod.txt\n@@\n a\n-b\n+B\n*** End Patch")
		want := "--- /dev/null\n+++ b/dir/new.txt\n@@ -0,0 +1 @@\n+fresh\n" +
			"--- a/del.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n" +
			"--- a/mod.txt\n+++ b/mod.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
		if d.Preview != want {
			t.Errorf("preview\n%s\nwant\n%s", d.Preview, want)
		}
		if d.Kind != tools.KindEdit || d.Title != "Apply patch to dir/new.txt, del.txt, mod.txt" {
			t.Errorf("kind %s title %q", d.Kind, d.Title)
		}
		wantLocs := []tools.Location{{Path: "dir/new.txt", Line: 1}, {Path: "del.txt"}, {Path: "mod.txt", Line: 2}}
		if len(d.Locations) != 3 || d.Locations[0] != wantLocs[0] || d.Locations[1] != wantLocs[1] || d.Locations[2] != wantLocs[2] {
			t.Errorf("locations %+v, want %+v", d.Locations, wantLocs)
		}
		if got := h.tree(); len(got) != 2 {
			t.Errorf("Describe changed files: %v", got)
		}
	})
	t.Run("delete and move kinds", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "a\n")
		if d := describe(t, h, "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch"); d.Kind != tools.KindDelete {
			t.Errorf("delete kind %s", d.Kind)
		}
		d := describe(t, h, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/a.txt\n@@\n a\n*** End Patch")
		if d.Kind != tools.KindMove || d.Preview != "--- a/a.txt\n+++ b/b/a.txt\n" || len(d.Locations) != 1 || d.Locations[0].Path != "b/a.txt" {
			t.Errorf("move description %+v", d)
		}
	})
	t.Run("move keeps the file mode", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("run.sh", "echo a\n")
		if err := os.Chmod(h.abs("run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := h.run(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo a\n+echo b\n*** End Patch"})
		if res.IsError {
			t.Fatal(res.Content)
		}
		if !strings.Contains(res.Content, "M run.sh -> bin/run.sh\n") || !strings.Contains(res.Content, "Edited bin/run.sh\n```diff\n-1: echo a\n+1: echo b\n```") {
			t.Errorf("result %q", res.Content)
		}
		fi, err := os.Stat(h.abs("bin/run.sh"))
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("moved file: %v, mode %v", err, fi)
		}
		if got := h.tree(); len(got) != 1 || got["bin/run.sh"] != "echo b\n" {
			t.Errorf("tree %q", got)
		}
	})
	t.Run("open buffer", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "saved\n")
		abs := h.files.OpenBuffer("a.txt", "one\ntwo\n")
		res := h.run(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"})
		if res.IsError {
			t.Fatal(res.Content)
		}
		if got, _ := h.files.Buffer(abs); got != "one\nTWO\n" {
			t.Errorf("buffer %q", got)
		}
		if got, _ := h.disk("a.txt"); got != "saved\n" {
			t.Errorf("disk %q", got)
		}
	})
	t.Run("one file, two spellings", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "1\n2\n3\n")
		res := h.run(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+one\n*** Update File: " +
			h.abs("a.txt") + "\n@@\n-3\n+three\n*** End Patch"})
		if res.IsError {
			t.Fatal(res.Content)
		}
		if got, _ := h.disk("a.txt"); got != "one\n2\nthree\n" {
			t.Errorf("file %q", got)
		}
		if len(res.Edits) != 1 || res.Edits[0].Path != "a.txt" {
			t.Errorf("edits %+v", res.Edits)
		}
	})
	t.Run("refusal of one file changes none", func(t *testing.T) {
		h := newEditHarness(t)
		h.write("a.txt", "a\n")
		h.write("b.txt", "b\n")
		h.files.Reject = func(p string) error {
			if filepath.Base(p) == "b.txt" {
				return errors.New("buffer is read-only")
			}
			return nil
		}
		res := h.run(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch"})
		if !res.IsError || !strings.Contains(res.Content, "b.txt was not applied: buffer is read-only. No files were changed.") {
			t.Errorf("result %q", res.Content)
		}
		if got := h.tree(); got["a.txt"] != "a\n" || got["b.txt"] != "b\n" {
			t.Errorf("tree %q", got)
		}
	})
	t.Run("parse error", func(t *testing.T) {
		h := newEditHarness(t)
		inv, err := h.build(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n"})
		if err != nil {
			t.Fatal(err)
		}
		if d := inv.Describe(context.Background()); d.Title != "Apply patch" || d.Preview != "" {
			t.Errorf("description %+v", d)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil || !res.IsError || !strings.Contains(res.Content, "*** End Patch") {
			t.Errorf("result %+v %v", res, err)
		}
		if len(h.tree()) != 0 {
			t.Errorf("files written: %v", h.tree())
		}
	})
}

// TestApplyPatchPathsThatAreURIs: apply_patch's paths go through the one
// resolver: a file: URI names its file, in Add, Update and Move alike;
// any other URI is refused and the patch changes nothing; a file whose
// name reads as a scheme is reached by "./".
func TestApplyPatchPathsThatAreURIs(t *testing.T) {
	h := newEditHarness(t)
	h.write("a.txt", "a\n")
	h.write("notes:v2.txt", "n\n")
	u := func(rel string) string { return "file://" + h.root + "/" + rel }
	res := h.run(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: " + u("new/b%20c.txt") +
		"\n+fresh\n*** Update File: " + u("a.txt") + "\n*** Move to: " + u("moved/a.txt") + "\n@@\n-a\n+A\n" +
		"*** Update File: ./notes:v2.txt\n@@\n-n\n+N\n*** End Patch"})
	if res.IsError {
		t.Fatalf("patch through file URIs: %s", res.Content)
	}
	want := map[string]string{"new/b c.txt": "fresh\n", "moved/a.txt": "A\n", "notes:v2.txt": "N\n"}
	if got := h.tree(); !maps.Equal(got, want) {
		t.Errorf("tree after the patch: %v, want %v", got, want)
	}
	for _, p := range []string{"untitled:Untitled-1", "vscode-remote://h" + h.root + "/x.txt", "http://example.com/x", "notes:v2.txt", "file:///C:/x.txt"} {
		inv, err := h.build(tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n*** Add File: " + p + "\n+y\n*** End Patch"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content, "URI") && !strings.Contains(res.Content, "Windows") {
			t.Errorf("patch adding %q: %v %q, want the URI refused", p, res.IsError, res.Content)
		}
		if got := h.tree(); !maps.Equal(got, want) {
			t.Errorf("patch adding %q changed the tree: %v", p, got)
		}
	}
}
