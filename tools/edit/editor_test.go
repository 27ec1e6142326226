package edit

import (
	"errors"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	tests := []struct {
		name, text, old, new, want string
		reason                     Reason
	}{
		{name: "single line keeps CRLF of the file", text: "a\r\nb\r\n", old: "b", new: "x\ny", want: "a\r\nx\r\ny\r\n"},
		{name: "CRLF old text in LF file", text: "a\nb\nc\n", old: "a\r\nb", new: "B", want: "B\nc\n"},
		{name: "mixed file, CRLF region", text: "a\r\nb\r\nc\nd\n", old: "a\nb", new: "1\n2", want: "1\r\n2\r\nc\nd\n"},
		{name: "mixed file, LF region", text: "a\r\nb\r\nc\nd\n", old: "c\nd", new: "3\n4", want: "a\r\nb\r\n3\n4\n"},
		{name: "mixed file, same text under both endings", text: "a\r\nb\na\nb", old: "a\nb", new: "x", reason: ReasonMultipleMatches},
		{name: "overlapping occurrences are ambiguous", text: "---", old: "--", new: "b", reason: ReasonMultipleMatches},
		{name: "BOM stays", text: bom + "first\nsecond", old: "first", new: "1st", want: bom + "1st\nsecond"},
		{name: "replacement may be empty", text: "a\nb\nc", old: "b\n", new: "", want: "a\nc"},
		{name: "no fuzzy match", text: "a\n  b\n", old: "a\nb", new: "x", reason: ReasonNotFound},
		{name: "empty old text", text: "a", old: "", new: "x", reason: ReasonOldTextRequired},
		{name: "regexp characters are literal", text: "f(x) = [a-z]+", old: "[a-z]+", new: "$1", want: "f(x) = $1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Replace(tc.text, tc.old, tc.new)
			checkEditorResult(t, got, err, tc.want, tc.reason)
		})
	}
}

func TestInsert(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
		new, want  string
		reason     Reason
	}{
		{name: "append to file with final newline", text: "a\nb\n", line: 3, new: "c", want: "a\nb\nc\n"},
		{name: "append to file without final newline keeps it without", text: "a\nb", line: 3, new: "c", want: "a\nb\nc"},
		{name: "trailing newline of new text ends its line", text: "a\nb\n", line: 2, new: "x\n", want: "a\nx\nb\n"},
		{name: "empty new text inserts an empty line", text: "a\nb\n", line: 2, new: "", want: "a\n\nb\n"},
		{name: "empty file", text: "", line: 1, new: "x", want: "x\n"},
		{name: "empty file, line 2 invalid", text: "", line: 2, new: "x", reason: ReasonInvalidInsertLine},
		{name: "line 1 goes after the BOM", text: bom + "a\n", line: 1, new: "x", want: bom + "x\na\n"},
		{name: "mixed endings with lone CR", text: "a\rb\r\nc\n", line: 3, new: "x", want: "a\rb\r\nx\nc\n"},
		{name: "CRLF file, second line", text: "a\r\nb\r\n", line: 2, new: "x\ny", want: "a\r\nx\r\ny\r\nb\r\n"},
		{name: "past the end", text: "a\nb\n", line: 4, new: "x", reason: ReasonInvalidInsertLine},
		{name: "negative", text: "a\n", line: -1, new: "x", reason: ReasonInvalidInsertLine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Insert(tc.text, tc.line, tc.new)
			checkEditorResult(t, got, err, tc.want, tc.reason)
		})
	}
}

func checkEditorResult(t *testing.T, got string, err error, want string, reason Reason) {
	t.Helper()
	if reason != 0 {
		var e *EditorError
		if !errors.As(err, &e) || e.Reason != reason {
			t.Fatalf("got %q, %v; want error reason %d", got, err, reason)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

func TestInsertLineRangeMessage(t *testing.T) {
	_, err := Insert("a\nb\nc\n", 9, "x")
	want := "Invalid insert_line: 9. insert_line must be a positive one-based boundary line in the range 1-4. Use 4 to append at EOF."
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestEditFile(t *testing.T) {
	one, two := 1, 2
	tests := []struct {
		name    string
		current string
		exists  bool
		req     EditorRequest
		action  EditorAction
		want    string
		reason  Reason
		message string
	}{
		{name: "create keeps text exactly", req: EditorRequest{NewText: "x\r\ny"}, action: ActionCreated, want: "x\r\ny"},
		{name: "create with insert_line 1", req: EditorRequest{NewText: "x", InsertLine: &one}, action: ActionCreated, want: "x"},
		{name: "create with insert_line 2", req: EditorRequest{NewText: "x", InsertLine: &two}, reason: ReasonInvalidInsertLine},
		{name: "old_text on missing file is refused", req: EditorRequest{OldText: "a", NewText: "x"}, reason: ReasonFileNotFound,
			message: "p/f.txt does not exist"},
		{name: "existing file needs old_text", current: "a", exists: true, req: EditorRequest{NewText: "x"}, reason: ReasonOldTextRequired,
			message: "p/f.txt already exists"},
		{name: "old_text and insert_line conflict", current: "a", exists: true, req: EditorRequest{OldText: "a", NewText: "x", InsertLine: &one},
			reason: ReasonConflictingArgs},
		{name: "insert", current: "a\n", exists: true, req: EditorRequest{NewText: "x", InsertLine: &one}, action: ActionInserted, want: "x\na\n"},
		{name: "replace", current: "a\n", exists: true, req: EditorRequest{OldText: "a", NewText: "b"}, action: ActionReplaced, want: "b\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := EditFile("p/f.txt", tc.current, tc.exists, tc.req)
			if tc.reason != 0 {
				var e *EditorError
				if !errors.As(err, &e) || e.Reason != tc.reason {
					t.Fatalf("got %+v, %v; want reason %d", res, err, tc.reason)
				}
				if !strings.Contains(err.Error(), "p/f.txt") && tc.reason != ReasonInvalidInsertLine {
					t.Errorf("error does not name the file: %v", err)
				}
				if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
					t.Errorf("error %q does not contain %q", err, tc.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != tc.action || res.Text != tc.want {
				t.Errorf("got %d %q, want %d %q", res.Action, res.Text, tc.action, tc.want)
			}
		})
	}
}

func TestEditorErrorWithoutPath(t *testing.T) {
	_, err := Replace("a", "z", "y")
	if err == nil || err.Error() != "No replacement performed: text not found in the file." {
		t.Errorf("got %v", err)
	}
}
