package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// catchUp is how long an edit waits for the editor's buffer to reach the
// expected text, or to move on after a refusal. Stock clients send
// didChange late (Neovim debounces 150 ms, eglot waits for 0.5 s of idle).
const catchUp = 2 * time.Second

// bufferEdit is one change to an open buffer and the text it was computed
// on.
type bufferEdit struct {
	change tools.Change
	base   tools.FileText
}

// applyEditParams is workspace/applyEdit's params with versioned document
// changes (the daemon only sends edits to documents it mirrors).
type applyEditParams struct {
	Label string            `json:"label,omitempty"`
	Edit  workspaceEditWire `json:"edit"`
}

type workspaceEditWire struct {
	DocumentChanges []textDocumentEditWire `json:"documentChanges,omitempty"`
	Changes         map[string][]diff.Edit `json:"changes,omitempty"`
}

type textDocumentEditWire struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	Edits []diff.Edit `json:"edits"`
}

type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// editBuffers sends one workspace/applyEdit for all edits and waits until
// the mirror shows them. It returns a *staleError when the editor's buffer
// had moved on (the caller re-plans), a *tools.DeliveryError when the
// editor refused, and nil once every buffer holds its new text.
func (s *Server) editBuffers(ctx context.Context, edits []bufferEdit) error {
	enc := s.Encoding()
	var p applyEditParams
	p.Label = "cline-ls"
	uris := make([]string, len(edits))
	for i, e := range edits {
		snap, ok := s.buffers.GetPath(e.change.Path)
		if !ok {
			return &tools.DeliveryError{Path: e.change.Path, Reason: "the editor closed the file"}
		}
		uris[i] = snap.URI
		if snap.Version != e.base.Version {
			return &staleError{&tools.DeliveryError{Path: e.change.Path, Reason: "the buffer changed while the edit was prepared"}}
		}
		var d textDocumentEditWire
		d.TextDocument.URI, d.TextDocument.Version = snap.URI, snap.Version
		d.Edits = diff.TextEdits(e.base.Text, *e.change.NewText, enc)
		p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, d)
	}
	s.mu.Lock()
	versioned := s.caps.docChanges
	canEdit := s.caps.applyEdit
	s.mu.Unlock()
	if !canEdit {
		return &tools.DeliveryError{Path: edits[0].change.Path, Reason: "the editor does not support workspace/applyEdit, so its open buffer cannot be edited"}
	}
	if !versioned {
		// Clients without documentChanges take unversioned edits; the
		// mirror check below still catches a buffer that moved on.
		p.Edit.Changes = make(map[string][]diff.Edit)
		for _, d := range p.Edit.DocumentChanges {
			p.Edit.Changes[d.TextDocument.URI] = d.Edits
		}
		p.Edit.DocumentChanges = nil
	}

	var res applyEditResult
	err := s.call(ctx, methodApplyEdit, p, &res)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || !res.Applied {
		reason := res.FailureReason
		if err != nil {
			reason = err.Error()
		}
		if reason == "" {
			reason = "the editor declined the edit"
		}
		// A refusal because the buffer moved on shows up as a newer
		// version in the mirror, now or shortly (didChange comes late).
		if s.buffersMoved(ctx, edits, uris) {
			return &staleError{&tools.DeliveryError{Path: edits[0].change.Path, Reason: reason}}
		}
		return &tools.DeliveryError{Path: edits[0].change.Path, Reason: reason}
	}
	// applied: true. A client that checks versions itself is believed;
	// for the others trust the mirror, not the answer: Neovim answers true
	// and silently skips an edit for a stale version.
	s.mu.Lock()
	believe := s.caps.checksVersions && versioned
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, catchUp)
	defer cancel()
	for i, e := range edits {
		want := *e.change.NewText
		_, err := s.buffers.Wait(wctx, uris[i], func(snap workspace.Snapshot) bool {
			return snap.Version != e.base.Version && editIntact(e.base.Text, want, snap.Text)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if believe {
				// Its didChange is late; the next read or edit sees the
				// mirror catch up or, if stale, is re-planned.
				continue
			}
			snap, ok := s.buffers.Get(uris[i])
			if ok && snap.Version != e.base.Version {
				return &staleError{&tools.DeliveryError{Path: e.change.Path, Reason: "the editor skipped the edit because the buffer had changed"}}
			}
			if ok && versioned {
				// Applied to the very version it was made for, and no
				// change of the buffer reported since: the didChange is
				// late (Eglot 1.9 sends it once Emacs is idle again). An
				// editor that skips an edit does so because its buffer had
				// moved on, which the mirror would show; so the edit is
				// believed, and the change checked when it comes.
				s.checkLateChange(uris[i], e.change.Path, e.base, want)
				continue
			}
			return &tools.DeliveryError{Path: e.change.Path, Reason: "the editor said the edit was applied but its buffer never showed it"}
		}
	}
	return nil
}

// lateChange bounds how long a believed edit's didChange is waited for.
const lateChange = 2 * time.Minute

// checkLateChange waits, off the caller's path, for the buffer at uri to
// move past base and tells the user when what it then holds is not the
// edit the editor said it applied (want), or when no change comes: the
// model was told the edit landed, so a buffer that says otherwise must
// not pass in silence.
func (s *Server) checkLateChange(uri, path string, base tools.FileText, want string) {
	le := &lateEdit{version: base.Version, text: want}
	s.lateEdits.Store(uri, le)
	s.ws.Go(func() {
		defer s.lateEdits.CompareAndDelete(uri, le)
		ctx, cancel := context.WithTimeout(s.bgCtx, lateChange)
		defer cancel()
		snap, err := s.buffers.Wait(ctx, uri, func(snap workspace.Snapshot) bool { return snap.Version != base.Version })
		switch {
		case s.bgCtx.Err() != nil:
		case errors.Is(err, workspace.ErrNotOpen):
		case err != nil:
			s.log.Warn("an applied edit was never reported", "path", path)
			s.showMessage(wire.MessageWarning, fmt.Sprintf("cline-ls: the editor said it applied the agent's edit of %s, but never reported the change; check the buffer", path))
		case !editIntact(base.Text, want, snap.Text):
			s.log.Warn("an applied edit's buffer differs", "path", path)
			s.showMessage(wire.MessageWarning, fmt.Sprintf("cline-ls: the editor said it applied the agent's edit of %s, but the buffer it reported does not hold it; check the buffer", path))
		}
	})
}

// lateEdit is the text a buffer holds, by its editor's word, while the
// mirror still shows version.
type lateEdit struct {
	version int32
	text    string
}

// bufferText is what an open buffer holds for a read: the mirror's text,
// or, while an applied edit's didChange is late, the text the editor
// said the edit made (at the mirror's version, so an edit planned on it
// is refused and planned again once the change comes).
func (s *Server) bufferText(snap workspace.Snapshot) string {
	if v, ok := s.lateEdits.Load(snap.URI); ok {
		if le := v.(*lateEdit); le.version == snap.Version {
			return le.text
		}
	}
	return snap.Text
}

// buffersMoved waits (up to catchUp) for any of the buffers to move past
// the version the edit was computed for.
func (s *Server) buffersMoved(ctx context.Context, edits []bufferEdit, uris []string) bool {
	wctx, cancel := context.WithTimeout(ctx, catchUp)
	defer cancel()
	moved := make(chan struct{}, len(edits))
	var wg sync.WaitGroup
	for i, e := range edits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.buffers.Wait(wctx, uris[i], func(snap workspace.Snapshot) bool { return snap.Version != e.base.Version })
			if err == nil {
				moved <- struct{}{}
				cancel()
			}
		}()
	}
	wg.Wait()
	return len(moved) > 0
}

// editIntact reports whether got, the buffer after the edit, holds the
// edit that turned base into want: either exactly want, or want with other
// changes (the user typing) only on lines the edit did not write.
func editIntact(base, want, got string) bool {
	if got == want {
		return true
	}
	if got == base {
		return false
	}
	type span struct{ from, to int } // lines of want, [from, to)
	var ours []span
	for _, h := range diff.Lines(base, want) {
		from := h.NewLine - 1
		to := from + len(h.Added)
		if to == from { // a pure deletion: guard the lines around it
			from, to = max(from-1, 0), from+1
		}
		ours = append(ours, span{from, to})
	}
	for _, h := range diff.Lines(want, got) {
		from := h.OldLine - 1
		to := from + len(h.Removed)
		if to == from {
			to = from + 1
		}
		for _, o := range ours {
			if from < o.to && o.from < to {
				return false
			}
		}
	}
	return true
}
