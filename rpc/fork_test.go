package rpc_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
)

// TestForkSessionHeldByAnotherDaemon: PROTOCOL.md §12's way out of a
// session another daemon holds. Window B forks A's session, which A
// still holds, at its turn 1 (cline/forkSession) and whole
// (cline.forkSession, the stock clients' command): each fork is a new
// session with the turns asked for (the cut itself is session's
// TestForkUpToTurn), B loads it though A holds the
// parent, and session/list names the parent. Bad turns and ids are
// refused with -32602 and the daemon keeps serving.
func TestForkSessionHeldByAnotherDaemon(t *testing.T) {
	ctx := testCtx(t)
	a := newReplaySession(t, ctx, 0)
	var res struct{ StopReason string }
	if err := a.ed.Call(ctx, "session/prompt", map[string]any{"sessionId": a.id, "prompt": []any{map[string]any{"type": "text", "text": "first"}}}, &res); err != nil {
		t.Fatal(err)
	}
	b := secondWindow(t, ctx, a)
	var fork struct{ SessionID string }
	if err := b.Call(ctx, "cline/forkSession", map[string]any{"sessionId": a.id, "atTurn": 1}, &fork); err != nil {
		t.Fatalf("cline/forkSession of a held session: %v", err)
	}
	var whole struct{ SessionID string }
	if err := b.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.forkSession",
		"arguments": []any{map[string]any{"sessionId": a.id}}}, &whole); err != nil {
		t.Fatalf("cline.forkSession: %v", err)
	}
	st, err := session.NewStore(a.state)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{fork.SessionID: 1, whole.SessionID: 1} {
		meta, recs, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if n := session.Turns(recs); n != want || meta.ParentSessionID != a.id {
			t.Errorf("fork %s: %d turns, parent %q; want %d turns of %s", id, n, meta.ParentSessionID, want, a.id)
		}
	}
	if err := b.Call(ctx, "session/load", map[string]any{"sessionId": fork.SessionID, "cwd": a.root, "mcpServers": []any{}}, nil); err != nil {
		t.Fatalf("window B's session/load of its fork: %v", err)
	}
	var list struct {
		Sessions []struct {
			SessionID       string
			ParentSessionID string
		}
	}
	if err := b.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, s := range list.Sessions {
		parents[s.SessionID] = s.ParentSessionID
	}
	if len(parents) != 3 || parents[fork.SessionID] != a.id || parents[whole.SessionID] != a.id || parents[a.id] != "" {
		t.Errorf("session/list parents = %v", parents)
	}

	for _, bad := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"sessionId": a.id, "atTurn": 2}, "has 1 turns"},
		{map[string]any{"sessionId": a.id, "atTurn": -1}, "count from 1"},
		{map[string]any{"sessionId": "../x"}, "invalid session id"},
		{map[string]any{"atTurn": 1}, "sessionId"},
	} {
		err := b.Call(ctx, "cline/forkSession", bad.params, nil)
		var re *jsonrpc2.Error
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, bad.want) {
			t.Errorf("cline/forkSession %v: %v, want -32602 saying %q", bad.params, err, bad.want)
		}
	}
	if err := b.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatalf("serving after the refusals: %v", err)
	}
}

// TestACPSessionFork: ACP's session/fork makes the fork, opens it in the
// cwd it is given, and answers like session/new (sessionId, modes,
// configOptions); the fork then takes prompts of its own, and a fork
// without cwd is refused.
func TestACPSessionFork(t *testing.T) {
	ctx := testCtx(t)
	root, dir := t.TempDir(), t.TempDir()
	tr := transcript(t, reply(text("An answer.")))
	env := map[string]string{"CLINE_LS_PROVIDER": "replay", "CLINE_LS_TRANSCRIPT": tr, "XDG_STATE_HOME": filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	c := inProcessACP(t, ctx, env)
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var parent, fork struct {
		SessionID     string `json:"sessionId"`
		Modes         struct{ CurrentModeID string }
		ConfigOptions []json.RawMessage
	}
	res, err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(res, &parent)
	prompt := func(id string) {
		t.Helper()
		if _, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hello"}}}); err != nil {
			t.Fatal(err)
		}
	}
	prompt(parent.SessionID)
	if _, err := c.Call(ctx, "session/fork", map[string]any{"sessionId": parent.SessionID, "mcpServers": []any{}}); err == nil ||
		!strings.Contains(err.Error(), "cwd") {
		t.Errorf("session/fork without cwd: %v, want an error naming cwd", err)
	}
	res, err = c.Call(ctx, "session/fork", map[string]any{"sessionId": parent.SessionID, "atTurn": 1, "cwd": root, "mcpServers": []any{}})
	if err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	if err := json.Unmarshal(res, &fork); err != nil || fork.SessionID == "" || fork.SessionID == parent.SessionID ||
		fork.Modes.CurrentModeID == "" || len(fork.ConfigOptions) == 0 {
		t.Fatalf("session/fork answered %s", res)
	}
	prompt(fork.SessionID)
	st, err := session.NewStore(filepath.Join(dir, "state", "cline-ls"))
	if err != nil {
		t.Fatal(err)
	}
	meta, recs, err := st.Load(fork.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if session.Turns(recs) != 2 || meta.ParentSessionID != parent.SessionID {
		t.Errorf("the fork after its own prompt: %d turns, parent %q", session.Turns(recs), meta.ParentSessionID)
	}
	if _, recs, _ := st.Load(parent.SessionID); session.Turns(recs) != 1 {
		t.Errorf("the parent has %d turns after the fork's prompt, want 1", session.Turns(recs))
	}
}
