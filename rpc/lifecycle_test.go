package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure guard, not a timing assertion: generous for -race on a loaded machine
	t.Cleanup(cancel)
	return ctx
}

func codeOf(t *testing.T, err error) jsonrpc2.Code {
	t.Helper()
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return je.Code
}

func TestInitializeResult(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{Version: "1.2.3", ToolNames: func() []string { return []string{"read_files", "editor"} }})
	root := t.TempDir()
	res, err := ed.Initialize(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var got struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
			} `json:"textDocumentSync"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			Experimental struct {
				Cline struct {
					ProtocolVersion int      `json:"protocolVersion"`
					Modes           []string `json:"modes"`
					Tools           []string `json:"tools"`
				} `json:"cline"`
			} `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name, Version string
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Capabilities
	if c.PositionEncoding != "utf-16" || !c.TextDocumentSync.OpenClose || c.TextDocumentSync.Change != 2 {
		t.Errorf("capabilities = %s", b)
	}
	if got.ServerInfo.Name != "cline-ls" || got.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo = %+v", got.ServerInfo)
	}
	if cl := c.Experimental.Cline; cl.ProtocolVersion != 3 || strings.Join(cl.Modes, ",") != "plan,act,search,minimal,yolo" || strings.Join(cl.Tools, ",") != "read_files,editor" {
		t.Errorf("experimental.cline = %+v", cl)
	}
	if got := strings.Join(c.ExecuteCommandProvider.Commands, ","); got != "cline.newSession,cline.prompt,cline.setMode,cline.cancel,cline.compact,cline.checkpoints,cline.restore,cline.forkSession" {
		t.Errorf("commands = %v", c.ExecuteCommandProvider.Commands)
	}
	if f := ed.Server.Folders().Paths(); len(f) != 1 || f[0] != root {
		t.Errorf("folders = %v, want [%s]", f, root)
	}
}

func TestPositionEncodingNegotiation(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    workspace.Encoding
	}{
		{nil, workspace.UTF16},
		{[]string{"utf-16"}, workspace.UTF16},
		{[]string{"utf-32", "utf-16"}, workspace.UTF16},
		{[]string{"utf-16", "utf-8"}, workspace.UTF8},
	} {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{})
		caps := map[string]any{"general": map[string]any{"positionEncodings": tc.offered}}
		res, err := ed.Initialize(ctx, "", map[string]any{"capabilities": caps})
		if err != nil {
			t.Fatal(err)
		}
		got := res["capabilities"].(map[string]any)["positionEncoding"]
		if got != string(tc.want) || ed.Server.Encoding() != tc.want {
			t.Errorf("offered %v: negotiated %v (server %v), want %v", tc.offered, got, ed.Server.Encoding(), tc.want)
		}
	}
}

func TestRequestBeforeInitialize(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.newSession"}, nil)
	if c := codeOf(t, err); c != -32002 {
		t.Fatalf("code = %d, want -32002", c)
	}
	// A notification before initialize is dropped, not applied.
	ed.Open(ctx, "file:///early.txt", "x")
	if _, err := ed.Initialize(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	ed.Sync(ctx)
	if _, ok := ed.Server.Buffers().Get("file:///early.txt"); ok {
		t.Error("didOpen before initialize was applied")
	}
}

func TestShutdownExitCodes(t *testing.T) {
	t.Run("shutdown then exit", func(t *testing.T) {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{})
		ed.Initialize(ctx, "", nil)
		if err := ed.Call(ctx, "shutdown", nil, nil); err != nil {
			t.Fatal(err)
		}
		// After shutdown, requests are refused.
		err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "x"}, nil)
		if c := codeOf(t, err); c != jsonrpc2.InvalidRequest {
			t.Errorf("request after shutdown: code %d", c)
		}
		ed.Notify(ctx, "exit", nil)
		if code, err := ed.Wait(ctx); code != 0 || err != nil {
			t.Fatalf("exit code %d, err %v; want 0", code, err)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{})
		ed.Initialize(ctx, "", nil)
		ed.Notify(ctx, "exit", nil)
		if code, _ := ed.Wait(ctx); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
	})
	t.Run("exit before initialize", func(t *testing.T) {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{})
		ed.Notify(ctx, "exit", nil)
		if code, _ := ed.Wait(ctx); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
	})
}

// TestShutdownAnsweredBeforeExit: a client that sends exit and ends its
// input right behind shutdown, without waiting for the answer, still gets
// it (the connection writes nothing once its input has ended, so an
// answer from off the read loop raced the end). The runs repeat to meet
// that race.
func TestShutdownAnsweredBeforeExit(t *testing.T) {
	ctx := testCtx(t)
	in := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
		frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`) + frame(`{"jsonrpc":"2.0","method":"exit"}`)
	for i := range 50 {
		var out strings.Builder
		code, err := rpc.NewServer(rpc.Options{}).Serve(ctx, strings.NewReader(in), &syncWriter{b: &out})
		if code != 0 || err != nil {
			t.Fatalf("run %d: Serve = %d, %v; want 0, nil", i, code, err)
		}
		if !strings.Contains(out.String(), `"id":2,"result":null`) {
			t.Fatalf("run %d: exit came before shutdown's answer: %q", i, out.String())
		}
	}
}

// TestInitializeStartsTheFolderWork: the watcher and the cleaning of
// stale temporary files, which start with initialize's answer, do start.
func TestInitializeStartsTheFolderWork(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	stale := filepath.Join(root, ".main.go.cline-ls-3k9x2a.tmp")
	os.WriteFile(stale, []byte("x"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	// The leftover of a daemon killed mid-write names it: one that has
	// ended.
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(root, "src", fmt.Sprintf(".b.go.cline-ls-%d-9zz.tmp", gone.Process.Pid))
	os.MkdirAll(filepath.Dir(killed), 0o755)
	os.WriteFile(killed, []byte("x"), 0o644)
	os.Chtimes(killed, old, old)
	ed := rpctest.New(t, rpc.Options{})
	if _, err := ed.Initialize(ctx, root, nil); err != nil {
		t.Fatal(err)
	}
	for ed.Server.Watcher() == nil {
		select {
		case <-ctx.Done():
			t.Fatal("the watcher did not start after initialize")
		case <-time.After(10 * time.Millisecond):
		}
	}
	for {
		_, err1 := os.Stat(stale)
		_, err2 := os.Stat(killed)
		if errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the stale temporary file was not removed after initialize")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestEOFEndsCleanly(t *testing.T) {
	ctx := testCtx(t)
	srv := rpc.NewServer(rpc.Options{})
	in := strings.NewReader(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	var out strings.Builder
	code, err := srv.Serve(ctx, in, &syncWriter{b: &out})
	if code != 0 || err != nil {
		t.Fatalf("Serve = %d, %v; want 0, nil", code, err)
	}
	if !strings.Contains(out.String(), `"serverInfo"`) {
		t.Fatalf("no initialize answer before EOF: %q", out.String())
	}
}

func TestErrorCodesNameTheField(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	tests := []struct {
		name   string
		method string
		params any
		code   jsonrpc2.Code
		want   string
	}{
		{"initialize option of wrong type", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"maxTurns": "ten"}}, -32602, "initializationOptions.maxTurns"},
		{"initialize bad mode", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"mode": "turbo"}}, -32602, "initializationOptions.mode"},
		{"initialize bad folder", "initialize", map[string]any{"capabilities": map[string]any{}, "workspaceFolders": []any{map[string]any{"uri": "http://x/y", "name": "x"}}}, -32602, "workspaceFolders[0].uri"},
		{"initialize bad rule", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"rules": []any{map[string]any{"tool": "x", "decision": "maybe"}}}}, -32602, "rules[0].decision"},
		{"initialize bad compactAt", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"context": map[string]any{"compactAt": 1.5}}}, -32602, "initializationOptions.context.compactAt"},
		{"initialize bad contextWindow", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"contextWindow": -1}}}, -32602, "initializationOptions.provider.contextWindow"},
		{"initialize bad streamIdleSeconds", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"streamIdleSeconds": -1}}}, -32602, "initializationOptions.provider.streamIdleSeconds"},
		{"initialize bad maxReplyMB", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"maxReplyMB": 1e12}}}, -32602, "initializationOptions.provider.maxReplyMB"},
		{"initialize bad reasoningEffort", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"reasoningEffort": "max"}}}, -32602, "initializationOptions.provider.reasoningEffort"},
		{"initialize bad api", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"api": "completions"}}}, -32602, "initializationOptions.provider.api"},
		{"initialize bad thinkingBudget", "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"provider": map[string]any{"thinkingBudget": -5}}}, -32602, "initializationOptions.provider.thinkingBudget"},
		{"initialize without params", "initialize", nil, -32602, "params"},
		{"initialize capability of wrong type", "initialize", map[string]any{"capabilities": map[string]any{"general": map[string]any{"positionEncodings": "utf-8"}}}, -32602, "capabilities.general.positionEncodings: expected an array, got string"},
		{"initialize capabilities not an object", "initialize", map[string]any{"capabilities": []any{}}, -32602, "capabilities: expected an object, got array"},
		{"initialize folder uri of wrong type", "initialize", map[string]any{"capabilities": map[string]any{}, "workspaceFolders": []any{map[string]any{"uri": 5}}}, -32602, "workspaceFolders[0].uri: expected a string, got number"},
		{"initialize processId of wrong type", "initialize", map[string]any{"processId": "me", "capabilities": map[string]any{}}, -32602, "processId: expected an integer, got string"},
	}
	for _, tt := range tests {
		err := ed.Call(ctx, tt.method, tt.params, nil)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if c := codeOf(t, err); c != tt.code || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %d %q, want %d mentioning %q", tt.name, c, err, tt.code, tt.want)
		}
	}
	if _, err := ed.Initialize(ctx, "", nil); err != nil {
		t.Fatalf("initialize after bad attempts: %v", err)
	}
	err := ed.Call(ctx, "cline/noSuchThing", map[string]any{}, nil)
	if c := codeOf(t, err); c != -32601 || !strings.Contains(err.Error(), "cline/noSuchThing") {
		t.Errorf("unknown method: %d %v", c, err)
	}
	err = ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": 7}, nil)
	if c := codeOf(t, err); c != -32602 || !strings.Contains(err.Error(), "command") {
		t.Errorf("executeCommand with numeric command: %d %v", c, err)
	}
	err = ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "nope"}, nil)
	if c := codeOf(t, err); c != -32602 || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown command: %d %v", c, err)
	}
}

// TestBadNotificationParamsReported: a notification cannot be answered, so
// bad params are reported as window/logMessage naming the field, and the
// connection goes on.
func TestBadNotificationParamsReported(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, "", nil)
	cases := []struct {
		method string
		params any
		want   string
	}{
		{"textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///a", "version": "one", "text": ""}}, "textDocument.version"},
		{"textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///a", "version": 1}}, "textDocument.text"},
		{"textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///a"}, "contentChanges": []any{}}, "textDocument.version"},
		{"textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///a", "version": 2}, "contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": -1, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}, "text": "x"}}}, "contentChanges[0].range.start.line"},
		{"textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///a", "version": 2}, "contentChanges": []any{map[string]any{"text": 5}}}, "contentChanges.text"},
		{"textDocument/didClose", map[string]any{"textDocument": map[string]any{}}, "textDocument.uri"},
	}
	for _, c := range cases {
		// Only the reports that follow this notification count (two cases
		// name the same field): a round trip behind it has them all, since
		// notifications are handled, and reported, in order.
		before := len(ed.Messages("window/logMessage"))
		ed.Notify(ctx, c.method, c.params)
		ed.Sync(ctx)
		var got []string
		for _, m := range ed.Messages("window/logMessage")[before:] {
			got = append(got, string(m.Params))
		}
		if len(got) != 1 || !strings.Contains(got[0], c.method+": ") || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: logMessages %q, want one naming %s", c.method, got, c.want)
		}
	}
	// Still serving.
	if err := ed.Open(ctx, "file:///ok.txt", "fine"); err != nil {
		t.Fatal(err)
	}
	ed.Sync(ctx)
	if s, ok := ed.Server.Buffers().Get("file:///ok.txt"); !ok || s.Text != "fine" {
		t.Fatal("server stopped mirroring after bad notifications")
	}
}
