package codeaction

import (
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

func rng(l1, c1, l2, c2 uint32) workspace.Range {
	return workspace.Range{Start: workspace.Position{Line: l1, Character: c1}, End: workspace.Position{Line: l2, Character: c2}}
}

func titles(as []Action) string {
	var t []string
	for _, a := range as {
		t = append(t, a.Kind+":"+a.Title)
	}
	return strings.Join(t, ", ")
}

func TestForDiagnosticsAndSelection(t *testing.T) {
	doc := Document{URI: "file:///ws/main.go", Path: "/ws/main.go", Root: "/ws", Text: "package main\n\nfunc f() int { return x }\n"}
	as := For(doc, rng(2, 0, 2, 26), []Diagnostic{{Range: rng(2, 22, 2, 23), Message: "undefined: x", Source: "compiler"}}, workspace.UTF16)
	if got := titles(as); got != "quickfix:Fix with agent, refactor:Explain with agent, refactor:Refactor selection with agent" {
		t.Fatalf("actions: %s", got)
	}
	if want := "Fix these problems in main.go:\n- line 3: undefined: x (compiler)\n"; as[0].Task != want {
		t.Errorf("fix task %q, want %q", as[0].Task, want)
	}
	if !strings.Contains(as[1].Task, "main.go, line 3:\n```\nfunc f() int { return x }\n```") {
		t.Errorf("explain task %q", as[1].Task)
	}
}

func TestForBareCursorOffersTheLine(t *testing.T) {
	doc := Document{URI: "untitled:1", Text: "a\nbad line\r\nc"}
	as := For(doc, rng(1, 3, 1, 3), nil, workspace.UTF8)
	if len(as) != 1 || as[0].Title != "Fix with agent" || !strings.Contains(as[0].Task, "line 2 of untitled:1") || !strings.Contains(as[0].Task, "```\nbad line\n```") {
		t.Fatalf("actions %+v", as)
	}
}

func TestForCutsLongSelections(t *testing.T) {
	long := strings.Repeat("x", MaxSelection+10)
	doc := Document{URI: "file:///elsewhere/a", Path: "/elsewhere/a", Root: "/ws", Text: long}
	as := For(doc, rng(0, 0, 0, uint32(len(long))), nil, workspace.UTF8)
	if len(as) != 2 || !strings.Contains(as[0].Task, "[selection cut]") || !strings.Contains(as[0].Task, "/elsewhere/a, line 1") {
		t.Fatalf("actions %+v", as)
	}
}
