package session

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
)

// forkSource writes a session of three turns, the second compacted and
// the first with yolo's reminder, into st, and returns its open Log.
func forkSource(t *testing.T, st *Store) *Log {
	t.Helper()
	l := storeCreate(t, st, "src", "/w", storeT0)
	storeAppend(t, l,
		Record{Type: RecordTitle, Time: storeAt(0), Title: "first"},
		storeText(storeAt(1), "user", "turn one"),
		storeText(storeAt(2), "assistant", "answer one"),
		storeText(storeAt(3), "user", continueReminder),
		storeText(storeAt(4), "assistant", "answer one, continued"),
		storeText(storeAt(5), "user", "turn two"),
		storeText(storeAt(6), "assistant", "answer two"),
		Record{Type: RecordCompaction, Time: storeAt(7), Compaction: &Compaction{Reason: ReasonManual, Method: MethodSummary,
			Head: []provider.Message{provider.UserText(factsMarker + "summary]")}, Kept: 2}},
		Record{Type: RecordPlan, Time: storeAt(8), Plan: []PlanEntry{{Content: "step", Status: "pending"}}},
		storeText(storeAt(9), "user", "turn three"),
		storeText(storeAt(10), "assistant", "answer three"),
	)
	return l
}

// A fork holds the turns asked for, with everything recorded in them,
// names its parent in its meta and in the list, and can be made of a
// session another daemon holds, without taking its lock.
func TestForkUpToTurn(t *testing.T) {
	a, dir, _ := newTestStore(t, StoreOptions{})
	held := forkSource(t, a) // held by store a for the whole test
	defer held.Close()
	b, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		atTurn   int
		last     string
		messages int
		plan     bool
	}{
		{1, "answer one, continued", 4, false},
		{2, "answer two", 6, true},
		{3, "answer three", 8, true},
		{0, "answer three", 8, true},
	} {
		id := "fork" + string(rune('0'+tc.atTurn))
		meta, err := b.Fork("src", id, tc.atTurn, "")
		if err != nil {
			t.Fatalf("Fork at %d: %v", tc.atTurn, err)
		}
		if meta.ParentSessionID != "src" || meta.Cwd != "/w" {
			t.Errorf("fork meta = %+v", meta)
		}
		m, recs, err := b.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		r := Resume(m, recs)
		if r.Messages != tc.messages || messageText(r.History[len(r.History)-1]) != tc.last || (len(r.Plan) > 0) != tc.plan || r.Title != "first" {
			t.Errorf("fork at %d: %d messages ending %q, plan %v, title %q", tc.atTurn, r.Messages, messageText(r.History[len(r.History)-1]), r.Plan, r.Title)
		}
		if m.ParentSessionID != "src" || m.ForkedAtTurn != tc.atTurn {
			t.Errorf("loaded fork meta = %+v", m)
		}
		// The fork is its own session: this store may append to it
		// while the parent stays held by the other.
		l, err := b.Open(id)
		if err != nil {
			t.Fatalf("Open of the fork: %v", err)
		}
		l.Close()
	}
	list, err := b.List("")
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, s := range list {
		parents[s.SessionID] = s.ParentSessionID
	}
	if parents["fork2"] != "src" || parents["src"] != "" {
		t.Errorf("list parents = %v", parents)
	}
}

// Bad turns, ids and sources are refused with a clear error and leave
// no file behind.
func TestForkRefusals(t *testing.T) {
	st, _, _ := newTestStore(t, StoreOptions{})
	forkSource(t, st).Close()
	for _, tc := range []struct {
		src, dst string
		at       int
		want     string
	}{
		{"src", "f", 4, "has 3 turns"},
		{"src", "f", -1, "count from 1"},
		{"src", "../f", 1, "invalid session id"},
		{"missing", "f", 1, "no such file"},
		{"src", "src", 1, "exist"},
	} {
		_, err := st.Fork(tc.src, tc.dst, tc.at, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fork(%q, %q, %d) = %v, want %q", tc.src, tc.dst, tc.at, err, tc.want)
		}
	}
	if _, _, err := st.Load("f"); err == nil {
		t.Error("a refused fork left a session behind")
	}
}
