package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafeFileName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"approval-call_1.diff", "approval-call_1.diff"},
		{"../../etc/passwd", "_.._etc_passwd"},
		{"..hidden", "hidden"},
		{"a b/c\\d\x00é", "a_b_c_d___"},
		{"", "_"},
		{"...", "_"},
		{strings.Repeat("x", 150) + ".md", strings.Repeat("x", 97) + ".md"},
	} {
		if got := SafeFileName(c.in); got != c.want {
			t.Errorf("SafeFileName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWriteShownFile: the file lands in its folder of the state directory
// under a safe name, read-only, and a second write of the name replaces it.
func TestWriteShownFile(t *testing.T) {
	state := t.TempDir()
	path, err := WriteShownFile(state, "diffs", "../approval 1.diff", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "diffs", "_approval_1.diff"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o400 {
		t.Errorf("mode = %v, want read-only", fi.Mode().Perm())
	}
	if _, err := WriteShownFile(state, "diffs", "../approval 1.diff", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "two" {
		t.Errorf("after a second write: %q, %v", data, err)
	}
}
