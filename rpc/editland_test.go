package rpc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// TestEditsLandThroughTheDaemon drives the loose-match rules of
// docs/DESIGN.md §3 through cline/callTool against an open buffer: the
// session's record of what the model read (read_files) reaches the edit
// tools, so a look-alike elsewhere is refused while the user's typing
// stands; a block sent with the wrong indentation lands re-indented
// through workspace/applyEdit; the fourth failed edit in a row says to
// read the file again.
func TestEditsLandThroughTheDaemon(t *testing.T) {
	ctx := testCtx(t)
	text := "class A:\n    def run(self):\n        return 1\n\n    def name(self):\n        return \"a\"\n\n\ndef run(self):\n    return 1\n"
	ed, root := editWorkspace(t, map[string]string{"a.py": text}, nil, nil)
	uri := workspace.PathToURI(filepath.Join(root, "a.py"))
	ed.Open(ctx, uri, text)
	ed.Sync(ctx)
	if r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []map[string]any{{"path": "a.py"}}}); r.IsError {
		t.Fatalf("read_files: %+v", r)
	}
	// The user changes the method the model is about to edit.
	ed.Edit(ctx, uri, rng(2, 15, 2, 16), "10  # typed")
	ed.Sync(ctx)
	typed := strings.Replace(text, "        return 1", "        return 10  # typed", 1)
	r := callTool(t, ctx, ed, "replace_in_file", map[string]any{"path": "a.py",
		"diff": "------- SEARCH\n    def run(self):\n        return 1\n=======\n    def run(self):\n        return 2\n+++++++ REPLACE\n"})
	if !r.IsError || !strings.Contains(r.Content, "another place") || !strings.Contains(r.Content, "3 |         return 10  # typed") {
		t.Errorf("look-alike: %+v", r)
	}
	assertBuffer(t, ctx, ed, uri, typed)

	// A block sent without its indentation lands at the file's.
	r = callTool(t, ctx, ed, "editor", map[string]any{"path": "a.py",
		"old_text": "def name(self):\n    return \"a\"", "new_text": "def name(self):\n    return \"A\".lower()"})
	if r.IsError || !strings.Contains(r.Content, "Note: old_text matched lines 5-6 only with its indentation shifted") {
		t.Fatalf("shifted block: %+v", r)
	}
	assertBuffer(t, ctx, ed, uri, strings.Replace(typed, "        return \"a\"", "        return \"A\".lower()", 1))

	// The fourth failed edit of the file in a row says to read it again.
	for i := 1; i <= 4; i++ {
		r = callTool(t, ctx, ed, "editor", map[string]any{"path": "a.py", "old_text": "def missing():", "new_text": "x"})
		if advice := strings.Contains(r.Content, "4 edits of a.py have failed in a row"); !r.IsError || advice != (i == 4) {
			t.Errorf("failure %d: %+v", i, r)
		}
	}
}
