package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// windowServer is an OpenAI-compatible server with a context window: it
// counts a request's tokens as its body's bytes / 4 and refuses, as
// vLLM does, any request over the window. Replies come from step, given
// the number of the chat request (summarising requests are answered with
// a summary and not counted); force makes the server refuse request n
// as too long whatever its size.
type windowServer struct {
	*httptest.Server
	window int
	step   func(n int) map[string]any // a delta: content or tool_calls
	force  func(n int) bool

	mu        sync.Mutex
	chats     [][]byte // chat request bodies, in order
	summaries int
	over      []int // sizes of over-window requests
}

const summaryMark = "You compact the history"

func newWindowServer(t *testing.T, window int, step func(n int) map[string]any) *windowServer {
	ws := &windowServer{window: window, step: step, force: func(int) bool { return false }}
	ws.Server = httptest.NewServer(http.HandlerFunc(ws.serve))
	t.Cleanup(ws.Close)
	return ws
}

func (ws *windowServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost { // the daemon's models listing: none here
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	tokens := len(body) / 4
	summary := strings.Contains(string(body), summaryMark)
	ws.mu.Lock()
	n := len(ws.chats)
	if summary {
		ws.summaries++
	} else {
		ws.chats = append(ws.chats, body)
	}
	forced := !summary && ws.force(n)
	if tokens > ws.window {
		ws.over = append(ws.over, tokens)
	}
	ws.mu.Unlock()
	if tokens > ws.window || forced {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens.", ws.window, tokens),
			"type":    "BadRequestError", "code": 400}})
		return
	}
	delta := map[string]any{"content": fmt.Sprintf("## Task\nThe user's task (summary %d).\n## Decisions\nKeep going.\n## Files\nSeveral read.\n## Commands\nNone.\n## Open todos and plan\nContinue.", ws.summaries)}
	if !summary {
		delta = ws.step(n)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	finish := "stop"
	if delta["tool_calls"] != nil {
		finish = "tool_calls"
	}
	chunk(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	chunk(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (ws *windowServer) setForce(f func(n int) bool) {
	ws.mu.Lock()
	ws.force = f
	ws.mu.Unlock()
}

func (ws *windowServer) chatBodies() [][]byte {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.Clone(ws.chats)
}

func toolCall(n int, name string, args any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call%d", n), "type": "function",
		"function": map[string]any{"name": name, "arguments": string(b)}}}}
}

// longTask is the model's side of a long session: it reads big files,
// writes a file every tenth request, updates its plan every 40th, and
// ends at request end.
func longTask(end int) func(n int) map[string]any {
	return func(n int) map[string]any {
		switch {
		case n == end:
			return map[string]any{"content": "All done."}
		case n%40 == 1:
			return toolCall(n, "update_plan", map[string]any{"entries": []any{
				map[string]any{"content": "port the store to JSONL", "status": "in_progress"},
				map[string]any{"content": fmt.Sprintf("check milestone %d", n/40), "status": "pending"}}})
		case n%10 == 5:
			return toolCall(n, "write_to_file", map[string]any{"path": editedPath(n), "content": fmt.Sprintf("version %d\n", n)})
		}
		return toolCall(n, "read_files", map[string]any{"files": []any{map[string]any{"path": fmt.Sprintf("big%d.txt", n%4)}}})
	}
}

// logCompactionTimes logs how long the session's compactions took, as
// their records say (the fake model's round trip included).
func logCompactionTimes(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var us []int
	for _, line := range strings.Split(string(data), "\n") {
		var rec struct {
			Type       string
			Compaction struct{ Micros int }
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == "compaction" {
			us = append(us, rec.Compaction.Micros)
		}
	}
	if len(us) == 0 {
		t.Fatal("no compaction records in the session file")
	}
	slices.Sort(us)
	t.Logf("%d compaction records; time per compaction: median %d µs, max %d µs", len(us), us[len(us)/2], us[len(us)-1])
}

func editedPath(n int) string { return fmt.Sprintf("out/step%03d.txt", n) }

func windowEditor(t *testing.T, ctx context.Context, url, root, state string) *rpctest.Editor {
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	opts := openAISettings(url, state)
	opts["maxTurns"] = 400
	opts["approvals"] = map[string]any{"edit": "allow", "read": "allow"}
	opts["provider"].(map[string]any)["contextWindow"] = 32768
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	return ed
}

// bigFiles writes the files the long task reads: 20 to 38 KB of text.
func bigFiles(t *testing.T, root string) {
	for i := range 4 {
		var b strings.Builder
		for line := 0; b.Len() < 20000+i*6000; line++ {
			fmt.Fprintf(&b, "func f%d_%d(x int) int { return x*%d + %d } // file %d\n", i, line, line, i, i)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("big%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "out"), 0o755)
}

// TestLongSessionStaysInsideTheWindow runs 300 model requests whose tool
// outputs are 20–38 KB against a 32k-token window: compaction keeps every
// request under the window, the last request still holds the user's
// request, every written file's path and the plan, and a second daemon
// loads the session and goes on from the compacted view.
func TestLongSessionStaysInsideTheWindow(t *testing.T) {
	t.Parallel()
	// A guard against hangs only: 300 requests under -race on a loaded
	// machine take longer than testCtx's.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const requests = 300
	root, state := t.TempDir(), t.TempDir()
	bigFiles(t, root)
	task := longTask(requests - 1)
	ws := newWindowServer(t, 32768, func(n int) map[string]any {
		if n < requests {
			return task(n)
		}
		// The second daemon's turn: one more write, then done.
		if n == requests {
			return toolCall(n, "write_to_file", map[string]any{"path": editedPath(n), "content": "last\n"})
		}
		return map[string]any{"content": "Docs updated."}
	})
	const request = "Port the session store to JSONL; keep every test green."
	ed := windowEditor(t, ctx, ws.URL, root, state)
	id := newSessionIn(t, ctx, ed, root)
	stop, err := promptText(ctx, ed, id, request)
	if err != nil || stop != "end_turn" {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	bodies := ws.chatBodies()
	if len(bodies) != requests {
		t.Fatalf("%d chat requests, want %d", len(bodies), requests)
	}
	if len(ws.over) > 0 {
		t.Fatalf("%d requests over the window (tokens: %v)", len(ws.over), ws.over)
	}
	if ws.summaries == 0 {
		t.Fatal("never compacted")
	}
	sizes := make([]int, len(bodies))
	for i, b := range bodies {
		sizes[i] = len(b)
	}
	slices.Sort(sizes)
	t.Logf("%d requests, %d compactions; request bytes: max %d, median %d (window %d bytes)",
		len(bodies), ws.summaries, sizes[len(sizes)-1], sizes[len(sizes)/2], 4*32768)
	var edited []string
	for n := 5; n < requests-1; n += 10 {
		edited = append(edited, editedPath(n))
	}
	checkCarries := func(what string, body []byte, wants ...string) {
		t.Helper()
		var req struct {
			Messages []any `json:"messages"`
		}
		json.Unmarshal(body, &req)
		text := fmt.Sprint(req.Messages) // contents and call arguments, JSON escapes undone
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not carry %q", what, w)
			}
		}
	}
	checkCarries("the last request", bodies[len(bodies)-1], append([]string{request, "port the store to JSONL", "check milestone 7"}, edited...)...)
	var compactions int
	for _, m := range ed.Messages("session/update") {
		if strings.Contains(string(m.Params), `"sessionUpdate":"compaction"`) {
			compactions++
		}
	}
	if compactions != ws.summaries {
		t.Errorf("%d compaction updates for %d summaries", compactions, ws.summaries)
	}
	ed.Shutdown(ctx)
	logCompactionTimes(t, filepath.Join(state, "sessions", id+".jsonl"))

	// A second daemon loads the session and continues from the compacted view.
	ed2 := windowEditor(t, ctx, ws.URL, root, state)
	if err := ed2.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": root}, nil); err != nil {
		t.Fatal(err)
	}
	const next = "Now update the docs too."
	if stop, err := promptText(ctx, ed2, id, next); err != nil || stop != "end_turn" {
		t.Fatalf("prompt after load = %q, %v", stop, err)
	}
	bodies = ws.chatBodies()
	first := bodies[requests]
	if len(first)/4 > 32768 {
		t.Errorf("the first request after load has %d tokens", len(first)/4)
	}
	checkCarries("the first request after load", first, append([]string{next, "port the store to JSONL"}, edited...)...)
	checkCarries("the last request after load", bodies[len(bodies)-1], editedPath(requests))
	if len(ws.over) > 0 {
		t.Fatalf("requests over the window after load: %v", ws.over)
	}
}

// TestContextLengthErrorOverTheWire: a server that refuses one request as
// too long gets it again, compacted, and the turn ends normally; one that
// refuses the retry too fails the turn with its error, and the session
// takes the next prompt.
func TestContextLengthErrorOverTheWire(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir() // no big files: only the forced errors compact
	task := longTask(12)
	ws := newWindowServer(t, 32768, task)
	ws.setForce(func(n int) bool { return n == 6 })
	ed := windowEditor(t, ctx, ws.URL, root, state)
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "go"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if ws.summaries != 1 || len(ws.chatBodies()) != 13 {
		t.Fatalf("%d summaries and %d chat requests, want 1 and 13 (one refused)", ws.summaries, len(ws.chatBodies()))
	}

	ws2 := newWindowServer(t, 32768, func(n int) map[string]any {
		if n >= 20 {
			return map[string]any{"content": "fine"}
		}
		return task(n)
	})
	ws2.setForce(func(n int) bool { return n == 4 || n == 5 })
	ed2 := windowEditor(t, ctx, ws2.URL, root, t.TempDir())
	id2 := newSessionIn(t, ctx, ed2, root)
	_, err := promptText(ctx, ed2, id2, "go")
	if err == nil || !strings.Contains(err.Error(), "maximum context length") {
		t.Fatalf("prompt err = %v, want the server's context-length error", err)
	}
	if n := len(ws2.chatBodies()); n != 6 {
		t.Errorf("%d chat requests, want 4, the refused one and one retry", n)
	}
	ws2.mu.Lock()
	ws2.force = func(int) bool { return false }
	for len(ws2.chats) < 20 {
		ws2.chats = append(ws2.chats, nil) // skip the script to its end
	}
	ws2.mu.Unlock()
	if stop, err := promptText(ctx, ed2, id2, "again"); err != nil || stop != "end_turn" {
		t.Fatalf("next prompt = %q, %v", stop, err)
	}
}

// TestCompactMethodsAndUsageShapes: cline/compact and the cline.compact
// command answer {before, after}, a compaction update goes out, and
// usage_update carries the reply's counts, the turn's and the session's
// totals and the context.
func TestCompactMethodsAndUsageShapes(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	bigFiles(t, root)
	ws := newWindowServer(t, 32768, longTask(3))
	ed := windowEditor(t, ctx, ws.URL, root, state)
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "read a little"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	var usage struct {
		Update struct {
			InputTokens, OutputTokens int
			Turn, Session             struct{ InputTokens, OutputTokens int }
			Context                   struct{ Used, Size int }
		}
	}
	var usages int
	for _, m := range ed.Messages("session/update") {
		if strings.Contains(string(m.Params), `"usage_update"`) {
			usages++
			json.Unmarshal(m.Params, &usage)
		}
	}
	u := usage.Update
	if usages != 4 || u.Turn.InputTokens < u.InputTokens || u.Session.InputTokens != u.Turn.InputTokens ||
		u.Context.Size != 32768 || u.Context.Used != u.InputTokens+u.OutputTokens || u.OutputTokens != 20 {
		t.Errorf("%d usage updates, last %+v", usages, u)
	}

	var res struct{ Before, After int }
	if err := ed.Call(ctx, "cline/compact", map[string]any{"sessionId": id}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Before <= 0 || res.After >= res.Before {
		t.Errorf("cline/compact = %+v", res)
	}
	if _, err := ed.Await(ctx, "session/update", func(p json.RawMessage) bool { return strings.Contains(string(p), `"sessionUpdate":"compaction"`) }); err != nil {
		t.Fatal(err)
	}
	var cmd map[string]int
	if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.compact", "arguments": []any{map[string]any{"sessionId": id}}}, &cmd); err != nil {
		t.Fatal(err)
	}
	if _, ok := cmd["before"]; !ok || cmd["after"] > cmd["before"] {
		t.Errorf("cline.compact = %v", cmd)
	}
	err := ed.Call(ctx, "cline/compact", map[string]any{"sessionId": "nope"}, nil)
	if code := codeOf(t, err); code != -32602 {
		t.Errorf("unknown session: code %d (%v)", code, err)
	}
}

// TestACPUsageUpdate: in the ACP dialect usage_update is the schema's
// UsageUpdate, with the window set in the config file.
func TestACPUsageUpdate(t *testing.T) {
	ctx := testCtx(t)
	schema := acpSchema(t)
	root, config := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
	os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), []byte(`{"provider":{"contextWindow":20000},"context":{"compactAt":0.7}}`), 0o644)
	ws := newWindowServer(t, 32768, func(int) map[string]any { return map[string]any{"content": "Hello."} })
	c := &acpClient{files: map[string]string{}}
	conn, wire, wireMu, sent := acpDaemon(t, c, "CLINE_LS_PROVIDER=openai-compatible", "CLINE_LS_MODEL=m", "CLINE_LS_BASE_URL="+ws.URL+"/v1",
		"XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+config)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	var got *acp.SessionUsageUpdate
	for _, u := range c.updates {
		if u.Update.UsageUpdate != nil {
			got = u.Update.UsageUpdate
		}
	}
	c.mu.Unlock()
	body := ws.chatBodies()[0]
	if got == nil || got.Size != 20000 || got.Used != len(body)/4+20 || got.Cost != nil {
		t.Fatalf("usage update = %+v (request of %d tokens)", got, len(body)/4)
	}
	checkWire(t, schema, wire, wireMu, sent, 1)
}
