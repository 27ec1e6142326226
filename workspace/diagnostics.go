package workspace

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Diagnostic is one problem the editor reported for a document, cut to
// what the daemon shows the model.
type Diagnostic struct {
	Line      uint32 // 0-based, as on the wire
	Character uint32
	Severity  int // LSP's: 1 error, 2 warning, 3 information, 4 hint; 0 unknown
	Source    string
	Code      string
	Message   string
}

// DiagnosticReport is the diagnostics of one version of a document.
type DiagnosticReport struct {
	Version     int32
	Diagnostics []Diagnostic
	// Dropped counts the diagnostics past MaxDiagnostics left out.
	Dropped int
}

// The bounds of what a client's report may make the daemon keep: a
// client can send any number of diagnostics, of any length.
const (
	MaxDiagnostics       = 200  // per report
	MaxDiagnosticMessage = 500  // bytes of a message (and of a source or code)
	keptReports          = 8    // per document: enough to find an edit's baseline after a few newer ones
	maxDiagnosedDocs     = 4096 // documents with diagnostics at once
)

// Diagnostics holds, per document, the latest reports of the editor's
// diagnostics by version, and wakes those waiting for a newer one.
type Diagnostics struct {
	mu   sync.Mutex
	docs map[string]*diagDoc
}

type diagDoc struct {
	reports []DiagnosticReport // oldest first, versions increasing
	changed chan struct{}      // closed and replaced on each report
}

// NewDiagnostics returns an empty store.
func NewDiagnostics() *Diagnostics {
	return &Diagnostics{docs: make(map[string]*diagDoc)}
}

// Set records the diagnostics of uri's version, bounded (MaxDiagnostics,
// MaxDiagnosticMessage). A report for a version older than the latest
// kept is stale and dropped (false); one for the same version replaces
// it, as the editor's later word on that text.
func (d *Diagnostics) Set(uri string, version int32, diags []Diagnostic) bool {
	r := DiagnosticReport{Version: version}
	n := min(len(diags), MaxDiagnostics)
	r.Diagnostics = make([]Diagnostic, n)
	for i, g := range diags[:n] {
		g.Message = cutField(g.Message)
		g.Source = cutField(g.Source)
		g.Code = cutField(g.Code)
		r.Diagnostics[i] = g
	}
	r.Dropped = len(diags) - n

	d.mu.Lock()
	defer d.mu.Unlock()
	doc := d.docs[uri]
	if doc == nil {
		if len(d.docs) >= maxDiagnosedDocs {
			return false
		}
		doc = &diagDoc{changed: make(chan struct{})}
		d.docs[uri] = doc
	}
	if k := len(doc.reports); k > 0 {
		last := doc.reports[k-1].Version
		switch {
		case version < last:
			return false
		case version == last:
			doc.reports[k-1] = r
		default:
			if k == keptReports {
				doc.reports = append(doc.reports[:0], doc.reports[1:]...)
			}
			doc.reports = append(doc.reports, r)
		}
	} else {
		doc.reports = append(doc.reports, r)
	}
	close(doc.changed)
	doc.changed = make(chan struct{})
	return true
}

// At returns the latest report for uri whose version is at most version:
// what the editor said of that text, or of the closest earlier one.
func (d *Diagnostics) At(uri string, version int32) (DiagnosticReport, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc := d.docs[uri]
	if doc == nil {
		return DiagnosticReport{}, false
	}
	for i := len(doc.reports) - 1; i >= 0; i-- {
		if doc.reports[i].Version <= version {
			return doc.reports[i], true
		}
	}
	return DiagnosticReport{}, false
}

// After waits until a report for a version newer than version is kept
// for uri and returns the latest, or returns ctx's error.
func (d *Diagnostics) After(ctx context.Context, uri string, version int32) (DiagnosticReport, error) {
	for {
		d.mu.Lock()
		doc := d.docs[uri]
		if doc == nil {
			// The first report makes the document: wait for it as for any.
			if len(d.docs) >= maxDiagnosedDocs {
				d.mu.Unlock()
				<-ctx.Done()
				return DiagnosticReport{}, ctx.Err()
			}
			doc = &diagDoc{changed: make(chan struct{})}
			d.docs[uri] = doc
		}
		if k := len(doc.reports); k > 0 && doc.reports[k-1].Version > version {
			r := doc.reports[k-1]
			d.mu.Unlock()
			return r, nil
		}
		changed := doc.changed
		d.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return DiagnosticReport{}, ctx.Err()
		}
	}
}

// Settled waits as After does, then for as long as reports keep coming
// less than quiet apart (the editor's sources report one after another,
// each report holding every source's diagnostics at that moment), and
// returns the latest. When ctx ends after the first report, that latest is
// returned all the same; before it, ctx's error.
func (d *Diagnostics) Settled(ctx context.Context, uri string, version int32, quiet time.Duration) (DiagnosticReport, error) {
	r, err := d.After(ctx, uri, version)
	if err != nil {
		return r, err
	}
	// latest takes the newest report and the signal of the next one.
	latest := func() <-chan struct{} {
		d.mu.Lock()
		defer d.mu.Unlock()
		doc := d.docs[uri]
		if doc == nil { // closed meanwhile: nothing newer will come
			return nil
		}
		if k := len(doc.reports); k > 0 && doc.reports[k-1].Version > version {
			r = doc.reports[k-1]
		}
		return doc.changed
	}
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		changed := latest()
		if changed == nil {
			return r, nil
		}
		select {
		case <-changed:
			timer.Reset(quiet)
		case <-timer.C:
			latest()
			return r, nil
		case <-ctx.Done():
			latest()
			return r, nil
		}
	}
}

// Forget drops uri's reports (the document was closed).
func (d *Diagnostics) Forget(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc := d.docs[uri]; doc != nil {
		close(doc.changed)
		delete(d.docs, uri)
	}
}

// cutField bounds one text of a diagnostic and makes it one line: the
// model sees each diagnostic as a line of the tool result.
func cutField(s string) string {
	if len(s) > MaxDiagnosticMessage {
		i := MaxDiagnosticMessage
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
