package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestCheckpointTakesOverPrime: a checkpoint asked for while the
// start-up scan (Prime) runs does not wait for it: it stops Prime and
// reads only the files Prime had not read, plus those changed since
// Prime read them. Busy pauses Prime: here a tool call starts after
// Prime read some files, and Prime reads no more.
func TestCheckpointTakesOverPrime(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("dir%02d/f%03d.txt", i%20, i)] = fmt.Sprintf("file %d\n", i)
	}
	w := newWS(t, files)
	w.opts.PrimeShare = 1 // Busy is what stops it here, not the budget
	w.s.Close()
	w.open()

	const stopAt = 60 // pace calls: folders and files together
	calls := 0
	paused := make(chan struct{})
	var done func()
	w.s.testPace = func() {
		if calls++; calls == stopAt {
			done = w.s.Busy()
			close(paused)
		}
	}
	var primeRead, ckRead int
	var primeSc *scanner
	w.s.testScanned = func(prime bool, sc *scanner) {
		if prime {
			primeRead, primeSc = sc.read, sc
		} else {
			ckRead = sc.read
		}
	}
	primed := make(chan error, 1)
	go func() { primed <- w.s.Prime(context.Background(), nil) }()
	guard := time.After(60 * time.Second) // a failure guard, not a timing assertion
	select {
	case <-paused:
	case err := <-primed:
		t.Fatalf("Prime ended (%v) before the tool call started", err)
	case <-guard:
		t.Fatal("Prime never reached the tool call")
	}
	// A file Prime has surely read (the first folder's, walked first)
	// changes: it must be read again.
	w.write("dir00/f000.txt", "changed after Prime read it\n")
	got := make(chan Info, 1)
	go func() { got <- w.checkpoint("s", 1, nil) }()
	select {
	case <-got:
	case <-guard:
		t.Fatal("the checkpoint waited behind Prime")
	}
	done()
	if err := <-primed; !errors.Is(err, context.Canceled) {
		t.Errorf("Prime = %v, want it stopped", err)
	}
	if primeSc == nil || primeRead == 0 || primeRead >= len(files) {
		t.Fatalf("Prime read %d of %d files", primeRead, len(files))
	}
	if want := len(files) - primeRead + 1; ckRead != want {
		t.Errorf("the checkpoint read %d files, want the %d Prime had not read plus the one changed since", ckRead, want)
	}
	// The checkpoint holds every file, with its content now.
	snap, err := w.s.readTrees(w.s.records[len(w.s.records)-1].Roots)
	if err != nil {
		t.Fatal(err)
	}
	for p, text := range files {
		if p == "dir00/f000.txt" {
			text = "changed after Prime read it\n"
		}
		if st := snap[w.abs(p)]; st.Hash != hashOf([]byte(text)) {
			t.Errorf("%s: %+v, want the hash of %q", p, st, text)
		}
	}
	if len(snap) != len(files) {
		t.Errorf("%d files in the checkpoint, want %d", len(snap), len(files))
	}
}

// TestPrimeReportsProgress: Prime reports the files it read so far while
// it runs; here it is paused by a tool call (Busy) after reading some,
// and its reports say how many until the call ends and it finishes.
func TestPrimeReportsProgress(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	w := newWS(t, files)
	old := primeReportEvery
	primeReportEvery = 5 * time.Millisecond
	t.Cleanup(func() { primeReportEvery = old })

	calls := 0
	busy := make(chan func(), 1)
	w.s.testPace = func() {
		// Calls: the folder, then one per file; the 11th file waits.
		if calls++; calls == 12 {
			busy <- w.s.Busy()
		}
	}
	reports := make(chan int64, 1000)
	primed := make(chan error, 1)
	go func() {
		primed <- w.s.Prime(context.Background(), func(n int64) {
			select {
			case reports <- n:
			default:
			}
		})
	}()
	guard := time.After(60 * time.Second) // a failure guard, not a timing assertion
	for n := int64(-1); n != 10; {
		select {
		case n = <-reports:
			if n > 10 {
				t.Fatalf("Prime reported %d files read while a tool call ran after the 10th", n)
			}
		case <-guard:
			t.Fatal("no report of the 10 files read")
		}
	}
	(<-busy)()
	select {
	case err := <-primed:
		if err != nil {
			t.Fatal(err)
		}
	case <-guard:
		t.Fatal("Prime did not finish once the tool call ended")
	}
	if w.s.trees == nil {
		t.Error("Prime finished without the trees")
	}
}
