package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/session"
)

// acpEnv is the environment of a daemon the ACP tests start: the replay
// model on transcript tr, act mode, and state and config in state and a
// fresh folder (so the user's own config never leaks in).
func acpEnv(t *testing.T, state, tr string) []string {
	return []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act", "XDG_STATE_HOME=" + state,
		"XDG_CONFIG_HOME=" + t.TempDir(), "CLINE_LS_TRANSCRIPT=" + tr}
}

// startACP starts a daemon, initializes it with the given fs capabilities
// and returns the connection and the initialize result.
func startACP(t *testing.T, ctx context.Context, c *acpClient, fs acp.FileSystemCapabilities, env []string) (*acp.ClientSideConnection, acp.InitializeResponse) {
	t.Helper()
	conn, _, _, _ := acpDaemon(t, c, env...)
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: fs}})
	if err != nil {
		t.Fatal(err)
	}
	return conn, init
}

var rwFS = acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}

// savedRecords loads a session's saved records from the state folder.
func savedRecords(t *testing.T, state, id string) (session.Meta, []session.Record) {
	t.Helper()
	st, err := session.NewStore(session.DefaultStateDir(func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}))
	if err != nil {
		t.Fatal(err)
	}
	meta, recs, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return meta, recs
}

// TestACPLoadInFreshDaemon is acpx's ordinary flow: session/new in one
// daemon, then each prompt in a new daemon through session/load. The
// loaded session's cwd must be a workspace folder (before the fix every
// file tool failed with "no workspace folder is open"), its title stays
// the first prompt's (before, every prompt overwrote it), and the token
// usage of its turns is saved (before, ACP sessions saved none).
func TestACPLoadInFreshDaemon(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("alpha\nbeta\n"), 0o644)
	unused := transcript(t, reply(text("never asked")))
	first := transcript(t,
		reply(call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "notes.txt"}}}),
			map[string]any{"usage": map[string]any{"input_tokens": 120, "output_tokens": 7}}),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "beta"}, "events": []any{text("It says beta.")}},
	)
	second := transcript(t, reply(text("Still beta.")))

	conn1, _ := startACP(t, ctx, &acpClient{files: map[string]string{}}, rwFS, acpEnv(t, state, unused))
	sess, err := conn1.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// Each daemon lets go of the session before the next loads it, as an
	// acpx process does by ending: one daemon writes a session at a time.
	letGo := func(conn *acp.ClientSideConnection) {
		t.Helper()
		if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
			t.Fatal(err)
		}
	}
	letGo(conn1)
	for i, tr := range []struct{ transcript, prompt, want string }{
		{first, "what do the notes say", "It says beta."},
		{second, "and now", "Still beta."},
	} {
		c := &acpClient{files: map[string]string{}}
		conn, _ := startACP(t, ctx, c, rwFS, acpEnv(t, state, tr.transcript))
		if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []acp.McpServer{}}); err != nil {
			t.Fatalf("daemon %d: session/load: %v", i+2, err)
		}
		res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(tr.prompt)}})
		if err != nil {
			t.Fatalf("daemon %d: prompt: %v", i+2, err)
		}
		if res.StopReason != acp.StopReasonEndTurn || !strings.Contains(c.agentText(), tr.want) {
			t.Fatalf("daemon %d: stop %s, agent said %q", i+2, res.StopReason, c.agentText())
		}
		if i == 1 {
			list, err := conn.ListSessions(ctx, acp.ListSessionsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Sessions) != 1 || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "what do the notes say" {
				t.Fatalf("session/list = %+v, want the first prompt as the title", list.Sessions)
			}
		}
		letGo(conn)
	}
	_, recs := savedRecords(t, state, string(sess.SessionId))
	var usage int
	for _, r := range recs {
		if r.Type == session.RecordUsage && r.Usage != nil {
			usage += r.Usage.InputTokens
		}
	}
	if usage != 120 {
		t.Errorf("saved input tokens = %d, want 120", usage)
	}
}

// TestACPPathsAndReads: every tool-call location and diff path the daemon
// sends is absolute, as ACP requires (edits used to send "app.py"), and a
// read plus an edit cost two fs/read_text_file calls (they cost three: the
// edit read once to describe itself and again to apply).
func TestACPPathsAndReads(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	path := filepath.Join(root, "app.py")
	os.WriteFile(path, []byte("x = 1\n"), 0o644)
	tr := transcript(t,
		reply(call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "app.py"}}})),
		reply(call("c2", "editor", map[string]any{"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited app.py"}, "events": []any{text("Done.")}},
	)
	c := &acpClient{files: map[string]string{}, answer: "allow_once"}
	conn, _ := startACP(t, ctx, c, rwFS, acpEnv(t, state, tr))
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("bump x")}}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files[path] != "x = 2\n" {
		t.Fatalf("client buffer = %q", c.files[path])
	}
	if c.reads != 2 {
		t.Errorf("%d fs/read_text_file calls for one read and one edit, want 2", c.reads)
	}
	var paths []string
	for _, u := range c.updates {
		if tc := u.Update.ToolCall; tc != nil {
			for _, l := range tc.Locations {
				paths = append(paths, l.Path)
			}
		}
		if tc := u.Update.ToolCallUpdate; tc != nil {
			for _, l := range tc.Locations {
				paths = append(paths, l.Path)
			}
			for _, item := range tc.Content {
				if item.Diff != nil {
					paths = append(paths, item.Diff.Path)
				}
			}
		}
	}
	for _, p := range c.permissions {
		for _, l := range p.ToolCall.Locations {
			paths = append(paths, l.Path)
		}
		for _, item := range p.ToolCall.Content {
			if item.Diff != nil {
				paths = append(paths, item.Diff.Path)
			}
		}
	}
	if len(paths) < 3 {
		t.Fatalf("only %d paths sent: %q", len(paths), paths)
	}
	for _, p := range paths {
		if p != path {
			t.Errorf("path %q sent, want %q", p, path)
		}
	}
}

// refusingClient refuses every fs/read_text_file with its own reason.
type refusingClient struct{ *acpClient }

func (refusingClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, errors.New("app.py is outside the folders this user shares")
}

// TestACPReadRefusalReason: when the client refuses fs/read_text_file,
// its own reason reaches the model (it used to get a bare "Internal
// error", the SDK's wrapper around the reason).
func TestACPReadRefusalReason(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "app.py"), []byte("x = 1\n"), 0o644)
	tr := transcript(t,
		reply(call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "app.py"}}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "outside the folders this user shares"},
			"events": []any{text("I may not read it.")}},
	)
	c := refusingClient{&acpClient{files: map[string]string{}}}
	conn2, _, _, _ := acpDaemon(t, c, acpEnv(t, state, tr)...)
	if _, err := conn2.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: rwFS}}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn2.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn2.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("read app.py")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", res.StopReason)
	}
}

// TestACPSessionClose: session/close is advertised, cancels the running
// turn, saves what the turn did and forgets the session; a refused
// session/new (bad mcpServers) leaves nothing for session/list (it used
// to leave a session that was never opened).
func TestACPSessionClose(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "app.py"), []byte("x = 1\n"), 0o644)
	tr := transcript(t,
		reply(text("Editing. "), call("c1", "editor", map[string]any{"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})),
	)
	c := &acpClient{files: map[string]string{}, blockPerm: make(chan struct{})}
	defer close(c.blockPerm)
	conn, wire, wireMu, _ := acpDaemon(t, c, acpEnv(t, state, tr)...)
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: rwFS}})
	if err != nil {
		t.Fatal(err)
	}
	caps := init.AgentCapabilities.SessionCapabilities
	if caps.Close == nil || caps.List == nil {
		t.Fatalf("sessionCapabilities = %+v, want list and close", caps)
	}
	if mc := init.AgentCapabilities.McpCapabilities; !mc.Http || !mc.Sse {
		t.Fatalf("mcpCapabilities = %+v, want http and sse (both are served)", mc)
	}

	var bad []acp.McpServer
	if err := json.Unmarshal([]byte(`[{"name":"broken","command":"","args":[],"env":[]}]`), &bad); err != nil {
		t.Fatal(err)
	}
	_, err = conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: bad})
	if re := (*acp.RequestError)(nil); !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "mcpServers[0].command") {
		t.Fatalf("session/new with an MCP server without a command = %v, want an invalid-params error naming mcpServers[0].command", err)
	}
	if list, err := conn.ListSessions(ctx, acp.ListSessionsRequest{}); err != nil || len(list.Sessions) != 0 {
		t.Fatalf("session/list after a refused session/new = %+v, %v", list.Sessions, err)
	}

	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan acp.PromptResponse, 1)
	go func() {
		r, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("bump x")}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitFor(t, ctx, "a permission request", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.permissions) == 1
	})
	if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acp.StopReasonCancelled {
			t.Fatalf("the turn session/close ended stopped with %s", r.StopReason)
		}
	case <-ctx.Done():
		t.Fatal("session/close did not end the turn")
	}
	// The permission request the turn gave up is withdrawn by its id, as
	// ACP spells it: $/cancel_request {requestId}.
	var permID, cancelled json.RawMessage
	wireMu.Lock()
	for _, line := range strings.Split(wire.String(), "\n") {
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ RequestID json.RawMessage }
		}
		json.Unmarshal([]byte(line), &m)
		switch m.Method {
		case "session/request_permission":
			permID = m.ID
		case "$/cancel_request":
			cancelled = m.Params.RequestID
		}
	}
	wireMu.Unlock()
	if len(permID) == 0 || string(cancelled) != string(permID) {
		t.Errorf("$/cancel_request named request %s, want the permission request's id %s", cancelled, permID)
	}
	// A closed session is not reopened by a prompt: the daemon refuses it
	// at once, with an error naming session/load, and runs no turn (the
	// client would see a second permission request).
	_, err = conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("again")}})
	var re *acp.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "session/load") {
		t.Fatalf("session/prompt of a closed session = %v, want an invalid-params error naming session/load", err)
	}
	c.mu.Lock()
	perms := len(c.permissions)
	c.mu.Unlock()
	if perms != 1 {
		t.Fatalf("%d permission requests: the closed session ran a turn", perms)
	}
	// session/load reopens it, and calls naming it are served again.
	if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load of the closed session: %v", err)
	}
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "plan"}); err != nil {
		t.Fatalf("session/set_mode after session/load: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "app.py")); string(got) != "x = 1\n" {
		t.Fatalf("a cancelled edit changed app.py: %q", got)
	}
	_, recs := savedRecords(t, state, string(sess.SessionId))
	var saw bool
	for _, r := range recs {
		if r.Type == session.RecordMessage && r.Message != nil {
			for _, part := range r.Message.Parts {
				saw = saw || strings.Contains(part.Text, "bump x")
			}
		}
	}
	if !saw {
		t.Error("the closed session's prompt was not saved")
	}
}

// waitFor polls cond until it holds, failing the test when ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestACPSessionCloseStopsMCP: session/close stops the MCP servers the
// session's session/new started; the streamable HTTP server sees its MCP
// session deleted.
func TestACPSessionCloseStopsMCP(t *testing.T) {
	ctx := testCtx(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text back."}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var methods []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	seen := func(method string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.Contains(methods, method)
		}
	}

	root, state := t.TempDir(), t.TempDir()
	conn, _ := startACP(t, ctx, &acpClient{files: map[string]string{}}, rwFS, acpEnv(t, state, transcript(t, reply(text("unused")))))
	var servers []acp.McpServer
	if err := json.Unmarshal([]byte(`[{"type":"http","name":"srv","url":"`+hs.URL+`","headers":[]}]`), &servers); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the MCP server to be connected", seen(http.MethodPost))
	if seen(http.MethodDelete)() {
		t.Fatal("the MCP session ended before session/close")
	}
	if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the MCP session to be deleted", seen(http.MethodDelete))
}
