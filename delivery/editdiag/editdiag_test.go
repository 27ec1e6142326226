package editdiag

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestDiagnosticLinesMapThroughTheEdit: a line above the change keeps its
// number, one below moves by the change's line delta, and a changed line
// may be any of the lines that replaced it.
func TestDiagnosticLinesMapThroughTheEdit(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	for _, tc := range []struct {
		name     string
		newText  string
		line     uint32
		from, to uint32
	}{
		{"above an insertion", "a\nX\nY\nb\nc\nd\ne\n", 0, 0, 0},
		{"at an insertion's place", "a\nX\nY\nb\nc\nd\ne\n", 1, 3, 3},
		{"below an insertion", "a\nX\nY\nb\nc\nd\ne\n", 4, 6, 6},
		{"below a deletion", "a\nd\ne\n", 3, 1, 1},
		{"a deleted line", "a\nd\ne\n", 2, 0, 1},
		{"a replaced line", "a\nb\nC1\nC2\nd\ne\n", 2, 2, 3},
		{"below a replacement", "a\nb\nC1\nC2\nd\ne\n", 4, 5, 5},
		{"an insertion at the top", "X\na\nb\nc\nd\ne\n", 0, 1, 1},
	} {
		from, to := mapLine(diff.Lines(base, tc.newText), tc.line)
		if from != tc.from || to != tc.to {
			t.Errorf("%s: line %d maps to [%d, %d], want [%d, %d]", tc.name, tc.line, from, to, tc.from, tc.to)
		}
	}
}

// TestCompareDiagnosticsSameProblemTwice: two equal diagnostics are two
// problems; fixing one of them is reported once.
func TestCompareDiagnosticsSameProblemTwice(t *testing.T) {
	d := func(line uint32) workspace.Diagnostic {
		return workspace.Diagnostic{Line: line, Severity: 1, Source: "c", Message: "undefined: x"}
	}
	base := "x\nok\nx\n"
	newText := "x\nok\ny\n"
	introduced, fixed := compareDiagnostics([]workspace.Diagnostic{d(0), d(2)}, []workspace.Diagnostic{d(0)}, base, newText)
	if len(introduced) != 0 || len(fixed) != 1 || fixed[0].line != 2 {
		t.Errorf("introduced %v, fixed %v; want none and the one at line 2", introduced, fixed)
	}
}

// TestNotesWaitForTheEditedText: the note compares the report of the text
// the edit was made on with the first settled one after it; a buffer
// whose report does not come in time has no note.
func TestNotesWaitForTheEditedText(t *testing.T) {
	store := workspace.NewDiagnostics()
	const uri, late = "file:///a.go", "file:///b.go"
	old := workspace.Diagnostic{Line: 0, Severity: 1, Source: "go", Message: "undefined: x"}
	store.Set(uri, 1, []workspace.Diagnostic{old})
	store.Set(late, 1, nil)
	go func() {
		time.Sleep(10 * time.Millisecond)
		store.Set(uri, 2, []workspace.Diagnostic{{Line: 1, Severity: 2, Source: "vet", Code: "unused", Message: "y unused"}})
	}()
	edits := []Edit{
		{URI: uri, Path: "/w/a.go", BaseVersion: 1, BaseText: "x\n", NewText: "z\ny\n"},
		{URI: late, Path: "/w/b.go", BaseVersion: 1, BaseText: "", NewText: "q\n"},
	}
	notes := Notes(context.Background(), store, edits, time.Second, func(p string) string { return filepath.Base(p) })
	got, ok := notes["/w/a.go"]
	if !ok || !strings.Contains(got, "a.go") || !strings.Contains(got, "new warning at line 2 (vet unused): y unused") || !strings.Contains(got, "fixed error at line 1 (go): undefined: x") {
		t.Errorf("note for a.go = %q", got)
	}
	if n, ok := notes["/w/b.go"]; ok {
		t.Errorf("a note for b.go, whose report never came: %q", n)
	}
}

// TestNoteBudget: one result lists at most MaxLines problems, the rest
// counted.
func TestNoteBudget(t *testing.T) {
	var many []placedDiagnostic
	for i := range MaxLines + 3 {
		many = append(many, placedDiagnostic{workspace.Diagnostic{Severity: 1, Message: "e"}, uint32(i)})
	}
	budget := MaxLines
	note := diagnosticsNote("a.go", many, nil, false, &budget)
	if strings.Count(note, "\n- error") != MaxLines || !strings.HasSuffix(note, "and 3 more") || strings.Contains(note, "new ") {
		t.Errorf("note = %q", note)
	}
	if note := diagnosticsNote("a.go", nil, nil, true, &budget); !strings.Contains(note, "no new or fixed problems") {
		t.Errorf("empty note = %q", note)
	}
}
