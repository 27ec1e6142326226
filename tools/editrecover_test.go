package tools_test

import (
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// TestEditorLooseMatchNoted: an editor call placed by a tolerance says
// which one in its result, as replace_in_file's and apply_patch's do.
func TestEditorLooseMatchNoted(t *testing.T) {
	h := newEditHarness(t)
	h.write("c.py", "class C:\n    def f(self):\n        return 1\n")
	res := h.run(tools.NameEditor, map[string]any{"path": "c.py", "old_text": "def f(self):\n    return 1", "new_text": "def f(self):\n    return 2"})
	if res.IsError {
		t.Fatalf("refused: %s", res.Content)
	}
	if got, _ := h.disk("c.py"); got != "class C:\n    def f(self):\n        return 2\n" {
		t.Errorf("file %q", got)
	}
	if !strings.Contains(res.Content, "\nNote: old_text matched lines 2-3 only with its indentation shifted to the file's.") {
		t.Errorf("result %q", res.Content)
	}
}

// TestRepeatedFailuresAdviseReread: once three edits of one file have
// failed, the next failure tells the model to read the file again and
// says how many failed; an edit that applies starts the count afresh.
// The count is per file and shared by the edit tools. The calls go the
// scheduler's way: a call whose Describe refuses is not executed, and the
// refusal is its result.
func TestRepeatedFailuresAdviseReread(t *testing.T) {
	h := newEditHarness(t)
	h.write("a.txt", "one\ntwo\n")
	h.write("b.txt", "one\ntwo\n")
	bad := func(tool, path string) tools.Result {
		t.Helper()
		var args map[string]any
		switch tool {
		case tools.NameEditor:
			args = map[string]any{"path": path, "old_text": "three", "new_text": "3"}
		case tools.NameReplaceInFile:
			args = map[string]any{"path": path, "diff": "------- SEARCH\nthree\n=======\n3\n+++++++ REPLACE\n"}
		default:
			args = map[string]any{"input": "*** Begin Patch\n*** Update File: " + path + "\n@@\n-three\n+3\n*** End Patch"}
		}
		res := h.schedule(tool, args)
		if !res.IsError {
			t.Fatalf("%s applied: %s", tool, res.Content)
		}
		return res
	}
	const advice = "Read it again with read_files"
	for i, tool := range []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch} {
		if res := bad(tool, "a.txt"); strings.Contains(res.Content, advice) {
			t.Errorf("failure %d already advises a re-read: %s", i+1, res.Content)
		}
	}
	if res := bad(tools.NameEditor, "b.txt"); strings.Contains(res.Content, advice) {
		t.Errorf("another file's first failure advises a re-read: %s", res.Content)
	}
	res := bad(tools.NameEditor, "a.txt")
	if !strings.Contains(res.Content, "4 edits of a.txt have failed in a row") || !strings.Contains(res.Content, advice) {
		t.Errorf("fourth failure: %s", res.Content)
	}
	if ok := h.schedule(tools.NameEditor, map[string]any{"path": "a.txt", "old_text": "two", "new_text": "2"}); ok.IsError {
		t.Fatalf("edit refused: %s", ok.Content)
	}
	if res := bad(tools.NameEditor, "a.txt"); strings.Contains(res.Content, advice) {
		t.Errorf("the count survived an edit that applied: %s", res.Content)
	}
}

// TestNotFoundSaysWhatChangedSinceRead: when the model's lines are not in
// the file and the file changed since the model read it (the user typed
// in the buffer), the refusal says which lines changed and how they read
// now, and where the model's lines were in what it read.
func TestNotFoundSaysWhatChangedSinceRead(t *testing.T) {
	h := newEditHarness(t)
	read := "def f():\n    a = 1\n    b = 2\n    return a + b\n"
	h.write("f.py", read)
	abs := h.files.OpenBuffer("f.py", read)
	h.files.Seen(abs, read)
	h.files.OpenBuffer("f.py", "def f():\n    a = 1\n    b = 20  # the user's\n    return a + b\n")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{tools.NameEditor, map[string]any{"path": "f.py", "old_text": "    b = 2\n    return a + b", "new_text": "    return a"}},
		{tools.NameReplaceInFile, map[string]any{"path": "f.py", "diff": "------- SEARCH\n    b = 2\n    return a + b\n=======\n    return a\n+++++++ REPLACE\n"}},
		{tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: f.py\n@@\n-    b = 2\n-    return a + b\n+    return a\n*** End Patch"}},
	} {
		res := h.schedule(c.tool, c.args)
		if !res.IsError {
			t.Fatalf("%s applied over the user's typing: %s", c.tool, res.Content)
		}
		for _, want := range []string{"changed since you last read it", "line 3", "3 |     b = 20  # the user's", "lines 3-4 of the text you read"} {
			if !strings.Contains(res.Content, want) {
				t.Errorf("%s: result lacks %q:\n%s", c.tool, want, res.Content)
			}
		}
	}
}

// TestWriteToFilePlaceholderRefused: a whole-file write whose content
// stands for code it leaves out would delete that code.
func TestWriteToFilePlaceholderRefused(t *testing.T) {
	h := newEditHarness(t)
	text := "package p\n\nfunc a() {}\n\nfunc b() {}\n"
	h.write("p.go", text)
	h.files.Seen(h.abs("p.go"), text)
	res := h.run(tools.NameWriteToFile, map[string]any{"path": "p.go", "content": "package p\n\n// ... existing code ...\n\nfunc c() {}\n"})
	if !res.IsError || !strings.Contains(res.Content, "placeholder") {
		t.Errorf("result %q", res.Content)
	}
	if got, _ := h.disk("p.go"); got != text {
		t.Errorf("file changed to %q", got)
	}
	// A new file may hold such a line: nothing is lost.
	if res := h.run(tools.NameWriteToFile, map[string]any{"path": "q.go", "content": "package p\n\n// ...\n"}); res.IsError {
		t.Errorf("new file refused: %s", res.Content)
	}
}

// TestReadRecordAfterEditOnChangedFile: when the model edits a file the
// user changed since its read, what it read is no longer its view of the
// file (its own edit is in neither text), so no rule leans on it until it
// reads again: insert_line stands as given rather than being carried
// through changes that include the model's own.
func TestReadRecordAfterEditOnChangedFile(t *testing.T) {
	h := newEditHarness(t)
	read := "a\nb\nc\nd\n"
	h.write("f.txt", read)
	abs := h.files.OpenBuffer("f.txt", read)
	h.files.Seen(abs, read)
	h.files.OpenBuffer("f.txt", "typed\na\nb\nc\nd\n")
	if res := h.schedule(tools.NameEditor, map[string]any{"path": "f.txt", "old_text": "c", "new_text": "c1\nc2"}); res.IsError {
		t.Fatalf("edit: %s", res.Content)
	}
	// The model, knowing its own edit but not the typing, inserts before
	// d, which it counts as line 5.
	res := h.schedule(tools.NameEditor, map[string]any{"path": "f.txt", "new_text": "NEW", "insert_line": 5})
	got, _ := h.files.Buffer(abs)
	if res.IsError || got != "typed\na\nb\nc1\nNEW\nc2\nd\n" || strings.Contains(res.Content, "as you last read it") {
		t.Errorf("result %q, buffer %q", res.Content, got)
	}
}
