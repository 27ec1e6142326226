package rpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/cline-ls/cline-ls/workspace"
	"go.lsp.dev/jsonrpc2"
)

// Text synchronisation. These notifications run inline on the read loop,
// in wire order, and every change goes through workspace.Buffers, which
// refuses a version that goes backwards.

// textSync is the part that serves them, cline/diagnostics and the
// workspace folders' changes: the mirror and the diagnostics of the open
// buffers, and the folders, with what it needs of the rest of the server.
type textSync struct {
	buffers *workspace.Buffers
	diags   *workspace.Diagnostics
	folders *workspace.Folders
	ws      *workspace.Live
	enc     func() workspace.Encoding
	// foldersChanged brings a change of the folders to the parts
	// derived from them (Server.foldersChanged).
	foldersChanged func()
	// settle is how long an edit waits for the editor's diagnostics of
	// the edited text: 0 when the client sends none or the settings
	// turn the wait off.
	settle func() time.Duration
	log    *slog.Logger
}

// newTextSync gives the part what it uses of s: the buffers, diagnostics
// and folders it shares, and functions for the rest.
func newTextSync(s *Server) textSync {
	return textSync{buffers: s.buffers, diags: s.diags, folders: s.folders, ws: s.ws, enc: s.Encoding, foldersChanged: s.foldersChanged,
		settle: func() time.Duration {
			s.mu.Lock()
			declared := s.caps.clineDiags
			s.mu.Unlock()
			if !declared {
				return 0
			}
			return s.CurrentSettings().DiagnosticsSettle()
		}, log: s.log}
}

// syncNotice routes a notification to the server's textSync part.
func syncNotice(f func(*textSync, []byte) error) handler {
	return func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) {
		return nil, f(&s.text, req.Params())
	}
}

func (t *textSync) didOpen(raw []byte) error {
	var p didOpenParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	d := p.TextDocument
	if err := required("textDocument.uri", d.URI); err != nil {
		return err
	}
	if d.Text == nil {
		return invalidParams("textDocument.text: required")
	}
	path, _ := workspace.URIToPath(d.URI) // non-file URIs are mirrored, not resolved
	path = workspace.RealPath(path)
	t.buffers.Open(d.URI, path, d.LanguageID, d.Version, *d.Text)
	return nil
}

func (t *textSync) didChange(raw []byte) error {
	var p didChangeParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := required("textDocument.uri", p.TextDocument.URI); err != nil {
		return err
	}
	if p.TextDocument.Version == nil {
		return invalidParams("textDocument.version: required")
	}
	if p.ContentChanges == nil {
		return invalidParams("contentChanges: required")
	}
	changes := make([]workspace.Change, len(p.ContentChanges))
	for i, c := range p.ContentChanges {
		if c.Text == nil {
			return invalidParams("contentChanges[%d].text: required", i)
		}
		changes[i].Text = *c.Text
		if c.Range == nil {
			continue
		}
		if err := checkPosition(fieldf("contentChanges[%d].range.start", i), c.Range.Start); err != nil {
			return err
		}
		if err := checkPosition(fieldf("contentChanges[%d].range.end", i), c.Range.End); err != nil {
			return err
		}
		changes[i].Range = &workspace.Range{
			Start: workspace.Position{Line: uint32(*c.Range.Start.Line), Character: uint32(*c.Range.Start.Character)},
			End:   workspace.Position{Line: uint32(*c.Range.End.Line), Character: uint32(*c.Range.End.Character)},
		}
	}
	if err := t.buffers.Change(p.TextDocument.URI, *p.TextDocument.Version, t.enc(), changes); err != nil {
		return err
	}
	if t.log.Enabled(context.Background(), slog.LevelDebug) {
		snap, _ := t.buffers.Get(p.TextDocument.URI)
		t.log.Debug("mirrored", "uri", snap.URI, "version", snap.Version, "bytes", len(snap.Text), "changes", len(changes))
	}
	return nil
}

func (t *textSync) didClose(raw []byte) error {
	var p docParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := required("textDocument.uri", p.TextDocument.URI); err != nil {
		return err
	}
	t.diags.Forget(p.TextDocument.URI)
	return t.buffers.Close(p.TextDocument.URI)
}

// didSave needs no mirror change: the buffer already holds the saved text.
// It is validated so a malformed one is reported like any other.
func (t *textSync) didSave(raw []byte) error {
	var p docParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	return required("textDocument.uri", p.TextDocument.URI)
}

func (t *textSync) didChangeFolders(raw []byte) error {
	var p didChangeFoldersParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	var removed []string
	for i, f := range p.Event.Removed {
		wf, err := workspace.NewFolder(f.URI, f.Name)
		if err != nil {
			return invalidParams("event.removed[%d].uri: %v", i, err)
		}
		removed = append(removed, wf.Path)
	}
	var added []workspace.Folder
	for i, f := range p.Event.Added {
		wf, err := workspace.NewFolder(f.URI, f.Name)
		if err != nil {
			return invalidParams("event.added[%d].uri: %v", i, err)
		}
		added = append(added, wf)
	}
	t.folders.Remove(removed...)
	t.folders.Add(t.ws.Admit(added)...)
	t.foldersChanged()
	return nil
}
