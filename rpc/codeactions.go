package rpc

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// methodCodeAction offers agent tasks on a selection or a diagnostic to
// clients with no plugin (PROTOCOL.md §6).
const methodCodeAction = "textDocument/codeAction"

type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   workspace.Range `json:"range"`
	Context struct {
		Diagnostics []struct {
			Range    workspace.Range `json:"range"`
			Message  string          `json:"message"`
			Source   string          `json:"source"`
			Severity int             `json:"severity"`
		} `json:"diagnostics"`
	} `json:"context"`
}

// codeActionWire is an LSP CodeAction that runs a command.
type codeActionWire struct {
	Title   string      `json:"title"`
	Kind    string      `json:"kind"`
	Command commandWire `json:"command"`
}

type commandWire struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments"`
}

// maxSelection bounds the selected text a code action quotes; the model
// can read the rest of the file itself.
const maxSelection = 8 << 10

// codeActions serves textDocument/codeAction: on diagnostics, or on a
// bare cursor (a linter's diagnostic the client does not send), "Fix with
// agent"; on a selection, "Explain" and "Refactor selection"; each runs
// cline.prompt with the file, the lines, the selected text and the
// diagnostics' messages, so a stock client starts a turn with that
// context and nothing to type.
func (s *Server) codeActions(raw []byte) (any, error) {
	var p codeActionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("textDocument.uri", p.TextDocument.URI); err != nil {
		return nil, err
	}
	snap, ok := s.buffers.Get(p.TextDocument.URI)
	if !ok {
		return []codeActionWire{}, nil // only open documents: the context is their text
	}
	name := snap.Path
	if name == "" {
		name = snap.URI
	} else if f := s.folders.Paths(); len(f) > 0 {
		if rel, err := filepath.Rel(f[0], name); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
	}
	m := workspace.NewMapper(snap.Text)
	enc := s.Encoding()
	lines := func(r workspace.Range) string {
		if r.Start.Line == r.End.Line {
			return fmt.Sprintf("line %d", r.Start.Line+1)
		}
		return fmt.Sprintf("lines %d-%d", r.Start.Line+1, r.End.Line+1)
	}
	from, to := m.Offset(p.Range.Start, enc), m.Offset(p.Range.End, enc)
	var selected string
	if from < to && to <= len(snap.Text) {
		selected = snap.Text[from:to]
		if len(selected) > maxSelection {
			selected = selected[:maxSelection] + "\n[selection cut]"
		}
	}
	action := func(title, task string) codeActionWire {
		return codeActionWire{Title: title, Kind: "quickfix", Command: commandWire{
			Title: title, Command: commandPrompt, Arguments: []any{wire.CommandArgs{Text: task}},
		}}
	}
	var out []codeActionWire
	if d := p.Context.Diagnostics; len(d) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Fix these problems in %s:\n", name)
		for _, x := range d {
			src := ""
			if x.Source != "" {
				src = " (" + x.Source + ")"
			}
			fmt.Fprintf(&b, "- %s: %s%s\n", lines(x.Range), x.Message, src)
		}
		out = append(out, action("Fix with agent", b.String()))
	}
	if selected != "" {
		quote := fmt.Sprintf("%s, %s:\n```\n%s\n```\n", name, lines(p.Range), selected)
		exp := action("Explain with agent", "Explain this code from "+quote)
		exp.Kind = "refactor"
		ref := action("Refactor selection with agent", "Refactor this code from "+quote+"Keep its behaviour; make it clearer.")
		ref.Kind = "refactor"
		out = append(out, exp, ref)
	}
	if len(p.Context.Diagnostics) == 0 && selected == "" {
		// Editors send only their own language servers' diagnostics
		// (Neovim from 0.10, Eglot), so a linter's problem under the
		// cursor arrives as a bare position: offer the fix on its line.
		line := p.Range.Start.Line
		start := m.Offset(workspace.Position{Line: line}, enc)
		end := m.Offset(workspace.Position{Line: line + 1}, enc)
		if start <= end && end <= len(snap.Text) {
			text := strings.TrimRight(snap.Text[start:end], "\r\n")
			if len(text) > maxSelection {
				text = text[:maxSelection] + "\n[line cut]"
			}
			out = append(out, action("Fix with agent", fmt.Sprintf(
				"The editor shows a problem on line %d of %s (a diagnostic this server is not sent; read the code around it):\n```\n%s\n```\nFind the problem there and fix it.", line+1, name, text)))
		}
	}
	if out == nil {
		out = []codeActionWire{}
	}
	return out, nil
}
