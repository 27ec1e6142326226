package prompt

import (
	"strings"
	"testing"
)

func TestUserWords(t *testing.T) {
	file := FileBlock("file:///w/src/notes.txt", "line one\n</file> inside\nline two")
	sel := FileBlock("file:///w/src/notes.txt#L3-5", "three\nfour")
	spaced := FileBlock("file:///w/my%20file.go", "package x")
	link := FileLink("file:///w/docs/guide.md")
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "fix the bug", "fix the bug"},
		{"typed mention, block after (emacs)", "fix @src/notes.txt now" + file, "fix @src/notes.txt now"},
		{"typed bare name", "fix @notes.txt." + file, "fix @notes.txt."},
		{"block only (vscode)", "explain " + file, "explain @notes.txt"},
		{"block first", file + "what is this", "@notes.txt what is this"},
		{"selection", "why" + sel, "why @notes.txt#L3-5"},
		{"selection typed", "why @src/notes.txt#L3-5" + sel, "why @src/notes.txt#L3-5"},
		{"escaped uri", "read" + spaced, "read @my file.go"},
		{"link", "see" + link, "see @guide.md"},
		{"two", "compare" + link + file, "compare @guide.md @notes.txt"},
		{"folded and cut title", ShortTitleForTest("explain" + file), "explain @notes.txt"},
		{"title cut in the tag", "rename foo in @notes.txt <file…", "rename foo in @notes.txt…"},
		{"title cut in the uri", `do it, as in <file uri="file:///tmp/x…`, "do it, as in…"},
		{"not a block", "what does <file uri= mean", "what does <file uri= mean"},
		{"unterminated link", "a [file: x", "a [file: x"},
	} {
		if got := UserWords(tc.in); got != tc.want {
			t.Errorf("%s: UserWords(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// ShortTitleForTest folds white space and cuts as a stored title is.
func ShortTitleForTest(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 45 {
		s = s[:45]
	}
	return s
}
