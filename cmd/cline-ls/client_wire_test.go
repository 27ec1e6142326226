package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// fakeDaemon is the server end of a client's pipe: it reads what the
// client sends, frame by frame.
type fakeDaemon struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

// next reads the next message and returns its params (or result) as sent.
func (d *fakeDaemon) next() (method string, id, payload json.RawMessage) {
	d.t.Helper()
	body, err := jsonrpcclient.ReadFrame(d.r, jsonrpcclient.LSP)
	if err != nil {
		d.t.Fatal(err)
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		d.t.Fatal(err)
	}
	if m.Method == "" {
		return "", m.ID, m.Result
	}
	return m.Method, m.ID, m.Params
}

func (d *fakeDaemon) send(body string) {
	go d.conn.Write(jsonrpcclient.Frame(jsonrpcclient.LSP, []byte(body)))
}

func wireClient(t *testing.T) (*client, *fakeDaemon) {
	cliEnd, srvEnd := net.Pipe()
	c := &client{out: io.Discard, approve: approveAllow, buffers: make(map[string]*buffer),
		previewed: make(map[string]bool), diffed: make(map[string]bool)}
	// Never served: applyEdit asks it only for the position encoding.
	c.srv = rpc.NewServer(rpc.Options{Logger: slog.New(slog.DiscardHandler)})
	c.conn = jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{Observe: c.observe, Discard: true})
	c.conn.Handle("workspace/applyEdit", c.applyEdit)
	t.Cleanup(func() { c.conn.Close(); srvEnd.Close(); c.approving.Wait() })
	return c, &fakeDaemon{t: t, conn: srvEnd, r: bufio.NewReader(srvEnd)}
}

// mapJSON is what the maps the client sent before its named types
// encoded as.
func mapJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expect(t *testing.T, d *fakeDaemon, method, want string) json.RawMessage {
	t.Helper()
	got, id, params := d.next()
	if got != method || string(params) != want {
		t.Fatalf("sent %s %s\nwant %s %s", got, params, method, want)
	}
	return id
}

// TestClientSendsTheMapsBytes checks that what demo and exec send the
// daemon is byte for byte what the maps they were written with sent.
func TestClientSendsTheMapsBytes(t *testing.T) {
	ctx := context.Background()
	c, d := wireClient(t)
	dir := t.TempDir()

	opts := settings.Settings{StateDir: dir + "/state", Provider: &settings.ProviderSettings{Name: "replay", Transcript: dir + "/t.json"}}
	done := make(chan error, 1)
	go func() { done <- c.initialize(ctx, dir, opts) }()
	id := expect(t, d, "initialize", mapJSON(t, map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "cline-ls " + "headless"},
		"workspaceFolders": []any{map[string]any{"uri": workspace.PathToURI(dir), "name": "workspace"}},
		"capabilities": map[string]any{
			"general":      map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
			"workspace":    map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
			"experimental": map[string]any{"cline": map[string]any{"approvals": true, "diffs": true}},
		},
		"initializationOptions": map[string]any{"stateDir": dir + "/state", "provider": map[string]any{"name": "replay", "transcript": dir + "/t.json"}},
	}))
	d.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)
	expect(t, d, "initialized", `{}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	path := dir + "/a.go"
	os.WriteFile(path, []byte("package a\n<&>\n"), 0o644)
	uri := workspace.PathToURI(path)
	go func() { done <- c.open(ctx, path) }()
	expect(t, d, "textDocument/didOpen", mapJSON(t, map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n<&>\n"},
	}))
	<-done

	for _, sent := range []struct {
		params any
		want   map[string]any
	}{
		{newSessionParams{CWD: dir, Mode: "plan"}, map[string]any{"cwd": dir, "mode": "plan"}},
		{setModeParams{ModeID: "act", SessionID: "s1"}, map[string]any{"sessionId": "s1", "modeId": "act"}},
		{promptParams{Prompt: []wire.ContentBlock{wire.TextBlock{Text: "fix <it> & go"}}, SessionID: "s1"},
			map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "fix <it> & go"}}}},
		{sessionParams{SessionID: "s1"}, map[string]any{"sessionId": "s1"}},
	} {
		go c.conn.Notify(ctx, "m", sent.params)
		expect(t, d, "m", mapJSON(t, sent.want))
	}

	// An approval, allowed; then one rejected with feedback.
	d.send(`{"jsonrpc":"2.0","method":"cline/approvalRequest","params":{"approvalId":"a1","toolCall":{"toolCallId":"t1","title":"Edit a.go"},"diff":"-x\n+y"}}`)
	id = expect(t, d, "cline/approvalResponse", mapJSON(t, map[string]any{"approvalId": "a1", "outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}))
	d.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`)
	c.approve, c.terminal = approveAsk, bufio.NewReader(strings.NewReader("n\nnot <that> & this\n"))
	d.send(`{"jsonrpc":"2.0","method":"cline/approvalRequest","params":{"approvalId":"a2","toolCall":{"toolCallId":"t2","title":"Run"},"command":"ls"}}`)
	id = expect(t, d, "cline/approvalResponse", mapJSON(t, map[string]any{"approvalId": "a2", "outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}, "feedback": "not <that> & this"}))
	d.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`)

	// Edits: one applied (with its didChange), a stale one refused.
	d.send(`{"jsonrpc":"2.0","id":"e1","method":"workspace/applyEdit","params":{"edit":{"documentChanges":[{"textDocument":{"uri":"` + uri + `","version":1},"edits":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}},"newText":"var x = 1"}]}]}}}`)
	expect(t, d, "textDocument/didChange", mapJSON(t, map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "package a\nvar x = 1\n"}},
	}))
	expect(t, d, "", mapJSON(t, map[string]any{"applied": true}))
	d.send(`{"jsonrpc":"2.0","id":"e2","method":"workspace/applyEdit","params":{"edit":{"documentChanges":[{"textDocument":{"uri":"` + uri + `","version":1},"edits":[]}]}}}`)
	expect(t, d, "", mapJSON(t, map[string]any{"applied": false, "failureReason": "stale or unknown document"}))
}

// TestExecEndIsTheMapsBytes checks exec's last JSON line.
func TestExecEndIsTheMapsBytes(t *testing.T) {
	for _, tc := range []struct {
		stopReason, errMsg string
		want               map[string]any
	}{
		{"end_turn", "", map[string]any{"sessionId": "s1", "stopReason": "end_turn"}},
		{"", "", map[string]any{"sessionId": "s1", "stopReason": ""}},
		{"", "model <down> & out", map[string]any{"sessionId": "s1", "error": "model <down> & out"}},
	} {
		var out strings.Builder
		c := &client{out: &out, json: true}
		c.printEnd("s1", tc.stopReason, tc.errMsg)
		want := mapJSON(t, tc.want)
		if got := strings.TrimSuffix(out.String(), "\n"); got != want {
			t.Errorf("printEnd(%q, %q) = %s, want %s", tc.stopReason, tc.errMsg, got, want)
		}
	}
}
