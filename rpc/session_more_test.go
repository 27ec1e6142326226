package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// fakeOpenAI is an OpenAI-compatible chat completions server on loopback.
// Each request gets the next scripted reply; a reply may hang after its
// first chunk until the client goes away, to rehearse cancel mid-stream.
type fakeOpenAI struct {
	*httptest.Server
	mu      sync.Mutex
	replies []fakeReply
	keys    []string // Authorization headers seen
	models  []string // the model each request named
	listed  []string // the models /models lists; nil: no such endpoint
	gone    chan struct{}
}

type fakeReply struct {
	text  []string
	hang  bool
	calls []fakeCall
}

type fakeCall struct{ id, name, args string }

func newFakeOpenAI(t *testing.T, replies ...fakeReply) *fakeOpenAI {
	f := &fakeOpenAI{replies: replies, gone: make(chan struct{}, 16)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost { // a models listing
			f.mu.Lock()
			ids := f.listed
			f.mu.Unlock()
			if ids == nil {
				http.NotFound(w, r)
				return
			}
			var data []any
			for _, id := range ids {
				data = append(data, map[string]any{"id": id, "object": "model"})
			}
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
			return
		}
		var body struct{ Model string }
		json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get("Authorization"))
		f.models = append(f.models, body.Model)
		if len(f.replies) == 0 {
			f.mu.Unlock()
			http.Error(w, `{"error":{"message":"no more replies"}}`, 500)
			return
		}
		rep := f.replies[0]
		f.replies = f.replies[1:]
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		for _, t := range rep.text {
			chunk(map[string]any{"content": t}, nil)
			if rep.hang {
				<-r.Context().Done()
				f.gone <- struct{}{}
				return
			}
		}
		for i, c := range rep.calls {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}}}}, nil)
		}
		finish := "stop"
		if len(rep.calls) > 0 {
			finish = "tool_calls"
		}
		chunk(map[string]any{}, finish)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(f.Close)
	return f
}

func openAISettings(url, state string) map[string]any {
	return map[string]any{
		"provider": map[string]any{"name": "openai-compatible", "model": "test-model", "baseUrl": url + "/v1", "apiKeyEnv": "TEST_API_KEY", "nativeTools": true},
		"stateDir": state,
	}
}

func newSessionIn(t *testing.T, ctx context.Context, ed *rpctest.Editor, cwd string) string {
	t.Helper()
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": cwd}, &created); err != nil {
		t.Fatal(err)
	}
	return created.SessionID
}

func promptText(ctx context.Context, ed *rpctest.Editor, id, text string) (string, error) {
	var res struct{ StopReason string }
	err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}, &res)
	return res.StopReason, err
}

// TestCancelDuringModelStream: session/cancel while the model is streaming
// closes the stream (the server sees the client leave) and the prompt
// returns "cancelled".
func TestCancelDuringModelStream(t *testing.T) {
	ctx := testCtx(t)
	fake := newFakeOpenAI(t, fakeReply{text: []string{"Thinking about it"}, hang: true})
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": openAISettings(fake.URL, t.TempDir())})
	id := newSessionIn(t, ctx, ed, root)
	done := make(chan string, 1)
	go func() {
		stop, err := promptText(ctx, ed, id, "start")
		if err != nil {
			t.Error(err)
		}
		done <- stop
	}()
	if _, err := ed.Await(ctx, "session/update", func(p json.RawMessage) bool { return strings.Contains(string(p), "Thinking about it") }); err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
	select {
	case stop := <-done:
		if stop != "cancelled" {
			t.Fatalf("stopReason = %q", stop)
		}
	case <-ctx.Done():
		t.Fatal("prompt did not return after cancel")
	}
	select {
	case <-fake.gone:
	case <-ctx.Done():
		t.Fatal("the model stream was not closed")
	}
}

// TestAPIKeyNeverLeaks plants a key, has the model echo it, and greps every
// notification, the session file and the log for it.
func TestAPIKeyNeverLeaks(t *testing.T) {
	ctx := testCtx(t)
	const key = "sk-planted-0123456789abcdef"
	fake := newFakeOpenAI(t,
		fakeReply{text: []string{"Your key is " + key + ", right?"}},
	)
	root, state := t.TempDir(), t.TempDir()
	logPath := filepath.Join(t.TempDir(), "daemon.log")
	logFile, _ := os.Create(logPath)
	defer logFile.Close()
	ed := rpctest.New(t, rpc.Options{
		Logger: slogTo(logFile),
		Getenv: func(k string) string {
			if k == "TEST_API_KEY" {
				return key
			}
			return ""
		},
	})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": openAISettings(fake.URL, state)})
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "what is my key?"); err != nil {
		t.Fatal(err)
	}
	if len(fake.keys) != 1 || fake.keys[0] != "Bearer "+key {
		t.Fatalf("the provider did not receive the key: %q", fake.keys)
	}
	for _, m := range ed.Messages("") {
		if strings.Contains(string(m.Params), key) {
			t.Errorf("%s carries the key: %s", m.Method, m.Params)
		}
	}
	if !strings.Contains(agentText(updates(ed, id)), "[redacted]") {
		t.Errorf("the echoed key was not redacted: %q", agentText(updates(ed, id)))
	}
	filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("session file %s carries the key", p)
			}
		}
		return nil
	})
	if b, _ := os.ReadFile(logPath); strings.Contains(string(b), key) {
		t.Errorf("the log carries the key")
	}
}

// TestRedactionFollowsSettings: the key redaction scrubs is the one the
// settings in force name, so after didChangeConfiguration names another
// variable (one whose name does not mark it as a key), that variable's
// value is scrubbed from what the client is sent.
func TestRedactionFollowsSettings(t *testing.T) {
	ctx := testCtx(t)
	const first, second = "first-secret-0123456789", "second-secret-9876543210"
	fake := newFakeOpenAI(t, fakeReply{text: []string{"Keys: " + first + " and " + second + "."}})
	root, state := t.TempDir(), t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		switch k {
		case "FIRST_TOKEN":
			return first
		case "SECOND_TOKEN":
			return second
		}
		return ""
	}})
	settings := openAISettings(fake.URL, state)
	settings["provider"].(map[string]any)["apiKeyEnv"] = "FIRST_TOKEN"
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": settings})
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"provider": map[string]any{"apiKeyEnv": "SECOND_TOKEN"}}})
	ed.Sync(ctx)
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "what are my keys?"); err != nil {
		t.Fatal(err)
	}
	if len(fake.keys) != 1 || fake.keys[0] != "Bearer "+second {
		t.Fatalf("the provider received %q, want the second key", fake.keys)
	}
	text := agentText(updates(ed, id))
	if strings.Contains(text, second) || !strings.Contains(text, "[redacted]") {
		t.Errorf("the key the changed settings name was not redacted: %q", text)
	}
}

// TestTwoConcurrentSessions runs two sessions' prompts at once; each gets
// its own replies and updates, and a second prompt to a session whose
// turn runs is refused, not queued or interleaved. The model server holds
// every request until the test lets go, so both turns are in flight
// together (a daemon that ran one session's turn after the other's would
// never send the second request).
func TestTwoConcurrentSessions(t *testing.T) {
	ctx := testCtx(t)
	var (
		mu       sync.Mutex
		asked    []string // the prompt each model request carried
		arrived  = make(chan struct{}, 8)
		release  = make(chan struct{})
		promptRe = regexp.MustCompile(`hello [^"\\]+`) // the user's text in the request's JSON
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var prompt string
		if all := promptRe.FindAllString(string(b), -1); len(all) > 0 {
			prompt = all[len(all)-1] // the last message, the prompt's
		}
		mu.Lock()
		asked = append(asked, prompt)
		mu.Unlock()
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, delta := range []map[string]any{{"content": "reply to " + prompt}, {}} {
			finish := any(nil)
			if len(delta) == 0 {
				finish = "stop"
			}
			c, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	free := sync.OnceFunc(func() { close(release) })
	defer free() // on a failure too, before srv.Close, which waits for the held requests
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": openAISettings(srv.URL, t.TempDir())})
	a, b := newSessionIn(t, ctx, ed, root), newSessionIn(t, ctx, ed, root)
	var wg sync.WaitGroup
	for _, id := range []string{a, b} {
		wg.Go(func() {
			if stop, err := promptText(ctx, ed, id, "hello "+id); err != nil || stop != "end_turn" {
				t.Errorf("%s: %q %v", id, stop, err)
			}
		})
	}
	for range 2 {
		select {
		case <-arrived:
		case <-ctx.Done():
			t.Fatal("the two sessions' turns did not reach the model together")
		}
	}
	// A's turn is held at the model: another prompt to A is refused.
	_, err := promptText(ctx, ed, a, "hello again")
	if c := codeOf(t, err); c != -32602 || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a second prompt while the turn runs: %d %v, want -32602 saying a prompt is already running", c, err)
	}
	free()
	wg.Wait()
	for _, id := range []string{a, b} {
		if got := agentText(updates(ed, id)); got != "reply to hello "+id {
			t.Errorf("%s text = %q", id, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Errorf("the model was asked %d times (%q), want once per session: the refused prompt asked it too", len(asked), asked)
	}
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestCancelDuringRunningCommand: cancelling a turn while run_commands is
// running kills the command's whole process group: no orphan is left.
func TestCancelDuringRunningCommand(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root := t.TempDir()
	pidFile := filepath.Join(root, "child.pid")
	tr := transcript(t, reply(call("c1", "run_commands", map[string]any{
		"commands": []string{"sleep 300 & echo $! > " + pidFile + "; echo started; wait"}, "timeout": 600})))
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"execute": "allow"}}})
	id := newSessionIn(t, ctx, ed, root)
	done := make(chan string, 1)
	go func() {
		stop, err := promptText(ctx, ed, id, "run it")
		if err != nil {
			t.Error(err)
		}
		done <- stop
	}()
	pid := waitPID(t, ctx, pidFile)
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
	if stop := <-done; stop != "cancelled" {
		t.Fatalf("stopReason = %q", stop)
	}
	for syscall.Kill(pid, 0) == nil {
		select {
		case <-ctx.Done():
			t.Fatalf("the command's child %d outlived the cancel", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitPID waits until a command has written a process id to file, and
// returns it.
func waitPID(t *testing.T, ctx context.Context, file string) int {
	t.Helper()
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(file); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the command did not start: no process id in %s", file)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return pid
}

// TestProgressReportsTheTurn: a client with window.workDoneProgress sees
// the turn begin, what the agent says, and the end, and its cancel button
// cancels the turn.
func TestProgressReportsTheTurn(t *testing.T) {
	ctx := testCtx(t)
	fake := newFakeOpenAI(t, fakeReply{text: []string{"working"}, hang: true})
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(string) string { return "" }})
	ed.Handle("window/workDoneProgress/create", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": openAISettings(fake.URL, t.TempDir())})
	id := newSessionIn(t, ctx, ed, root)
	done := make(chan string, 1)
	go func() {
		stop, _ := promptText(ctx, ed, id, "long task")
		done <- stop
	}()
	m, err := ed.Await(ctx, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"begin"`) })
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Token string
		Value struct{ Title string }
	}
	json.Unmarshal(m.Params, &p)
	if p.Value.Title != "cline: long task" {
		t.Fatalf("begin = %s", m.Params)
	}
	// What the agent says while the turn runs is reported under the token.
	if _, err := ed.Await(ctx, "$/progress", func(m json.RawMessage) bool {
		return strings.Contains(string(m), `"report"`) && strings.Contains(string(m), `"working"`) && strings.Contains(string(m), p.Token)
	}); err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "window/workDoneProgress/cancel", map[string]any{"token": p.Token})
	if stop := <-done; stop != "cancelled" {
		t.Fatalf("stop = %q", stop)
	}
	if _, err := ed.Await(ctx, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"end"`) }); err != nil {
		t.Fatal(err)
	}
}
