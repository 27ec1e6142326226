package rpc_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

var askEdits = map[string]any{"approvals": map[string]any{"edit": "ask"}}

// TestApprovalThroughClineNotification: the preview diff is computed before
// approval and is what the request shows; allow applies the edit,
// reject_once with feedback returns the feedback to the caller and changes
// nothing, allow_always stops asking.
func TestApprovalThroughClineNotification(t *testing.T) {
	ctx := testCtx(t)
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	ed, root := editWorkspace(t, map[string]string{"a.txt": "red\ngreen\n"}, askEdits, caps)
	path := filepath.Join(root, "a.txt")

	var mu sync.Mutex
	answers := []map[string]any{
		{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}, "feedback": "use blue instead"},
		{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}},
	}
	var requests []json.RawMessage
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := 0
		for range answers {
			m, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool {
				return len(ed.Messages("cline/approvalRequest")) > seen
			})
			if err != nil {
				t.Error(err)
				return
			}
			all := ed.Messages("cline/approvalRequest")
			m = all[seen]
			seen++
			var req struct{ ApprovalID string }
			json.Unmarshal(m.Params, &req)
			mu.Lock()
			requests = append(requests, m.Params)
			ans := answers[seen-1]
			mu.Unlock()
			ans["approvalId"] = req.ApprovalID
			if err := ed.Call(ctx, "cline/approvalResponse", ans, nil); err != nil {
				t.Error(err)
			}
		}
	}()

	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "green", "new_text": "yellow"})
	if !r.IsError || !strings.Contains(r.Content, "denied by the user") || !strings.Contains(r.Content, "use blue instead") {
		t.Fatalf("rejected call = %+v", r)
	}
	if readFile(t, path) != "red\ngreen\n" {
		t.Fatal("a rejected edit changed the file")
	}
	r = callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "green", "new_text": "blue"})
	if r.IsError || readFile(t, path) != "red\nblue\n" {
		t.Fatalf("allowed call = %+v, file %q", r, readFile(t, path))
	}
	<-done
	var first struct {
		Diff     string
		ToolCall struct {
			Title string
			Kind  string
		}
		Options []struct{ OptionID, Kind string }
	}
	json.Unmarshal(requests[0], &first)
	if !strings.Contains(first.Diff, "-green") || !strings.Contains(first.Diff, "+yellow") || first.ToolCall.Kind != "edit" || len(first.Options) != 4 {
		t.Errorf("approval request = %s", requests[0])
	}
	// allow_always added a session rule: no third request.
	r = callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "blue", "new_text": "cyan"})
	if r.IsError || len(ed.Messages("cline/approvalRequest")) != 2 {
		t.Fatalf("after allow_always: %+v, %d requests", r, len(ed.Messages("cline/approvalRequest")))
	}
	// Answering an unknown or already answered approval is -32602.
	err := ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": "a1", "outcome": map[string]any{"outcome": "cancelled"}}, nil)
	if c := codeOf(t, err); c != -32602 {
		t.Fatalf("stale approvalId: code %d", c)
	}
	err = ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": "a9", "outcome": map[string]any{"outcome": "selected", "optionId": "maybe"}}, nil)
	if c := codeOf(t, err); c != -32602 || !strings.Contains(err.Error(), "outcome.optionId") {
		t.Fatalf("bad optionId: %v", err)
	}
}

// TestApprovalThroughShowMessageRequest: a stock client with no cline
// capability is asked with window/showMessageRequest; a null answer is a
// rejection.
func TestApprovalThroughShowMessageRequest(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "v1\n"}, askEdits, nil)
	path := filepath.Join(root, "a.txt")
	var answer any // nil: dismissed
	var asked []string
	var mu sync.Mutex
	ed.Handle("window/showMessageRequest", func(_ context.Context, p json.RawMessage) (any, error) {
		var req struct {
			Message string
			Actions []struct{ Title string }
		}
		json.Unmarshal(p, &req)
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Message)
		if len(req.Actions) != 3 {
			t.Errorf("actions = %+v", req.Actions)
		}
		return answer, nil
	})
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "v1", "new_text": "v2"})
	if !r.IsError || !strings.Contains(r.Content, "denied") || readFile(t, path) != "v1\n" {
		t.Fatalf("dismissed prompt: %+v", r)
	}
	mu.Lock()
	answer = map[string]any{"title": "Allow"}
	mu.Unlock()
	r = callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "v1", "new_text": "v2"})
	if r.IsError || readFile(t, path) != "v2\n" {
		t.Fatalf("allowed: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.Contains(asked[0], "+v2") {
		t.Fatalf("messages = %q", asked)
	}
}

// TestUserTypesWhileTheApprovalWaits: the approval's preview was planned
// on the buffer as it was; the user types while the request is open, and
// the edit, once allowed, is planned again on what the buffer holds then
// (the typing kept, the match found where it now is), or fails and
// changes nothing when the typing removed the text it was to replace.
func TestUserTypesWhileTheApprovalWaits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typed   string // inserted at the start of line 2 while the approval waits, or "" to type over the match
		want    string
		wantErr bool
	}{
		{"typed elsewhere", "// typed by the user\n", "package a\n// typed by the user\n\nfunc A() int { return 1 }\n", false},
		{"typed over the match", "", "package a\n\nfunc X() {}\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			const text = "package a\n\nfunc A() {}\n"
			caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
			ed, root := editWorkspace(t, map[string]string{"a.go": text}, askEdits, caps)
			uri := workspace.PathToURI(filepath.Join(root, "a.go"))
			ed.Open(ctx, uri, text)
			ed.Sync(ctx)
			go func() {
				m, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool { return true })
				if err != nil {
					t.Error(err)
					return
				}
				var req struct {
					ApprovalID string
					Diff       string
				}
				json.Unmarshal(m.Params, &req)
				if !strings.Contains(req.Diff, "+func A() int { return 1 }") {
					t.Errorf("preview %q", req.Diff)
				}
				if tc.wantErr {
					// Over the match: "func A() {}" becomes "func X() {}".
					ed.Edit(ctx, uri, rng(2, 5, 2, 6), "X")
				} else {
					ed.Edit(ctx, uri, rng(1, 0, 1, 0), tc.typed)
				}
				ed.Sync(ctx)
				ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
					"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
			}()
			r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.go", "old_text": "func A() {}", "new_text": "func A() int { return 1 }"})
			if r.IsError != tc.wantErr {
				t.Fatalf("result = %+v, want an error: %v", r, tc.wantErr)
			}
			want := tc.want
			if tc.wantErr {
				if !strings.Contains(r.Content, "not found") {
					t.Errorf("result %q does not say the text is gone", r.Content)
				}
			}
			assertBuffer(t, ctx, ed, uri, want)
			if disk := readFile(t, filepath.Join(root, "a.go")); disk != text {
				t.Errorf("the daemon wrote the disk of an open file: %q", disk)
			}
		})
	}
}

// TestWaitingWakesAStrandingClient: Eglot 1.9 (no clientInfo) can leave
// a request that arrived just behind the answer to its own blocking
// request unread until more output comes. While the daemon waits for an
// answer, it writes a log message now and then, which is that output: the
// client here answers only once one has come.
func TestWaitingWakesAStrandingClient(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "v1\n"}, askEdits, nil)
	ed.Handle("window/showMessageRequest", func(ctx context.Context, _ json.RawMessage) (any, error) {
		if _, err := ed.Await(ctx, "window/logMessage", func(p json.RawMessage) bool {
			return strings.Contains(string(p), "waiting for the editor's answer to window/showMessageRequest")
		}); err != nil {
			return nil, err
		}
		return map[string]any{"title": "Allow"}, nil
	})
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "v1", "new_text": "v2"})
	if r.IsError || readFile(t, filepath.Join(root, "a.txt")) != "v2\n" {
		t.Fatalf("allowed after the wake: %+v", r)
	}
}
