package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/workspace"
)

// logWatch is a slog handler that lets a test wait for a log message.
type logWatch struct {
	mu      sync.Mutex
	records []slog.Record
	arrived chan struct{} // closed and replaced on each record
}

func newLogWatch() *logWatch { return &logWatch{arrived: make(chan struct{})} }

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *logWatch) WithGroup(string) slog.Handler            { return w }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records = append(w.records, r.Clone())
	close(w.arrived)
	w.arrived = make(chan struct{})
	return nil
}

// matches reports whether r has message msg and attribute key = value.
func matches(r slog.Record, msg, key, value string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = found || (a.Key == key && a.Value.String() == value)
		return !found
	})
	return r.Message == msg && found
}

// has reports whether a record with message msg and attribute key = value
// has arrived.
func (w *logWatch) has(msg, key, value string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.records {
		if matches(r, msg, key, value) {
			return true
		}
	}
	return false
}

// await waits for a record with message msg and attribute key = value.
func (w *logWatch) await(ctx context.Context, msg, key, value string) error {
	seen := 0
	for {
		w.mu.Lock()
		recs, ch := w.records[seen:], w.arrived
		seen = len(w.records)
		w.mu.Unlock()
		for _, r := range recs {
			if matches(r, msg, key, value) {
				return nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("no log %q with %s=%s: %w", msg, key, value, ctx.Err())
		}
	}
}

// replaySession is an editor on a fresh workspace and state folder, with
// the replay model answering "An answer." and one act session.
type replaySession struct {
	ed              *rpctest.Editor
	logs            *logWatch
	root, state, id string
}

// newReplaySession starts one; idleRelease, if not 0, is the server's.
// A session reopened after a release gets a fresh replay model, which
// starts at the transcript's first reply again: the one reply serves
// every turn.
func newReplaySession(t *testing.T, ctx context.Context, idleRelease time.Duration) replaySession {
	t.Helper()
	rs := replaySession{root: t.TempDir(), state: t.TempDir(), logs: newLogWatch()}
	tr := transcript(t, reply(text("An answer.")))
	rs.ed = rpctest.New(t, rpc.Options{Logger: slog.New(rs.logs), IdleRelease: idleRelease})
	opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": rs.state}
	if _, err := rs.ed.Initialize(ctx, rs.root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	var created struct{ SessionID string }
	if err := rs.ed.Call(ctx, "session/new", map[string]any{"cwd": rs.root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	rs.id = created.SessionID
	return rs
}

// TestIdleSessionReleasedAndReopened: a session left unused past the
// idle limit is released, and a prompt to it afterwards reopens it from
// its saved history and carries on, with both turns in that history.
func TestIdleSessionReleasedAndReopened(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rs := newReplaySession(t, ctx, 300*time.Millisecond) // well above the gap between a lookup and the work it starts, under -race on a loaded machine
	ed, logs, id, state := rs.ed, rs.logs, rs.id, rs.state
	prompt := func(text string) {
		t.Helper()
		var res struct{ StopReason string }
		if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}, &res); err != nil || res.StopReason != "end_turn" {
			t.Fatalf("prompt %q: %v, stop %q", text, err, res.StopReason)
		}
	}
	prompt("first question")
	if err := logs.await(ctx, "releasing idle session", "session", id); err != nil {
		t.Fatal(err)
	}
	prompt("second question")
	if got := agentText(updates(ed, id)); strings.Count(got, "An answer.") != 2 {
		t.Fatalf("the reopened session did not answer: %q", got)
	}
	st, err := session.NewStore(state)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, r := range recs {
		if r.Type == session.RecordMessage && r.Message.Role == "user" {
			b, _ := json.Marshal(r.Message)
			users = append(users, string(b))
		}
	}
	if len(users) != 2 || !strings.Contains(users[0], "first question") || !strings.Contains(users[1], "second question") {
		t.Fatalf("saved user messages = %q, want the two questions", users)
	}
}

// TestHistoryFlushFailureWarns: when the history cannot be written at the
// end of a turn, the user is told, in the session and by a warning, and
// the turn still ends normally. The daemon runs with a file size limit
// that its session file passes on the turn's first flush (write fails with
// EFBIG); as root, permissions would not stop the write.
func TestHistoryFlushFailureWarns(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh to start the daemon with a file size limit")
	}
	ctx := testCtx(t)
	tr := transcript(t, reply(text("An answer that will not be saved.")))
	state, root := t.TempDir(), t.TempDir()
	// One 512-byte block: enough for the session file's first line, not
	// for the turn. SIGXFSZ is ignored so the write fails instead of
	// killing the daemon.
	c := startDaemonCmd(t, exec.Command("sh", "-c", `trap "" XFSZ; ulimit -f 1; exec "$0"`, os.Args[0]))
	init := map[string]any{"processId": nil, "rootUri": workspace.PathToURI(root), "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state}}
	if err := c.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	c.Notify(ctx, "initialized", map[string]any{})
	var created struct{ SessionID string }
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "sessions", created.SessionID+".jsonl")); err != nil {
		t.Fatalf("the session file was not created, so this is not a flush failure: %v", err)
	}
	var res struct{ StopReason string }
	if err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": strings.Repeat("a long question ", 64)}}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q, want end_turn", res.StopReason)
	}
	warned, err := c.Await(ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "this session is not being saved")
	})
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Type    int
		Message string
	}
	json.Unmarshal(warned.Params, &w)
	if w.Type != 2 || !strings.Contains(w.Message, "file too large") {
		t.Errorf("warning = %+v, want a type 2 warning naming the write error", w)
	}
	told := false
	for _, m := range c.Messages("session/update") {
		told = told || strings.Contains(string(m.Params), "[this session is not being saved")
	}
	if !told {
		t.Error("the session's own output does not say that it is not being saved")
	}
}

// TestCloseOfIdleReleasedSessionHolds: a session released for being idle
// and then closed by the client is closed like a live one: the close
// succeeds, and a prompt naming it afterwards is refused until
// session/load, not reopened quietly.
func TestCloseOfIdleReleasedSessionHolds(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rs := newReplaySession(t, ctx, 300*time.Millisecond)
	ed, logs, id, root := rs.ed, rs.logs, rs.id, rs.root
	prompt := func() error {
		var res struct{ StopReason string }
		return ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "a question"}}}, &res)
	}
	if err := prompt(); err != nil {
		t.Fatal(err)
	}
	if err := logs.await(ctx, "releasing idle session", "session", id); err != nil {
		t.Fatal(err)
	}
	if err := ed.Call(ctx, "cline/closeSession", map[string]any{"sessionId": id}, nil); err != nil {
		t.Fatalf("closing the released session: %v", err)
	}
	if err := prompt(); err == nil || !strings.Contains(err.Error(), "was closed") {
		t.Fatalf("a prompt to the closed session: %v, want it refused as closed", err)
	}
	if err := ed.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": root, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := prompt(); err != nil {
		t.Fatalf("a prompt after session/load: %v", err)
	}
}

// TestCancelOfSessionNotLiveIsQuiet: session/cancel naming a session that
// is not live (here one the client closed) has no turn to cancel: it is
// not reported as a failure, and it reopens nothing (before, it looked the
// session up like a prompt does, which reopens one released for being
// idle, MCP servers and all, only to cancel nothing).
func TestCancelOfSessionNotLiveIsQuiet(t *testing.T) {
	ctx := testCtx(t)
	rs := newReplaySession(t, ctx, 0)
	ed, logs, id := rs.ed, rs.logs, rs.id
	if err := ed.Call(ctx, "cline/closeSession", map[string]any{"sessionId": id}, nil); err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
	// Notifications are handled in wire order: once session/list is
	// answered, the cancel has been.
	if err := ed.Call(ctx, "session/list", map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	if logs.has("notification failed", "method", "session/cancel") {
		t.Error("session/cancel of a closed session was reported as failed")
	}
}
