package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/diff"
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
func (s *Server) didDiagnostics(raw []byte) error {
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
	if _, open := s.buffers.Get(p.URI); !open {
		s.log.Debug("diagnostics for a document not open; dropped", "uri", p.URI)
		return nil
	}
	if !s.diags.Set(p.URI, *p.Version, diags) {
		s.log.Debug("stale diagnostics dropped", "uri", p.URI, "version", *p.Version)
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

// diagnosticsQuiet is how long after a report of the edited text the
// daemon waits for another before taking the latest: editors report each
// source's diagnostics as it comes (a language server's, then a linter's),
// and the first report may still hold another source's of the old text.
const diagnosticsQuiet = 150 * time.Millisecond

// maxDiagnosticLines is how many introduced or fixed problems one tool
// result lists, all files together.
const maxDiagnosticLines = 10

// editDiagnostics waits, up to diagnostics.settleMs, for the editor's
// diagnostics of each edited buffer's new text and returns, by path, what
// the edit introduced or fixed. A buffer whose diagnostics do not come in
// time has no entry, nor has any when the client sends none or the wait
// is off; ctx's end (the turn cancelled) ends the wait at once.
func (s *Server) editDiagnostics(ctx context.Context, edits []bufferEdit, display func(string) string) map[string]string {
	s.mu.Lock()
	declared := s.caps.clineDiags
	s.mu.Unlock()
	settle := s.CurrentSettings().DiagnosticsSettle()
	if !declared || settle <= 0 || len(edits) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	type outcome struct {
		before, after workspace.DiagnosticReport
		baseline, ok  bool
	}
	got := make([]outcome, len(edits))
	var wg sync.WaitGroup
	for i, e := range edits {
		snap, open := s.buffers.GetPath(e.change.Path)
		if !open {
			continue
		}
		got[i].before, got[i].baseline = s.diags.At(snap.URI, e.base.Version)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Only a report for a version after the one the edit was
			// made on can be of the edited text.
			r, err := s.diags.Settled(wctx, snap.URI, e.base.Version, diagnosticsQuiet)
			got[i].after, got[i].ok = r, err == nil
		}()
	}
	wg.Wait()
	out := make(map[string]string)
	budget := maxDiagnosticLines
	for i, e := range edits {
		o := got[i]
		if !o.ok {
			continue
		}
		introduced, fixed := compareDiagnostics(o.before.Diagnostics, o.after.Diagnostics, e.base.Text, *e.change.NewText)
		out[e.change.Path] = diagnosticsNote(display(e.change.Path), introduced, fixed, o.baseline, &budget)
	}
	return out
}

// placedDiagnostic is a diagnostic with the 0-based line of the edited
// text it is shown at.
type placedDiagnostic struct {
	workspace.Diagnostic
	line uint32
}

// compareDiagnostics returns the diagnostics of after (the edited text)
// that before (the text the edit was made on) had not, and those of
// before that after has no more. A diagnostic of before is mapped
// through the edit: below the changed lines it moves by their line
// delta, and on a changed line it may reappear anywhere in the lines
// that replaced it. Two are the same problem when severity, source, code
// and message agree and the positions match.
func compareDiagnostics(before, after []workspace.Diagnostic, baseText, newText string) (introduced, fixed []placedDiagnostic) {
	hunks := diff.Lines(baseText, newText)
	type mapped struct {
		from, to uint32 // the lines of the edited text it may be on, [from, to]
		used     bool
	}
	maps := make([]mapped, len(before))
	for i, b := range before {
		from, to := mapLine(hunks, b.Line)
		maps[i] = mapped{from: from, to: to}
	}
	for _, a := range after {
		found := false
		for i, b := range before {
			m := &maps[i]
			if m.used || !sameProblem(a, b) || a.Line < m.from || a.Line > m.to {
				continue
			}
			m.used, found = true, true
			break
		}
		if !found {
			introduced = append(introduced, placedDiagnostic{a, a.Line})
		}
	}
	for i, b := range before {
		if !maps[i].used {
			fixed = append(fixed, placedDiagnostic{b, maps[i].from})
		}
	}
	order := func(x, y placedDiagnostic) int {
		if c := severityRank(x.Severity) - severityRank(y.Severity); c != 0 {
			return c
		}
		return int(x.line) - int(y.line)
	}
	slices.SortStableFunc(introduced, order)
	slices.SortStableFunc(fixed, order)
	return introduced, fixed
}

// mapLine maps a 0-based line of the text before an edit (hunks) to the
// lines of the edited text it may be on: one line when the edit left it
// alone, the lines that replaced it when the edit changed it.
func mapLine(hunks []diff.Hunk, line uint32) (from, to uint32) {
	l := int64(line)
	var delta int64
	for _, h := range hunks {
		start := int64(h.OldLine - 1)
		end := start + int64(len(h.Removed))
		if l < start { // a pure insertion's lines go before its OldLine
			break
		}
		if l < end {
			nStart := int64(h.NewLine - 1)
			nEnd := nStart + int64(len(h.Added)) - 1
			if nEnd < nStart { // the line was deleted: the lines around the gap
				nEnd = nStart
				nStart = max(nStart-1, 0)
			}
			return uint32(nStart), uint32(nEnd)
		}
		delta += int64(len(h.Added)) - int64(len(h.Removed))
	}
	l = max(l+delta, 0)
	return uint32(l), uint32(l)
}

func sameProblem(a, b workspace.Diagnostic) bool {
	return a.Severity == b.Severity && a.Source == b.Source && a.Code == b.Code && a.Message == b.Message
}

// severityRank orders errors first; an unknown severity goes last.
func severityRank(sev int) int {
	if sev == 0 {
		return 5
	}
	return sev
}

func severityName(sev int) string {
	switch sev {
	case 1:
		return "error"
	case 2:
		return "warning"
	case 3:
		return "info"
	case 4:
		return "hint"
	}
	return "problem"
}

// diagnosticsNote words the comparison for the model, at most *budget
// problems (taken from it). Without a baseline (no report for the text
// before the edit) the problems now reported cannot be told from older
// ones, and are listed as what the editor reports, not as new.
func diagnosticsNote(display string, introduced, fixed []placedDiagnostic, baseline bool, budget *int) string {
	if len(introduced) == 0 && len(fixed) == 0 {
		return "The editor's diagnostics of " + display + " show no new or fixed problems after the edit."
	}
	var b strings.Builder
	b.WriteString("The editor's diagnostics of " + display + " after the edit")
	newWord := "new "
	if !baseline {
		b.WriteString(" (none known from before it to compare with)")
		newWord = ""
	}
	b.WriteString(":")
	left := 0
	line := func(kind string, d placedDiagnostic) {
		if *budget <= 0 {
			left++
			return
		}
		*budget--
		fmt.Fprintf(&b, "\n- %s%s at line %d", kind, severityName(d.Severity), d.line+1)
		if d.Source != "" || d.Code != "" {
			b.WriteString(" (")
			b.WriteString(strings.TrimSpace(d.Source + " " + d.Code))
			b.WriteString(")")
		}
		b.WriteString(": ")
		b.WriteString(d.Message)
	}
	for _, d := range introduced {
		line(newWord, d)
	}
	for _, d := range fixed {
		line("fixed ", d)
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n- and %d more", left)
	}
	return b.String()
}
