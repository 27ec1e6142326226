package workspace

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestDiagnosticsKeepsVersionsInOrder(t *testing.T) {
	d := NewDiagnostics()
	const uri = "file:///a.go"
	one := []Diagnostic{{Line: 1, Severity: 1, Message: "m"}}
	if !d.Set(uri, 3, one) {
		t.Fatal("first report refused")
	}
	if d.Set(uri, 2, nil) {
		t.Error("a report for an older version was kept")
	}
	for v := int32(4); v < 4+keptReports; v++ {
		d.Set(uri, v, nil)
	}
	if _, ok := d.At(uri, 3); ok {
		t.Error("more than keptReports reports kept")
	}
	if r, ok := d.At(uri, 100); !ok || r.Version != 3+keptReports {
		t.Errorf("At(100) = %v %v, want the latest", r.Version, ok)
	}
	d.Forget(uri)
	if _, ok := d.At(uri, 100); ok {
		t.Error("a closed document's reports kept")
	}
}

func TestDiagnosticsBoundsAReport(t *testing.T) {
	d := NewDiagnostics()
	many := make([]Diagnostic, MaxDiagnostics+7)
	many[0].Message = strings.Repeat("é", MaxDiagnosticMessage) + "\nline two"
	d.Set("u", 1, many)
	r, _ := d.At("u", 1)
	if len(r.Diagnostics) != MaxDiagnostics || r.Dropped != 7 {
		t.Errorf("kept %d, dropped %d", len(r.Diagnostics), r.Dropped)
	}
	m := r.Diagnostics[0].Message
	if len(m) > MaxDiagnosticMessage+len("…") || strings.Contains(m, "\n") || !strings.HasSuffix(m, "…") {
		t.Errorf("message not cut to one bounded line: %d bytes %q…", len(m), m[:20])
	}
}

func TestDiagnosticsAfterWaitsForANewerVersion(t *testing.T) {
	d := NewDiagnostics()
	d.Set("u", 5, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard only
	defer cancel()
	got := make(chan int32, 1)
	go func() {
		r, err := d.After(ctx, "u", 5)
		if err != nil {
			got <- -1
			return
		}
		got <- r.Version
	}()
	d.Set("u", 5, []Diagnostic{{Message: "same version"}})
	d.Set("u", 6, nil)
	if v := <-got; v != 6 {
		t.Errorf("After(5) gave version %d, want 6", v)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := d.After(cctx, "u", 6); err == nil {
		t.Error("After returned without a newer report")
	}
}

// TestDiagnosticsSettledTakesTheLastOfABurst: reports that follow each
// other (one source, then another) settle on the last one.
func TestDiagnosticsSettledTakesTheLastOfABurst(t *testing.T) {
	d := NewDiagnostics()
	d.Set("u", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard only
	defer cancel()
	// The burst comes before the wait, so no timing decides it: a later
	// report of the same version replaces the first one.
	d.Set("u", 2, []Diagnostic{{Message: "a stale source's"}})
	d.Set("u", 2, []Diagnostic{{Message: "every source's"}})
	r, err := d.Settled(ctx, "u", 1, time.Millisecond)
	if err != nil || len(r.Diagnostics) != 1 || r.Diagnostics[0].Message != "every source's" {
		t.Errorf("Settled = %+v, %v; want the last report", r, err)
	}
	got := make(chan DiagnosticReport, 1)
	go func() {
		r, _ := d.Settled(ctx, "u", 2, time.Hour) // ends with ctx after the first report
		got <- r
	}()
	d.Set("u", 3, []Diagnostic{{Message: "first"}})
	d.Set("u", 4, []Diagnostic{{Message: "last"}})
	// Both reports are in before cancel: whatever Settled saw first, it
	// has seen the last by the time it wakes for ctx.
	cancel()
	if r := <-got; len(r.Diagnostics) != 1 || r.Diagnostics[0].Message != "last" {
		t.Errorf("Settled ended by ctx = %+v, want the latest report", r)
	}
}
