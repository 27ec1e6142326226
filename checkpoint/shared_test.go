package checkpoint

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// window opens a second store on w's workspace and state directory, as
// a second editor window's daemon does.
func (w *ws) window() *ws {
	w.t.Helper()
	b := &ws{t: w.t, dir: w.dir, state: w.state, now: w.now.Add(30 * time.Second)}
	b.opts = w.opts
	b.opts.Now = func() time.Time { return b.now }
	b.open()
	return b
}

func ids(infos []Info) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.ID)
	}
	return out
}

// Two windows checkpoint, list, prune and restore on one store: each
// saves the index as it is on disk plus its own change (never what it
// alone remembers), and a collection keeps every blob either names.
func TestTwoStoresShareOneIndex(t *testing.T) {
	a := newWS(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	b := a.window()

	a1 := a.checkpoint("sa", 1, nil)
	a.write("a.txt", "a1\n")
	b1 := b.checkpoint("sb", 1, nil)
	b.write("b.txt", "b1\n")
	b2 := b.checkpoint("sb", 2, nil)
	a.write("a.txt", "a2\n")
	a2 := a.checkpoint("sa", 2, nil)

	fresh := a.window()
	if got, want := ids(fresh.s.List("sb")), []string{b1.ID, b2.ID}; !slices.Equal(got, want) {
		t.Errorf("a fresh daemon lists window B's checkpoints %v, want %v", got, want)
	}
	if got, want := ids(fresh.s.List("sa")), []string{a1.ID, a2.ID}; !slices.Equal(got, want) {
		t.Errorf("a fresh daemon lists window A's checkpoints %v, want %v", got, want)
	}
	if got, want := ids(a.s.List("sb")), []string{b1.ID, b2.ID}; !slices.Equal(got, want) {
		t.Errorf("window A lists window B's checkpoints %v, want %v", got, want)
	}

	// A collects with no grace for young blobs: B's blobs are named by
	// B's checkpoints in the index, which A reads under the lock.
	if _, err := a.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if p := b.restore("sb", b1.ID, nil, true); len(p.Failed) > 0 {
		t.Fatalf("window B's restore after A's prune failed: %+v", p.Failed)
	}
	b.want("a.txt", "a1\n")
	b.want("b.txt", "b0\n")
	if p := a.restore("sa", a1.ID, nil, true); len(p.Failed) > 0 {
		t.Fatalf("window A's restore after B's prune failed: %+v", p.Failed)
	}
	a.want("a.txt", "a0\n")
	b.want("b.txt", "b0\n")
}

// A blob no checkpoint names yet, stored by another window (its Prime,
// or a checkpoint it has not saved), survives a collection for the
// grace period; once a collection removed it regardless (no grace), the
// window that stored it knows no more than the index says and stores it
// again, so its checkpoints still restore.
func TestBlobsOfAnotherWindowSurviveCollection(t *testing.T) {
	a := newWS(t, map[string]string{"x.txt": "seed\n"})
	b := a.window()
	b.write("only-b.txt", "primed by B\n")
	if err := b.s.Prime(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	primed := b.s.blobs.path(hashOf([]byte("primed by B\n")))
	if _, err := os.Stat(primed); err != nil {
		t.Fatalf("Prime did not store the file: %v", err)
	}
	// Gone from disk before A's checkpoint, so no index names it.
	if err := os.Remove(b.abs("only-b.txt")); err != nil {
		t.Fatal(err)
	}
	a.opts.BlobGrace = 0 // the default
	a.s.Close()
	a.open()
	a.checkpoint("sa", 1, nil) // which collects, as a store's first does
	if _, err := a.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(primed); err != nil {
		t.Fatalf("window B's primed blob was collected within the grace period: %v", err)
	}

	a.opts.BlobGrace = -1
	a.s.Close()
	a.open()
	if _, err := a.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(primed); err == nil {
		t.Fatal("with no grace the unnamed blob is still there: the test proves nothing")
	}
	// B remembers storing that content; the collection's count in the
	// index tells it to forget.
	b.write("only-b.txt", "primed by B\n")
	b1 := b.checkpoint("sb", 1, nil)
	b.write("only-b.txt", "changed\n")
	b.checkpoint("sb", 2, nil)
	p := b.restore("sb", b1.ID, nil, true)
	if len(p.Failed) > 0 {
		t.Fatalf("restore of a checkpoint taken after another window's collection: %+v", p.Failed)
	}
	b.want("only-b.txt", "primed by B\n")
}

// Checkpoints of two windows at once (each daemon's sessions run their
// own turns) all land in the index.
func TestTwoStoresCheckpointAtOnce(t *testing.T) {
	a := newWS(t, map[string]string{"f.txt": "0\n"})
	b := a.window()
	const n = 8
	errs := make(chan error, 2*n)
	for session, w := range map[string]*ws{"s-a": a, "s-b": b} {
		go func() {
			for i := range n {
				_, err := w.s.Checkpoint(context.Background(), Request{SessionID: session, Turn: i})
				errs <- err
			}
		}()
	}
	for range 2 * n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	fresh := a.window()
	if got := len(fresh.s.List("s-a")) + len(fresh.s.List("s-b")); got != 2*n {
		t.Errorf("the index holds %d checkpoints, want %d", got, 2*n)
	}
}
