package rpc

import (
	"context"
	"log/slog"

	"github.com/cline-ls/cline-ls/workspace"
)

// Text synchronisation. These notifications run inline on the read loop,
// in wire order, and every change goes through workspace.Buffers, which
// refuses a version that goes backwards.

func (s *Server) didOpen(raw []byte) error {
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
	path = realPath(path)
	s.buffers.Open(d.URI, path, d.LanguageID, d.Version, *d.Text)
	return nil
}

func (s *Server) didChange(raw []byte) error {
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
	if err := s.buffers.Change(p.TextDocument.URI, *p.TextDocument.Version, s.Encoding(), changes); err != nil {
		return err
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		snap, _ := s.buffers.Get(p.TextDocument.URI)
		s.log.Debug("mirrored", "uri", snap.URI, "version", snap.Version, "bytes", len(snap.Text), "changes", len(changes))
	}
	return nil
}

func (s *Server) didClose(raw []byte) error {
	var p docParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := required("textDocument.uri", p.TextDocument.URI); err != nil {
		return err
	}
	s.diags.Forget(p.TextDocument.URI)
	return s.buffers.Close(p.TextDocument.URI)
}

// didSave needs no mirror change: the buffer already holds the saved text.
// It is validated so a malformed one is reported like any other.
func (s *Server) didSave(raw []byte) error {
	var p docParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	return required("textDocument.uri", p.TextDocument.URI)
}

func (s *Server) didChangeFolders(raw []byte) error {
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
	s.folders.Remove(removed...)
	s.folders.Add(s.ws.Admit(added)...)
	s.foldersChanged()
	return nil
}
