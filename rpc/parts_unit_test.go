package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// The parts are tested here through their own fields, without a
// connection: what each sends or forwards is what the fakes record.

type notified struct {
	method string
	params any
}

type fakeNotifier struct{ got []notified }

func (f *fakeNotifier) Notify(_ context.Context, method string, params any) error {
	f.got = append(f.got, notified{method, params})
	return nil
}

func TestToolCallsReportEdits(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "a.go")
	if err := os.WriteFile(abs, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewServer(Options{})
	s.folders.Add(workspace.Folder{URI: workspace.PathToURI(dir), Path: dir})
	s.foldersChanged()
	t.Cleanup(s.stopWorkspace)
	f := s.delivery.Files("s1", dir)
	s.buffers.Open("file:///open/a.go", abs, "go", 7, "package a\n")
	if _, err := f.Resolve("a.go"); err != nil {
		t.Fatal(err)
	}
	edits := []tools.FileEdit{{Path: "a.go", Diff: "-x\n+y", Added: 1, Removed: 1}}

	for _, tc := range []struct {
		how      diffReport
		diffs    int
		logLines int
	}{{diffsInContent, 0, 0}, {diffsAsCline, 1, 0}, {diffsAsLog, 0, 1}} {
		n := &fakeNotifier{}
		var logged []string
		p := &toolCalls{buffers: s.buffers, client: n,
			diffs:  func() diffReport { return tc.how },
			logMsg: func(_ context.Context, _ wire.MessageType, msg string) { logged = append(logged, msg) }}
		p.reportEdits(context.Background(), "s1", f, "c1", edits)
		if len(n.got) != tc.diffs || len(logged) != tc.logLines {
			t.Fatalf("report %d: %d notifications, %d log lines; want %d, %d", tc.how, len(n.got), len(logged), tc.diffs, tc.logLines)
		}
		if tc.how == diffsAsCline {
			d, ok := n.got[0].params.(wire.DiffParams)
			if n.got[0].method != methodClineDiff || !ok {
				t.Fatalf("sent %s %T, want %s wire.DiffParams", n.got[0].method, n.got[0].params, methodClineDiff)
			}
			// An open buffer is named as the editor opened it, at its version.
			if d.URI != "file:///open/a.go" || d.Version == nil || *d.Version != 7 || d.ToolCallID != "c1" || d.Added != 1 {
				t.Errorf("cline/diff = %+v", d)
			}
		}
		if tc.how == diffsAsLog && logged[0] != "-x\n+y" {
			t.Errorf("logged %q, want the diff", logged[0])
		}
	}
}

func TestToolCallsToolSession(t *testing.T) {
	p := &toolCalls{
		session:       func(id string) (*liveSession, error) { return nil, invalidParams("sessionId: no session %q", id) },
		editorSession: func(mode, cwd string) (*liveSession, error) { return nil, errors.New("no provider") },
		mode:          func() string { return "act" },
		folders:       &workspace.Folders{},
	}
	if _, err := p.toolSession("", "no-such-mode"); err == nil || !strings.Contains(err.Error(), `unknown mode "no-such-mode"`) {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := p.toolSession("x", ""); err == nil || !strings.Contains(err.Error(), "sessionId") {
		t.Errorf("missing session: %v", err)
	}
	// The editor's own session failing to open is ours, not the caller's.
	_, err := p.toolSession("", "")
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.InternalError || !strings.Contains(je.Message, "tools unavailable") {
		t.Errorf("editor session: %v", err)
	}
}

func TestCommandRunnerForwards(t *testing.T) {
	var got []string
	rec := func(name string) func([]byte) (any, error) {
		return func(raw []byte) (any, error) { got = append(got, name+" "+string(raw)); return wire.Empty{}, nil }
	}
	c := &commandRunner{
		newSession: func(cwd, mode string, _ []json.RawMessage) (wire.NewSessionResult, error) {
			got = append(got, "new "+mode)
			return wire.NewSessionResult{SessionID: "s9"}, nil
		},
		prompt: func(_ jsonrpc2.ID, id, mode, text string) (any, error) {
			got = append(got, "prompt "+id+" "+text)
			return wire.Empty{}, nil
		},
		setMode: rec("setMode"),
		cancel:  func(raw []byte) error { got = append(got, "cancel "+string(raw)); return nil },
		compact: func(_ context.Context, _ *jsonrpc2.Request, raw []byte) (any, error) {
			got = append(got, "compact "+string(raw))
			return wire.Empty{}, nil
		},
		fork: rec("fork"),
		checkpoints: func(_ context.Context, _ *jsonrpc2.Request, command string, args []json.RawMessage) (any, error) {
			got = append(got, command)
			return wire.Empty{}, nil
		},
	}
	run := func(command string, arg any) (any, error) {
		params := map[string]any{"command": command}
		if arg != nil {
			params["arguments"] = []any{arg}
		}
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		return c.execute(context.Background(), &jsonrpc2.Request{}, raw)
	}
	res, err := run(commandNewSession, map[string]any{"mode": "plan"})
	if err != nil || res.(wire.SessionIDResult).SessionID != "s9" {
		t.Fatalf("newSession: %v %v", res, err)
	}
	for _, cmd := range []struct {
		name string
		arg  any
	}{
		{commandPrompt, map[string]any{"sessionId": "s1", "text": "hi"}},
		{commandSetMode, map[string]any{"sessionId": "s1", "modeId": "plan"}},
		{commandCancel, map[string]any{"sessionId": "s1"}},
		{commandCompact, map[string]any{"sessionId": "s1"}},
		{commandForkSession, map[string]any{"sessionId": "s1", "atTurn": 2}},
		{commandCheckpoints, map[string]any{"sessionId": "s1"}},
	} {
		if _, err := run(cmd.name, cmd.arg); err != nil {
			t.Fatalf("%s: %v", cmd.name, err)
		}
	}
	want := []string{"new plan", "prompt s1 hi", `setMode {"sessionId":"s1","modeId":"plan"}`, `cancel {"sessionId":"s1"}`,
		`compact {"sessionId":"s1"}`, `fork {"sessionId":"s1","atTurn":2}`, commandCheckpoints}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("forwarded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A bad argument is named by its place in arguments.
	_, err = run(commandPrompt, map[string]any{"sessionId": 3})
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || !strings.Contains(je.Message, "arguments[0].sessionId") {
		t.Errorf("bad argument: %v", err)
	}
	if _, err := run("cline.nope", nil); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
}

func TestTextSyncCodeActionsClosedDocument(t *testing.T) {
	ts := textSync{buffers: workspace.NewBuffers(), folders: &workspace.Folders{}, enc: func() workspace.Encoding { return workspace.UTF16 }}
	res, err := ts.codeActions([]byte(`{"textDocument":{"uri":"file:///x.go"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"context":{"diagnostics":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := res.([]codeActionWire); !ok || len(a) != 0 {
		t.Errorf("a document not open: %#v, want no actions", res)
	}
	if _, err := ts.codeActions([]byte(`{"textDocument":{}}`)); err == nil || !strings.Contains(err.Error(), "textDocument.uri") {
		t.Errorf("no uri: %v", err)
	}
}
