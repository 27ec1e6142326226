package editdiag

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/workspace"
)

// Quiet is how long after a report of the edited text the
// daemon waits for another before taking the latest: editors report each
// source's diagnostics as it comes (a language server's, then a linter's),
// and the first report may still hold another source's of the old text.
const Quiet = 150 * time.Millisecond

// MaxLines is how many introduced or fixed problems one tool
// result lists, all files together.
const MaxLines = 10

// Edit is one edited open buffer: its URI and path, and the version and
// text the edit was made on and the text it made.
type Edit struct {
	URI, Path   string
	BaseVersion int32
	BaseText    string
	NewText     string
}

// Notes waits, up to settle, for the editor's diagnostics (store) of each
// edited buffer's new text and returns, by path, what the edit introduced
// or fixed, worded for the model with display naming the file. A buffer
// whose diagnostics do not come in time has no entry; ctx's end (the turn
// cancelled) ends the wait at once.
func Notes(ctx context.Context, store *workspace.Diagnostics, edits []Edit, settle time.Duration, display func(string) string) map[string]string {
	wctx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	type outcome struct {
		before, after workspace.DiagnosticReport
		baseline, ok  bool
	}
	got := make([]outcome, len(edits))
	var wg sync.WaitGroup
	for i, e := range edits {
		got[i].before, got[i].baseline = store.At(e.URI, e.BaseVersion)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Only a report for a version after the one the edit was
			// made on can be of the edited text.
			r, err := store.Settled(wctx, e.URI, e.BaseVersion, Quiet)
			got[i].after, got[i].ok = r, err == nil
		}()
	}
	wg.Wait()
	out := make(map[string]string)
	budget := MaxLines
	for i, e := range edits {
		o := got[i]
		if !o.ok {
			continue
		}
		introduced, fixed := compareDiagnostics(o.before.Diagnostics, o.after.Diagnostics, e.BaseText, e.NewText)
		out[e.Path] = diagnosticsNote(display(e.Path), introduced, fixed, o.baseline, &budget)
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
