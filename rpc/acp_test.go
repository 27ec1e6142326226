package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// acpClient is the client side of the ACP Go SDK, a peer we did not write,
// holding "editor buffers" for the files it is asked to read and write.
type acpClient struct {
	mu          sync.Mutex
	files       map[string]string // the client's buffers, by absolute path
	updates     []acp.SessionNotification
	permissions []acp.RequestPermissionRequest
	answer      string // optionId to pick
	writes      int
	reads       int
	blockPerm   chan struct{} // when set, permission requests wait on it
}

func (c *acpClient) ReadTextFile(ctx context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if t, ok := c.files[p.Path]; ok {
		return acp.ReadTextFileResponse{Content: t}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	return acp.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *acpClient) WriteTextFile(ctx context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	c.files[p.Path] = p.Content
	return acp.WriteTextFileResponse{}, nil
}

func (c *acpClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	block, answer := c.blockPerm, c.answer
	c.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: acp.PermissionOptionId(answer)}}}, nil
}

func (c *acpClient) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound("terminal/wait_for_exit")
}

func (c *acpClient) agentText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, u := range c.updates {
		if m := u.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
			b.WriteString(m.Content.Text.Text)
		}
	}
	return b.String()
}

// acpDaemon starts the daemon as a separate process, connects the SDK's
// client to it, and records every line the daemon writes.
func acpDaemon(t *testing.T, c acp.Client, env ...string) (*acp.ClientSideConnection, *bytes.Buffer, *sync.Mutex, *teeWriter) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(env, "CLINE_LS_TEST_DAEMON=1")...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &teeWriter{w: stdin}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("the daemon did not exit at end of input")
		}
	})
	var wire bytes.Buffer
	var wireMu sync.Mutex
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				wireMu.Lock()
				wire.Write(line)
				wireMu.Unlock()
				pw.Write(line)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return acp.NewClientSideConnection(c, in, pr), &wire, &wireMu, in
}

// teeWriter records what the client writes to the daemon.
type teeWriter struct {
	w   io.Writer
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf.Write(p)
	t.mu.Unlock()
	return t.w.Write(p)
}

// requestMethods maps the ids of the client's requests to their methods.
func (t *teeWriter) requestMethods() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{}
	for _, line := range strings.Split(t.buf.String(), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			out[string(m.ID)] = m.Method
		}
	}
	return out
}

func TestACPSessionWithSDKClient(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := acpSchema(t)
	root, state := t.TempDir(), t.TempDir()
	path := filepath.Join(root, "notes.txt")
	os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644)
	tr := transcript(t,
		reply(text("Reading. "), call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "notes.txt"}}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "beta (unsaved)"},
			"events": []any{call("c2", "editor", map[string]any{"path": "notes.txt", "old_text": "beta (unsaved)", "new_text": "gamma"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited notes.txt"},
			"events": []any{text("Done.")}},
		// The cancelled turn below: a call that waits for permission.
		reply(text("Second edit. "), call("c3", "editor", map[string]any{"path": "notes.txt", "old_text": "gamma", "new_text": "delta"})),
	)
	c := &acpClient{files: map[string]string{path: "alpha\nbeta (unsaved)\n"}, answer: "allow_once"}
	conn, wire, wireMu, sent := acpDaemon(t, c, "CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act", "XDG_STATE_HOME="+state,
		"XDG_CONFIG_HOME="+t.TempDir(), "CLINE_LS_TRANSCRIPT="+tr)
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize = %+v", init)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("fix the notes")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stopReason = %s", res.StopReason)
	}
	c.mu.Lock()
	buffer, writes, reads, perms := c.files[path], c.writes, c.reads, len(c.permissions)
	c.mu.Unlock()
	if buffer != "alpha\ngamma\n" || writes != 1 || reads == 0 {
		t.Fatalf("client buffer %q after %d writes, %d reads", buffer, writes, reads)
	}
	if disk, _ := os.ReadFile(path); string(disk) != "alpha\nbeta\n" {
		t.Fatalf("the daemon wrote the disk itself: %q", disk)
	}
	if perms != 1 {
		t.Fatalf("%d permission requests, want 1", perms)
	}
	c.mu.Lock()
	var sawDiff bool
	for _, u := range c.updates {
		if tc := u.Update.ToolCallUpdate; tc != nil {
			for _, item := range tc.Content {
				if item.Diff != nil && item.Diff.Path == path && item.Diff.NewText == "alpha\ngamma\n" {
					sawDiff = true
				}
			}
		}
	}
	permDiff := c.permissions[0].ToolCall.Content
	c.mu.Unlock()
	if !sawDiff {
		t.Error("no diff content on the edit's tool_call_update")
	}
	if len(permDiff) == 0 || permDiff[0].Diff == nil {
		t.Errorf("permission request without a diff: %+v", permDiff)
	}

	// Cancel mid-turn: the second prompt waits on permission; cancel it.
	c.mu.Lock()
	c.blockPerm = make(chan struct{})
	block := c.blockPerm
	c.mu.Unlock()
	done := make(chan acp.PromptResponse, 1)
	go func() {
		r, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("and once more")}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	for {
		c.mu.Lock()
		n := len(c.permissions)
		c.mu.Unlock()
		if n == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no second permission request")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := conn.Cancel(ctx, acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	close(block) // the client answers pending permissions with cancelled
	if r := <-done; r.StopReason != acp.StopReasonCancelled {
		t.Fatalf("cancelled prompt stopReason = %s", r.StopReason)
	}
	if c.files[path] != "alpha\ngamma\n" {
		t.Fatalf("a cancelled edit changed the buffer: %q", c.files[path])
	}

	// session/load replays the history.
	c.mu.Lock()
	c.updates = nil
	c.mu.Unlock()
	if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := c.agentText(); !strings.Contains(got, "Reading.") || !strings.Contains(got, "Done.") {
		t.Fatalf("replayed agent text = %q", got)
	}

	// Every message the daemon sent validates against the ACP schema.
	checkWire(t, schema, wire, wireMu, sent, 10)
	// The checker itself must reject what ACP does not allow.
	bad := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","inputTokens":3}}}`
	if schema != nil && schema.Check(bad, sent.requestMethods()) == nil {
		t.Error("the schema check accepts a usage_update without used/size")
	}
}
