package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/provider"
)

// storeT0 is an arbitrary fixed time: tests give records explicit times
// and never compare against the clock.
var storeT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func storeAt(minutes int) time.Time { return storeT0.Add(time.Duration(minutes) * time.Minute) }

// storeLogBuffer collects what a Store logs.
type storeLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *storeLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *storeLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTestStore returns a store in a temporary directory whose log lines
// are collected in the returned buffer.
func newTestStore(t testing.TB, opts StoreOptions) (*Store, string, *storeLogBuffer) {
	t.Helper()
	dir := t.TempDir()
	logs := &storeLogBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err := NewStoreWithOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, logs
}

func storeCreate(t testing.TB, s *Store, id, cwd string, at time.Time) *Log {
	t.Helper()
	l, err := s.Create(Meta{SessionID: id, Cwd: cwd, Mode: "act", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func storeAppend(t testing.TB, l *Log, recs ...Record) {
	t.Helper()
	if err := l.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
}

func storeText(at time.Time, role provider.Role, text string) Record {
	return Record{Type: RecordMessage, Time: at, Message: &provider.Message{Role: role, Parts: []provider.Part{provider.TextPart(text)}}}
}

func storeFile(s *Store, id string) string { return s.path(id) }

func storeLoad(t *testing.T, s *Store, id string) (Meta, []Record) {
	t.Helper()
	meta, recs, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return meta, recs
}

func TestStoreDefaultStateDir(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/cline-ls"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/cline-ls"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/state/cline-ls"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		got := DefaultStateDir(func(k string) string { return tt.env[k] })
		if got != filepath.FromSlash(tt.want) {
			t.Errorf("DefaultStateDir(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestNewStoreCreatesPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := NewStore(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("sessions dir mode %v is readable by others", perm)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	meta := Meta{SessionID: "s-1", Cwd: "/w", Mode: "plan", Title: "first", CreatedAt: storeT0, ParentID: "parent-0"}
	l, err := s.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("long <line> & more ", 10_000) // longer than the reader's buffer
	want := []Record{
		storeText(storeAt(1), provider.RoleUser, "fix <b> & \"quotes\"\nsecond line"),
		{Type: RecordMessage, Time: storeAt(2), Message: &provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
			provider.ThinkingPart("hmm", "sig"),
			provider.TextPart("calling"),
			provider.CallPart(provider.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}),
		}}},
		{Type: RecordMessage, Time: storeAt(3), Message: &provider.Message{Role: provider.RoleTool, Parts: []provider.Part{
			provider.ResultPart(provider.ToolResult{CallID: "c1", Name: "read_file", Content: big, IsError: true}),
		}}},
		{Type: RecordMode, Time: storeAt(4), Mode: "act"},
		{Type: RecordPlan, Time: storeAt(5), Plan: []PlanEntry{{Content: "a", Priority: "high", Status: "pending"}, {Content: "b", Priority: "low", Status: "completed"}}},
		{Type: RecordTitle, Time: storeAt(6), Title: "renamed"},
		{Type: RecordUsage, Time: storeAt(7), Usage: &provider.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 3, CacheWriteTokens: 4}},
		{Type: RecordPlan, Time: storeAt(8)}, // cleared plan
	}
	if err := l.Append(want[:3]...); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(want[3:]...); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil { // Close flushes the rest
		t.Fatal(err)
	}

	gotMeta, got := storeLoad(t, s, "s-1")
	meta.Version = storeFormatVersion
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Errorf("meta = %+v, want %+v", gotMeta, meta)
	}
	if len(got) != len(want) {
		t.Fatalf("loaded %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Errorf("record %d:\n got %.300s\nwant %.300s", i, g, w)
		}
	}

	raw, err := os.ReadFile(storeFile(s, "s-1"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(raw, []byte("\n")); lines != 1+len(want) {
		t.Errorf("file has %d lines, want %d", lines, 1+len(want))
	}
	if !bytes.Contains(raw, []byte("fix <b> & ")) {
		t.Error("HTML characters were escaped in the file")
	}
}

func TestStoreCreateRefusesExisting(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	storeCreate(t, s, "dup", "/w", storeT0).Close()
	if _, err := s.Create(Meta{SessionID: "dup", Cwd: "/w"}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Create: err = %v, want fs.ErrExist", err)
	}
	if _, _, err := s.Load("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing): err = %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing): err = %v, want fs.ErrNotExist", err)
	}
}

func TestLogAppendAfterLoad(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	l := storeCreate(t, s, "again", "/w", storeT0)
	storeAppend(t, l, storeText(storeAt(1), provider.RoleUser, "one"))
	if _, err := s.Open("again"); err == nil {
		t.Error("Open of a session with an open Log succeeded")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	_, recs := storeLoad(t, s, "again")
	if len(recs) != 1 {
		t.Fatalf("loaded %d records, want 1", len(recs))
	}
	l, err := s.Open("again")
	if err != nil {
		t.Fatal(err)
	}
	storeAppend(t, l, storeText(storeAt(2), provider.RoleAssistant, "two"), Record{Type: RecordTitle, Time: storeAt(3), Title: "t"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs = storeLoad(t, s, "again")
	var texts []string
	for _, r := range recs {
		if r.Message != nil {
			texts = append(texts, r.Message.Parts[0].Text)
		}
	}
	if strings.Join(texts, ",") != "one,two" || len(recs) != 3 {
		t.Errorf("after reopening: %d records, messages %q; want 3 records, one,two", len(recs), texts)
	}
}

func TestLogClosed(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	l := storeCreate(t, s, "c", "/w", storeT0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(storeText(storeAt(1), provider.RoleUser, "late")); !errors.Is(err, ErrLogClosed) {
		t.Errorf("Append after Close: err = %v, want ErrLogClosed", err)
	}
	if err := l.Flush(); !errors.Is(err, ErrLogClosed) {
		t.Errorf("Flush after Close: err = %v, want ErrLogClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := l.Append(Record{Type: RecordMeta, Meta: &Meta{SessionID: "c"}}); err == nil {
		t.Error("Append accepted a meta record")
	}
}

func TestLoadTornLastLine(t *testing.T) {
	tails := map[string]string{
		"no newline":       `{"type":"message","time":"2025-03-01T12:0`,
		"complete no nl":   `{"type":"title","time":"2025-03-01T12:09:00Z","title":"lost"}`,
		"invalid with nl":  "{\"type\":\"mess\n",
		"zeros":            "\x00\x00\x00\x00",
		"invalid after nl": "\n",
	}
	for name, tail := range tails {
		t.Run(name, func(t *testing.T) {
			s, _, logs := newTestStore(t, StoreOptions{})
			l := storeCreate(t, s, "torn", "/w", storeT0)
			storeAppend(t, l, storeText(storeAt(1), provider.RoleUser, "kept"))
			l.Close()
			f, err := os.OpenFile(storeFile(s, "torn"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tail)
			f.Close()

			_, recs := storeLoad(t, s, "torn")
			if len(recs) != 1 || recs[0].Message.Parts[0].Text != "kept" {
				t.Fatalf("loaded %+v, want the one complete record", recs)
			}
			if !strings.Contains(logs.String(), "torn last line") {
				t.Errorf("torn line not logged; log: %q", logs.String())
			}

			// Appending cuts the torn line first, so the file stays loadable.
			l, err = s.Open("torn")
			if err != nil {
				t.Fatal(err)
			}
			storeAppend(t, l, storeText(storeAt(2), provider.RoleAssistant, "after"))
			l.Close()
			_, recs = storeLoad(t, s, "torn")
			if len(recs) != 2 || recs[1].Message.Parts[0].Text != "after" {
				t.Fatalf("after reopening: %+v, want kept and after", recs)
			}
		})
	}
}

func TestLoadOnlyMetaTorn(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	os.WriteFile(storeFile(s, "empty"), nil, 0o600)
	os.WriteFile(storeFile(s, "half"), []byte(`{"type":"meta","time":"2025-`), 0o600)
	for _, id := range []string{"empty", "half"} {
		if _, _, err := s.Load(id); err == nil || !strings.Contains(err.Error(), "meta") {
			t.Errorf("Load(%s): err = %v, want no meta record", id, err)
		}
		if l, err := s.Open(id); err == nil {
			l.Close()
			t.Errorf("Open(%s) succeeded on a file without a meta record", id)
		}
	}
}

func TestLoadCorruptMiddle(t *testing.T) {
	tests := []struct {
		name, line string
	}{
		{"garbage", "not json at all"},
		{"truncated", `{"type":"message","time":"2025-03-01T12:0`},
		{"message without payload", `{"type":"message","time":"2025-03-01T12:00:00Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newTestStore(t, StoreOptions{})
			l := storeCreate(t, s, "bad", "/w", storeT0)
			for i := range 4 {
				storeAppend(t, l, storeText(storeAt(i), provider.RoleUser, fmt.Sprint("m", i)))
			}
			l.Close()
			path := storeFile(s, "bad")
			raw, _ := os.ReadFile(path)
			lines := strings.SplitAfter(string(raw), "\n")
			lines[2] = tt.line + "\n" // line 3
			os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)

			_, _, err := s.Load("bad")
			if err == nil || !strings.Contains(err.Error(), "line 3") {
				t.Errorf("Load: err = %v, want one naming line 3", err)
			}
		})
	}
}

func TestLoadSkipsUnknownRecords(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	l := storeCreate(t, s, "future", "/w", storeT0)
	storeAppend(t, l, storeText(storeAt(1), provider.RoleUser, "a"))
	l.Close()
	f, _ := os.OpenFile(storeFile(s, "future"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"checkpoint","time":"2025-03-01T12:02:00Z","checkpoint":{"commit":"abc"}}` + "\n")
	f.WriteString(`{"type":"mode","time":"2025-03-01T12:03:00Z","mode":"yolo","extra":1}` + "\n")
	f.Close()

	_, recs := storeLoad(t, s, "future")
	if len(recs) != 2 || recs[0].Type != RecordMessage || recs[1].Mode != "yolo" {
		t.Errorf("loaded %+v, want the message and the mode record", recs)
	}
}

func TestLoadRefusesForeignFile(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	storeCreate(t, s, "orig", "/w", storeT0).Close()
	if err := os.Rename(storeFile(s, "orig"), storeFile(s, "copy")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load("copy"); err == nil || !strings.Contains(err.Error(), "orig") {
		t.Errorf("Load of a renamed file: err = %v, want a mismatch naming orig", err)
	}
}

func TestStoreHostileIDs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	s, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// A file a traversal would reach.
	os.WriteFile(filepath.Join(root, "victim.jsonl"), []byte(`{"type":"meta","time":"2025-03-01T12:00:00Z","meta":{"sessionId":"../../victim"}}`+"\n"), 0o600)

	bad := []string{
		"", ".", "..", "../x", "../../victim", "a/b", `a\b`, "/etc/passwd", ".hidden",
		"a\x00b", "a..b", "a b", "a:b", "é", strings.Repeat("a", storeMaxIDLen+1),
	}
	for _, id := range bad {
		if _, err := s.Create(Meta{SessionID: id, Cwd: "/w"}); !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("Create(%q): err = %v, want ErrInvalidSessionID", id, err)
		}
		if _, err := s.Open(id); !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("Open(%q): err = %v, want ErrInvalidSessionID", id, err)
		}
		if _, _, err := s.Load(id); !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("Load(%q): err = %v, want ErrInvalidSessionID", id, err)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 {
		t.Errorf("files outside the sessions folder changed: %v", entries)
	}
	if sessions, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(sessions) != 0 {
		t.Errorf("refused ids left files: %v", sessions)
	}

	for _, id := range []string{strings.Repeat("a", storeMaxIDLen), "sess_01J9-x.y", "a.b"} {
		l, err := s.Create(Meta{SessionID: id, Cwd: "/w"})
		if err != nil {
			t.Errorf("Create(%q): %v", id, err)
			continue
		}
		l.Close()
	}
}

func TestStoreList(t *testing.T) {
	s, _, logs := newTestStore(t, StoreOptions{})

	// old: cwd /a, title from its meta, last record at minute 10.
	l, err := s.Create(Meta{SessionID: "old", Cwd: "/a", Title: "from meta", CreatedAt: storeAt(0)})
	if err != nil {
		t.Fatal(err)
	}
	storeAppend(t, l, storeText(storeAt(10), provider.RoleUser, "hi"))
	l.Close()

	// new: cwd /a, retitled twice; a message longer than the reader's
	// buffer sits between the titles; last record at minute 30.
	longTitle := strings.Repeat("t", 100_000)
	l = storeCreate(t, s, "new", "/a", storeAt(1))
	storeAppend(t, l,
		Record{Type: RecordTitle, Time: storeAt(2), Title: "first title"},
		storeText(storeAt(3), provider.RoleUser, strings.Repeat("x", 200_000)),
		// A title longer than the reader's buffer must be read whole.
		Record{Type: RecordTitle, Time: storeAt(4), Title: "second " + longTitle},
		Record{Type: RecordUsage, Time: storeAt(30), Usage: &provider.Usage{InputTokens: 1}},
	)
	l.Close()

	// other: cwd /b (with a trailing slash), last record at minute 20;
	// its title line is laid out by hand in another field order.
	l = storeCreate(t, s, "other", "/b/", storeAt(5))
	storeAppend(t, l, storeText(storeAt(6), provider.RoleUser, "x"))
	l.Close()
	f, _ := os.OpenFile(storeFile(s, "other"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"title":"hand made","time":"2025-03-01T12:20:00Z","type":"title"}` + "\n")
	f.WriteString(`{"type":"title","time":"2025-03-01T13:20:00Z","title":"torn`) // ignored
	f.Close()

	// tie: same last time as old; ordered after it by id.
	l = storeCreate(t, s, "tie", "/c", storeAt(10))
	l.Close()

	// Not sessions, or unreadable: skipped.
	os.WriteFile(storeFile(s, "broken"), []byte("garbage\n"), 0o600)
	os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(s.dir, ".hidden.jsonl"), []byte("x"), 0o600)

	all, err := s.List("")
	if err != nil {
		t.Fatal(err)
	}
	want := []Summary{
		{SessionID: "new", Cwd: "/a", Title: "second " + longTitle, UpdatedAt: storeAt(30)},
		{SessionID: "other", Cwd: "/b/", Title: "hand made", UpdatedAt: storeAt(20)},
		{SessionID: "old", Cwd: "/a", Title: "from meta", UpdatedAt: storeAt(10)},
		{SessionID: "tie", Cwd: "/c", UpdatedAt: storeAt(10)},
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("List(\"\") =\n%+v\nwant\n%+v", all, want)
	}
	if !strings.Contains(logs.String(), "broken") {
		t.Errorf("the unreadable session was not logged; log: %q", logs.String())
	}

	for cwd, ids := range map[string][]string{"/a": {"new", "old"}, "/b": {"other"}, "/a/": {"new", "old"}, "/none": nil} {
		got, err := s.List(cwd)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, sum := range got {
			gotIDs = append(gotIDs, sum.SessionID)
		}
		if !reflect.DeepEqual(gotIDs, ids) {
			t.Errorf("List(%q) = %v, want %v", cwd, gotIDs, ids)
		}
	}
}

func TestStoreRedact(t *testing.T) {
	const secret = "sk-ant-SECRET123"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	s, _, _ := newTestStore(t, StoreOptions{Redact: redact})
	l, err := s.Create(Meta{SessionID: "r", Cwd: "/w", Title: "key " + secret, CreatedAt: storeT0})
	if err != nil {
		t.Fatal(err)
	}
	storeAppend(t, l,
		storeText(storeAt(1), provider.RoleAssistant, "your key is "+secret+"!"),
		Record{Type: RecordTitle, Time: storeAt(2), Title: secret},
	)
	l.Close()

	raw, _ := os.ReadFile(storeFile(s, "r"))
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("secret written to the session file:\n%s", raw)
	}
	meta, recs := storeLoad(t, s, "r")
	if meta.Title != "key [REDACTED]" || recs[0].Message.Parts[0].Text != "your key is [REDACTED]!" || recs[1].Title != "[REDACTED]" {
		t.Errorf("redacted session = %+v %+v", meta, recs)
	}

	// A Redact that breaks the JSON is refused rather than written.
	s2, _, _ := newTestStore(t, StoreOptions{Redact: func(s string) string { return strings.ReplaceAll(s, secret, `"`) }})
	l2 := storeCreate(t, s2, "r2", "/w", storeT0)
	defer l2.Close()
	if err := l2.Append(storeText(storeAt(1), provider.RoleUser, secret)); err == nil {
		t.Error("Append accepted a line Redact turned into invalid JSON")
	}
}

func TestLogConcurrentAppendFlush(t *testing.T) {
	s, _, _ := newTestStore(t, StoreOptions{})
	l := storeCreate(t, s, "busy", "/w", storeT0)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				rec := storeText(storeAt(i), provider.RoleUser, fmt.Sprintf("%d-%d", w, i))
				if err := l.Append(rec, Record{Type: RecordUsage, Time: storeAt(i), Usage: &provider.Usage{OutputTokens: i}}); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					if err := l.Flush(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := storeLoad(t, s, "busy")
	if len(recs) != 2*writers*each {
		t.Fatalf("loaded %d records, want %d", len(recs), 2*writers*each)
	}
	// Each Append's records stay together and each writer's stay in order.
	next := map[string]int{}
	for i := 0; i < len(recs); i += 2 {
		if recs[i].Type != RecordMessage || recs[i+1].Type != RecordUsage {
			t.Fatalf("records %d,%d = %s,%s: an Append was split", i, i+1, recs[i].Type, recs[i+1].Type)
		}
		w, n, _ := strings.Cut(recs[i].Message.Parts[0].Text, "-")
		if got, _ := strconv.Atoi(n); got != next[w] {
			t.Fatalf("writer %s: record %d after %d", w, got, next[w]-1)
		}
		next[w]++
	}
}

// storeChildEnv switches the test binary into the writer of
// TestLogSurvivesSIGKILL; its value is the state directory.
const storeChildEnv = "CLINE_LS_STORE_KILL_CHILD"

// storeTurn is a typical turn: a user prompt, an assistant reply with a
// tool call, the tool's result and the usage of the reply.
func storeTurn(n int) []Record {
	return []Record{
		storeText(time.Time{}, provider.RoleUser, fmt.Sprintf("turn %d: please fix the failing test in parser.go", n)),
		{Type: RecordMessage, Message: &provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
			provider.TextPart(strings.Repeat("I will read the file first and then make the edit. ", 20)),
			provider.CallPart(provider.ToolCall{ID: fmt.Sprint("call-", n), Name: "read_file", Args: json.RawMessage(`{"path":"internal/parser/parser.go"}`)}),
		}}},
		{Type: RecordMessage, Message: &provider.Message{Role: provider.RoleTool, Parts: []provider.Part{
			provider.ResultPart(provider.ToolResult{CallID: fmt.Sprint("call-", n), Name: "read_file", Content: strings.Repeat("func parse(s string) (Node, error) {\n\treturn nil, nil\n}\n", 80)}),
		}}},
		{Type: RecordUsage, Usage: &provider.Usage{InputTokens: 4000, OutputTokens: 300, CacheReadTokens: 3500}},
	}
}

// TestStoreKillChild is not a test on its own: TestLogSurvivesSIGKILL runs
// the test binary with storeChildEnv set to make it the process it kills.
func TestStoreKillChild(t *testing.T) {
	dir := os.Getenv(storeChildEnv)
	if dir == "" {
		t.Skip("runs only as TestLogSurvivesSIGKILL's child process")
	}
	s, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Create(Meta{SessionID: "killed", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 1_000_000; n++ {
		if err := l.Append(storeTurn(n)...); err != nil {
			t.Fatal(err)
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		// Only now is turn n durable; the parent may kill us any time.
		if _, err := fmt.Println(n); err != nil {
			return // the parent is gone
		}
	}
}

func TestLogSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	// The deadline only guards against a hung child; nothing is timed.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStoreKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), storeChildEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	flushed := 0
	sc := bufio.NewScanner(stdout)
	for flushed < 20 && sc.Scan() {
		if n, err := strconv.Atoi(sc.Text()); err == nil {
			flushed = n
		}
	}
	// SIGKILL (Process.Kill) leaves no chance to clean up: mid-loop, maybe
	// mid-write.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if flushed < 20 {
		t.Fatalf("child reported %d flushed turns before ending (%v); stderr:\n%s", flushed, err, stderr.String())
	}
	// Killed, and by this SIGKILL: a child that failed or crashed on its
	// own ends with an error too, and would leave a file no kill tore.
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v instead of being killed by SIGKILL; stderr:\n%s", err, stderr.String())
	}

	s, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := s.Load("killed")
	if err != nil {
		t.Fatalf("Load after SIGKILL: %v", err)
	}
	turns := 0
	for i, r := range recs {
		if r.Type == RecordMessage && r.Message.Role == provider.RoleUser {
			turns++
			if want := fmt.Sprintf("turn %d:", turns); !strings.HasPrefix(r.Message.Parts[0].Text, want) {
				t.Fatalf("record %d = %q, want %q...", i, r.Message.Parts[0].Text, want)
			}
		}
	}
	if turns < flushed {
		t.Fatalf("loaded %d turns, but the child had reported %d flushed", turns, flushed)
	}
	// The session goes on after the crash.
	l, err := s.Open("killed")
	if err != nil {
		t.Fatal(err)
	}
	storeAppend(t, l, storeTurn(turns+1)...)
	l.Close()
	if _, recs, err = s.Load("killed"); err != nil || len(recs) < 4*(turns+1) {
		t.Fatalf("after appending to the crashed session: %d records, %v", len(recs), err)
	}
}

func BenchmarkLogTurn(b *testing.B) {
	s, _, _ := newTestStore(b, StoreOptions{})
	l := storeCreate(b, s, "bench", "/w", storeT0)
	defer l.Close()
	turn := storeTurn(1)
	var size int
	for _, r := range turn {
		line, _ := s.encode(r)
		size += len(line)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(turn...); err != nil {
			b.Fatal(err)
		}
		if err := l.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
