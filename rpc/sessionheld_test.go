package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// secondWindow starts another editor, with its own server, on rs's
// folder and state directory: a second daemon of the same user. flock
// excludes two opens in one process as it does two processes.
func secondWindow(t *testing.T, ctx context.Context, rs replaySession) *rpctest.Editor {
	t.Helper()
	tr := transcript(t, reply(text("Another answer.")))
	ed := rpctest.New(t, rpc.Options{Logger: slog.New(newLogWatch())})
	opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": rs.state}
	if _, err := ed.Initialize(ctx, rs.root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	return ed
}

// wantHeld checks err is PROTOCOL.md §12's refusal of a session another
// daemon holds: -32002, data {heldBy: pid}, a message that says it may
// be forked.
func wantHeld(t *testing.T, what string, err error) {
	t.Helper()
	var re *jsonrpc2.Error
	if !errors.As(err, &re) || re.Code != -32002 {
		t.Fatalf("%s of a session another daemon holds: %v, want error -32002", what, err)
	}
	var data struct{ HeldBy int }
	if jerr := json.Unmarshal(re.Data, &data); jerr != nil || data.HeldBy != os.Getpid() {
		t.Errorf("%s: data %s, want {\"heldBy\": %d}", what, re.Data, os.Getpid())
	}
	if !strings.Contains(re.Message, "fork") {
		t.Errorf("%s: message %q does not say the session may be forked", what, re.Message)
	}
}

// TestSessionHeldByAnotherDaemon: one writer per session across
// daemons. While window A has its session open, window B's session/load
// of it, and a prompt or call naming it (which would reopen it), are
// refused with -32002 and who holds it, and B's session/list says it is
// held; once A closes it, B loads it, and A in turn is refused.
func TestSessionHeldByAnotherDaemon(t *testing.T) {
	ctx := testCtx(t)
	a := newReplaySession(t, ctx, 0)
	var res struct{ StopReason string }
	prompt := map[string]any{"sessionId": a.id, "prompt": []any{map[string]any{"type": "text", "text": "from A"}}}
	if err := a.ed.Call(ctx, "session/prompt", prompt, &res); err != nil {
		t.Fatal(err)
	}
	b := secondWindow(t, ctx, a)
	load := map[string]any{"sessionId": a.id, "cwd": a.root, "mcpServers": []any{}}
	wantHeld(t, "session/load", b.Call(ctx, "session/load", load, nil))
	wantHeld(t, "session/prompt", b.Call(ctx, "session/prompt", prompt, &res))
	wantHeld(t, "session/set_mode", b.Call(ctx, "session/set_mode", map[string]any{"sessionId": a.id, "modeId": "plan"}, nil))

	var list struct {
		Sessions []struct {
			SessionID string
			HeldBy    int
		}
	}
	if err := b.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].HeldBy != os.Getpid() {
		t.Errorf("window B's session/list: %+v, want A's session held by %d", list.Sessions, os.Getpid())
	}
	list.Sessions = nil // heldBy is left out when 0, so decode afresh
	if err := a.ed.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].HeldBy != 0 {
		t.Errorf("window A's session/list: %+v, want its own session not held", list.Sessions)
	}

	if err := a.ed.Call(ctx, "cline/closeSession", map[string]any{"sessionId": a.id}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(ctx, "session/load", load, nil); err != nil {
		t.Fatalf("window B's session/load once A closed it: %v", err)
	}
	wantHeld(t, "session/load in A once B holds it", a.ed.Call(ctx, "session/load", load, nil))
}

// TestSessionLetGoOnIdleReleaseAndExit: a daemon lets go of a session it
// released for being idle, and of every session when it exits, so that
// the other window may load them.
func TestSessionLetGoOnIdleReleaseAndExit(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a := newReplaySession(t, ctx, 300*time.Millisecond)
	if err := a.logs.await(ctx, "releasing idle session", "session", a.id); err != nil {
		t.Fatal(err)
	}
	b := secondWindow(t, ctx, a)
	load := map[string]any{"sessionId": a.id, "cwd": a.root, "mcpServers": []any{}}
	// The log line comes as the release starts; the lock goes as it ends.
	for {
		err := b.Call(ctx, "session/load", load, nil)
		var re *jsonrpc2.Error
		if err == nil {
			break
		}
		if !errors.As(err, &re) || re.Code != -32002 || ctx.Err() != nil {
			t.Fatalf("window B's session/load after A released it: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantHeld(t, "window A's prompt to the session B now holds", a.ed.Call(ctx, "session/prompt",
		map[string]any{"sessionId": a.id, "prompt": []any{map[string]any{"type": "text", "text": "again"}}}, nil))
	if _, err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.ed.Call(ctx, "session/load", load, nil); err != nil {
		t.Fatalf("window A's session/load once B exited: %v", err)
	}
}

// TestReadOnlyLoadOfHeldSession: session/load with readOnly shows a
// session another daemon holds (its history replayed) without taking it:
// the holder goes on writing it, and a prompt naming it in the reader is
// still refused with -32002.
func TestReadOnlyLoadOfHeldSession(t *testing.T) {
	ctx := testCtx(t)
	a := newReplaySession(t, ctx, 0)
	prompt := map[string]any{"sessionId": a.id, "prompt": []any{map[string]any{"type": "text", "text": "from A"}}}
	var res struct{ StopReason string }
	if err := a.ed.Call(ctx, "session/prompt", prompt, &res); err != nil {
		t.Fatal(err)
	}
	b := secondWindow(t, ctx, a)
	load := map[string]any{"sessionId": a.id, "cwd": a.root, "readOnly": true}
	if err := b.Call(ctx, "session/load", load, nil); err != nil {
		t.Fatalf("window B's read-only session/load: %v", err)
	}
	var users []string
	for _, u := range updates(b, a.id) {
		if u["sessionUpdate"] == "user_message_chunk" {
			users = append(users, u["content"].(map[string]any)["text"].(string))
		}
	}
	if strings.Join(users, "|") != "from A" {
		t.Errorf("replayed user messages = %q, want the one of A's turn", users)
	}
	wantHeld(t, "session/prompt after a read-only load", b.Call(ctx, "session/prompt", prompt, &res))
	wantHeld(t, "session/load after a read-only load", b.Call(ctx, "session/load", map[string]any{"sessionId": a.id, "cwd": a.root}, nil))
}
