package codeaction

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/workspace"
)

// MaxSelection bounds the selected text a task quotes; the model can
// read the rest of the file itself.
const MaxSelection = 8 << 10

// Diagnostic is a problem the editor shows, in LSP's shape.
type Diagnostic struct {
	Range    workspace.Range `json:"range"`
	Message  string          `json:"message"`
	Source   string          `json:"source"`
	Severity int             `json:"severity"`
}

// Document is the open document a range is in.
type Document struct {
	URI  string
	Path string // "" for a document that is not a file
	Text string
	// Root is the primary workspace folder, which a file's name is given
	// relative to.
	Root string
}

// Action is one task offered: its title, its LSP kind and what the
// agent is asked.
type Action struct {
	Title, Kind, Task string
}

// For returns the tasks offered on rng of doc: on diagnostics, or on a
// bare cursor (a linter's diagnostic the client does not send), "Fix with
// agent"; on a selection, "Explain" and "Refactor selection". enc is the
// encoding rng's characters count in.
func For(doc Document, rng workspace.Range, diags []Diagnostic, enc workspace.Encoding) []Action {
	name := doc.Path
	if name == "" {
		name = doc.URI
	} else if doc.Root != "" {
		if rel, err := filepath.Rel(doc.Root, name); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
	}
	m := workspace.NewMapper(doc.Text)
	from, to := m.Offset(rng.Start, enc), m.Offset(rng.End, enc)
	var selected string
	if from < to && to <= len(doc.Text) {
		selected = doc.Text[from:to]
		if len(selected) > MaxSelection {
			selected = selected[:MaxSelection] + "\n[selection cut]"
		}
	}
	var out []Action
	if len(diags) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Fix these problems in %s:\n", name)
		for _, x := range diags {
			src := ""
			if x.Source != "" {
				src = " (" + x.Source + ")"
			}
			fmt.Fprintf(&b, "- %s: %s%s\n", lines(x.Range), x.Message, src)
		}
		out = append(out, Action{Title: "Fix with agent", Kind: "quickfix", Task: b.String()})
	}
	if selected != "" {
		quote := fmt.Sprintf("%s, %s:\n```\n%s\n```\n", name, lines(rng), selected)
		out = append(out,
			Action{Title: "Explain with agent", Kind: "refactor", Task: "Explain this code from " + quote},
			Action{Title: "Refactor selection with agent", Kind: "refactor", Task: "Refactor this code from " + quote + "Keep its behaviour; make it clearer."})
	}
	if len(diags) == 0 && selected == "" {
		// Editors send only their own language servers' diagnostics
		// (Neovim from 0.10, Eglot), so a linter's problem under the
		// cursor arrives as a bare position: offer the fix on its line.
		line := rng.Start.Line
		start := m.Offset(workspace.Position{Line: line}, enc)
		end := m.Offset(workspace.Position{Line: line + 1}, enc)
		if start <= end && end <= len(doc.Text) {
			text := strings.TrimRight(doc.Text[start:end], "\r\n")
			if len(text) > MaxSelection {
				text = text[:MaxSelection] + "\n[line cut]"
			}
			out = append(out, Action{Title: "Fix with agent", Kind: "quickfix", Task: fmt.Sprintf(
				"The editor shows a problem on line %d of %s (a diagnostic this server is not sent; read the code around it):\n```\n%s\n```\nFind the problem there and fix it.", line+1, name, text)})
		}
	}
	return out
}

func lines(r workspace.Range) string {
	if r.Start.Line == r.End.Line {
		return fmt.Sprintf("line %d", r.Start.Line+1)
	}
	return fmt.Sprintf("lines %d-%d", r.Start.Line+1, r.End.Line+1)
}
