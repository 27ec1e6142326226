package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolPathsThatAreURIs: a file: URI given as a tool path names the
// file it says, in every tool, and any other URI is refused by name;
// neither becomes a folder named after its scheme in the workspace
// (apply_patch, not offered to the editor, is tested in tools).
// Before, the session's folder was joined to every path that was not
// absolute, so "file:///ws/x" was the relative path "file:/ws/x".
func TestToolPathsThatAreURIs(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "alpha\n", "notes/a:b.txt": "colon\n"}, nil, nil)
	root, _ = filepath.EvalSymlinks(root)
	uri := func(rel string) string { return "file://" + root + "/" + rel }

	ok := []struct {
		tool string
		args map[string]any
		want string // in the result
	}{
		{"read_files", map[string]any{"files": []any{map[string]any{"path": uri("a.txt")}}}, "alpha"},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "file://localhost" + root + "/a.txt"}}}, "alpha"},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "file:" + root + "/a.txt"}}}, "alpha"},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "notes/a:b.txt"}}}, "colon"},
		{"write_to_file", map[string]any{"path": uri("new/w%20x.txt"), "content": "written\n"}, ""},
		{"editor", map[string]any{"path": uri("a.txt"), "old_text": "alpha", "new_text": "beta"}, ""},
		{"replace_in_file", map[string]any{"path": uri("a.txt"), "diff": "------- SEARCH\nbeta\n=======\ngamma\n+++++++ REPLACE\n"}, ""},
		{"list_files", map[string]any{"path": uri("new")}, "w x.txt"},
		{"search_codebase", map[string]any{"queries": []string{"gamma"}, "path": uri("")}, "a.txt"},
		{"list_code_definition_names", map[string]any{"path": uri("new")}, ""},
	}
	for _, tc := range ok {
		r := callTool(t, ctx, ed, tc.tool, tc.args)
		if r.IsError || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s %v: %v %q, want a result holding %q", tc.tool, tc.args, r.IsError, r.Content, tc.want)
		}
	}
	if got := readFile(t, filepath.Join(root, "new/w x.txt")); got != "written\n" {
		t.Errorf("write through a file URI: %q", got)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "gamma\n" {
		t.Errorf("edits through a file URI: %q", got)
	}

	refused := []struct {
		tool string
		args map[string]any
		want string // in the error
	}{
		{"write_to_file", map[string]any{"path": "file:///some/dir/x", "content": "x"}, "outside the workspace"},
		{"write_to_file", map[string]any{"path": "file://other.example" + root + "/x", "content": "x"}, "another host"},
		{"write_to_file", map[string]any{"path": "file:///C:/x", "content": "x"}, "Windows drive"},
		{"write_to_file", map[string]any{"path": "untitled:Untitled-1", "content": "x"}, "untitled: URI"},
		{"write_to_file", map[string]any{"path": "vscode-remote://ssh-remote+h" + root + "/x", "content": "x"}, "vscode-remote: URI"},
		{"write_to_file", map[string]any{"path": "http://example.com/x", "content": "x"}, "http: URI"},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "untitled:Untitled-1"}}}, "untitled: URI"},
		{"editor", map[string]any{"path": "file:///some/dir/x", "old_text": "a", "new_text": "b"}, "outside the workspace"},
		{"replace_in_file", map[string]any{"path": "https://example.com/a.txt", "diff": "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n"}, "https: URI"},
		{"list_files", map[string]any{"path": "file:///some/dir"}, "outside the workspace"},
		{"search_codebase", map[string]any{"queries": []string{"x"}, "path": "vscode-remote://h/x"}, "vscode-remote: URI"},
		{"list_code_definition_names", map[string]any{"path": "untitled:/x"}, "untitled: URI"},
	}
	for _, tc := range refused {
		r := callTool(t, ctx, ed, tc.tool, tc.args)
		if !r.IsError || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s %v: %v %q, want a refusal saying %q", tc.tool, tc.args, r.IsError, r.Content, tc.want)
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ":") {
			t.Errorf("the workspace gained %q, a folder named after a URI scheme", e.Name())
		}
	}
}
