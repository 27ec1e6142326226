package rpc

import (
	"context"
	"encoding/json"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/delivery/editdiag"
	"github.com/cline-ls/cline-ls/workspace"
)

// The editor's diagnostics (PROTOCOL.md §10): a client that declares
// experimental.cline.diagnostics sends, for each open document, every
// source's diagnostics as cline/diagnostics; after an edit of an open
// buffer the daemon waits, bounded, for those of the edited text and the
// tool result says what the edit introduced or fixed.

// diagnosticsParams are cline/diagnostics' params.
type diagnosticsParams struct {
	URI         string          `json:"uri"`
	Version     *int32          `json:"version"`
	Diagnostics []lspDiagnostic `json:"diagnostics"`
}

// lspDiagnostic is LSP's Diagnostic with what the daemon reads.
type lspDiagnostic struct {
	Range    *lspRange       `json:"range"`
	Severity int             `json:"severity"`
	Code     json.RawMessage `json:"code"` // integer or string
	Source   string          `json:"source"`
	Message  string          `json:"message"`
}

// didDiagnostics keeps a client's report of a document's diagnostics. A
// report for a document the editor has not opened is dropped: the daemon
// only compares diagnostics of buffers it mirrors, and keeps no others.
func (t *textSync) didDiagnostics(raw []byte) error {
	var p diagnosticsParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := required("uri", p.URI); err != nil {
		return err
	}
	if p.Version == nil {
		return invalidParams("version: required")
	}
	if p.Diagnostics == nil {
		return invalidParams("diagnostics: required (an empty list when there are none)")
	}
	// Only what is kept is checked and converted: past the bound the
	// rest is counted, not read.
	n := min(len(p.Diagnostics), workspace.MaxDiagnostics)
	diags := make([]workspace.Diagnostic, n, len(p.Diagnostics))
	for i, d := range p.Diagnostics[:n] {
		if d.Range == nil {
			return invalidParams("diagnostics[%d].range: required", i)
		}
		if err := checkPosition(fieldf("diagnostics[%d].range.start", i), d.Range.Start); err != nil {
			return err
		}
		if d.Severity < 0 || d.Severity > 4 {
			return invalidParams("diagnostics[%d].severity: must be 1 (error) to 4 (hint), got %d", i, d.Severity)
		}
		diags[i] = workspace.Diagnostic{
			Line: uint32(*d.Range.Start.Line), Character: uint32(*d.Range.Start.Character),
			Severity: d.Severity, Source: d.Source, Code: diagnosticCode(d.Code), Message: d.Message,
		}
	}
	diags = diags[:len(p.Diagnostics)] // the rest zero: Set counts them as dropped
	if _, open := t.buffers.Get(p.URI); !open {
		t.log.Debug("diagnostics for a document not open; dropped", "uri", p.URI)
		return nil
	}
	if !t.diags.Set(p.URI, *p.Version, diags) {
		t.log.Debug("stale diagnostics dropped", "uri", p.URI, "version", *p.Version)
	}
	return nil
}

// diagnosticCode is a diagnostic's code as text: LSP sends an integer or
// a string.
func diagnosticCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// editDiagnostics waits, up to diagnostics.settleMs, for the editor's
// diagnostics of each edited buffer's new text and returns, by path, what
// the edit introduced or fixed (package editdiag). A buffer whose
// diagnostics do not come in time has no entry, nor has any when the
// client sends none or the wait is off; ctx's end (the turn cancelled)
// ends the wait at once.
func (t *textSync) editDiagnostics(ctx context.Context, edits []delivery.BufferEdit, display func(string) string) map[string]string {
	settle := t.settle()
	if settle <= 0 || len(edits) == 0 {
		return nil
	}
	var open []editdiag.Edit
	for _, e := range edits {
		snap, ok := t.buffers.GetPath(e.Change.Path)
		if !ok {
			continue
		}
		open = append(open, editdiag.Edit{URI: snap.URI, Path: e.Change.Path, BaseVersion: e.Base.Version, BaseText: e.Base.Text, NewText: *e.Change.NewText})
	}
	return editdiag.Notes(ctx, t.diags, open, settle, display)
}
