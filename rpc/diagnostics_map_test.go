package rpc

import (
	"testing"

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
