package mcpbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/tools"
)

// Tests of the MCP client beyond what the SDK's well-behaved servers show:
// servers that misbehave (the client must fail with a clear error, never
// hang, and leave no goroutine behind), the server's own requests, list
// changes over HTTP, and every kind of content.

// hostileLogEnv names a file the hostile stdio server appends each
// message it reads to.
const hostileLogEnv = "MCPBRIDGE_TEST_HOSTILE_LOG"

// hostileTools is what the hostile servers list, over two pages.
var hostileTools = []string{
	`{"tools":[{"name":"one","inputSchema":{"type":"object"}}],"nextCursor":"page2"}`,
	`{"tools":[{"name":"two","inputSchema":{"type":"object"}}]}`,
}

// The shapes the hostile servers read and write; the client's own are
// the SDK's.
type cursorParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type mcpTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type listToolsResult struct {
	Tools      []mcpTool `json:"tools"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

const hostileInit = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`

// hostileAnswer is the answer a well-behaved server would give to a
// request; "" for tools/call, which each mode answers its own way.
func hostileAnswer(mode, method string, params json.RawMessage) string {
	switch method {
	case "initialize":
		if mode == "silentinit" {
			return ""
		}
		if mode == "oldversion" {
			return strings.Replace(hostileInit, "2025-06-18", "1999-01-01", 1)
		}
		return hostileInit
	case "tools/list":
		if mode == "silentlist" {
			return ""
		}
		if mode == "wide" {
			return wideToolsPage(params)
		}
		if mode == "loopcursor" {
			return `{"tools":[],"nextCursor":"again"}`
		}
		var p cursorParams
		_ = json.Unmarshal(params, &p)
		if p.Cursor == "page2" {
			return hostileTools[1]
		}
		return hostileTools[0]
	}
	return ""
}

// wideToolsPage is a page of the 1,000 tools, 2 MB of descriptions, that
// the wide server lists: ten pages of 100.
func wideToolsPage(params json.RawMessage) string {
	var p cursorParams
	_ = json.Unmarshal(params, &p)
	page, _ := strconv.Atoi(p.Cursor)
	var res listToolsResult
	for i := range 100 {
		n := page*100 + i
		res.Tools = append(res.Tools, mcpTool{Name: fmt.Sprintf("tool%04d", n), Description: strings.Repeat("describes ", 200), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	if page < 9 {
		res.NextCursor = strconv.Itoa(page + 1)
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// runHostileServer is a stdio MCP server written by hand, so that it can
// break the protocol in the way mode says when a tool is called.
func runHostileServer(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	var log *os.File
	if p := os.Getenv(hostileLogEnv); p != "" {
		log, _ = os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	}
	asked := map[string]string{} // mode asks: the client's answers, by our request's id
	var pendingCall json.RawMessage
	for in.Scan() {
		if log != nil {
			fmt.Fprintf(log, "%s\n", in.Bytes())
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params json.RawMessage
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		if m.Method == "" {
			// An answer to our requests (mode asks): the ping's result
			// and the code refusing roots/list, in whichever order the
			// client sends them (it answers requests side by side); the
			// call is answered once both are in.
			switch string(m.ID) {
			case `"sample"`:
				said, _ := json.Marshal(fmt.Sprintf("%+v", m.Error))
				send(`{"jsonrpc":"2.0","id":` + string(pendingCall) + `,"result":{"content":[{"type":"text","text":` + string(said) + `}]}}`)
				continue
			case `"ping"`:
				asked["ping"] = "ping:" + string(m.Result)
			case `"roots"`:
				asked["roots"] = "roots:none"
				if m.Error != nil {
					asked["roots"] = fmt.Sprintf("roots:%d", m.Error.Code)
				}
			}
			if len(asked) == 2 {
				send(`{"jsonrpc":"2.0","id":` + string(pendingCall) + `,"result":{"content":[{"type":"text","text":"` + asked["ping"] + " " + asked["roots"] + `"}]}}`)
			}
			continue
		}
		answer := func(result string) { send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`) }
		if r := hostileAnswer(mode, m.Method, m.Params); r != "" {
			answer(r)
			continue
		}
		ok := `{"content":[{"type":"text","text":"fine"}]}`
		switch mode {
		case "garbage":
			send("this is not JSON at all")
			send(`{"jsonrpc":"2.0","id":"someone-else","result":{"content":[{"type":"text","text":"wrong"}]}}`)
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":"not a result object"`) // cut short
			answer(ok)
		case "wide":
			answer(ok)
		case "huge":
			answer(`{"content":[{"type":"text","text":"` + strings.Repeat("x", maxMessage) + `"}]}`)
		case "wrongid":
			send(`{"jsonrpc":"2.0","id":424242,"result":` + ok + `}`)
		case "asks":
			// The server's own requests come first; the call is answered
			// once the client has answered them.
			pendingCall = m.ID
			send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
			send(`{"jsonrpc":"2.0","id":"roots","method":"roots/list"}`)
		case "samples":
			// Not advertised, asked for all the same.
			pendingCall = m.ID
			send(`{"jsonrpc":"2.0","id":"sample","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
		case "silent", "silentinit", "silentlist":
		case "dies":
			out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[`)
			out.Flush()
			return 5
		}
	}
	return 0
}

// hostileServer configures the hostile stdio server in mode.
func hostileServer(t *testing.T, mode string) (ServerConfig, string) {
	cfg := stdioServer(t, "hostile")
	cfg.Env[0] = NameValue{serverModeEnv, "hostile-" + mode}
	log := filepath.Join(t.TempDir(), "received")
	cfg.Env = append(cfg.Env, NameValue{hostileLogEnv, log})
	return cfg, log
}

// clientGoroutines counts the goroutines of the client's side besides
// the caller: the package's own, the JSON-RPC client's and HTTP client
// connections. (The process owner's watchdog, started with the first
// child, is the daemon's for good, and not counted.)
func clientGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	stacks := strings.Split(all, "\n\n")[1:] // the first is the caller's
	n := 0
	for _, st := range stacks {
		if strings.Contains(st, "/internal/proc.") {
			continue
		}
		if strings.Contains(st, "/tools/mcpbridge.") || strings.Contains(st, "/internal/jsonrpcclient.") ||
			strings.Contains(st, "net/http.(*persistConn)") || strings.Contains(st, "os/exec.") {
			n++
		}
	}
	return n, all
}

// checkNoLeak closes h's Manager and waits until the client's goroutines
// are as many as before it started.
func checkNoLeak(t *testing.T, h *harness, before int) {
	t.Helper()
	if err := h.m.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(guard)
	for {
		n, all := clientGoroutines()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d client goroutines before, %d after Close:\n%s", before, n, all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHostileStdioServers(t *testing.T) {
	for _, c := range []struct {
		mode string
		opts Options
		says string // in the call's error result; "" for a call that works
	}{
		{mode: "garbage"},
		{mode: "asks", says: ""},
		{mode: "huge", says: fmt.Sprintf("longer than %d bytes", maxMessage)},
		{mode: "wrongid", opts: Options{CallTimeout: 300 * time.Millisecond}, says: "did not finish"},
		{mode: "silent", opts: Options{CallTimeout: 300 * time.Millisecond}, says: "did not finish"},
		{mode: "dies", says: "connection was lost"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			before, _ := clientGoroutines()
			cfg, received := hostileServer(t, c.mode)
			h := start(t, []ServerConfig{cfg}, c.opts)
			// Both pages were listed.
			names := toolNames(h.m.Tools())
			if !slices.Equal(names, []string{"hostile__mcp__one", "hostile__mcp__two"}) {
				t.Fatalf("tools %v, want one and two from both pages", names)
			}
			res := run(t, h.tool(t, "hostile__mcp__one"), `{}`)
			t.Logf("%s: %+v", c.mode, res)
			switch {
			case c.mode == "asks":
				// ping is answered {}; roots/list with the client's
				// roots, none here.
				if res.IsError || res.Content != "ping:{} roots:none" {
					t.Errorf("call = %+v, want the server's ping and roots/list answered", res)
				}
			case c.says == "" && (res.IsError || res.Content != "fine"):
				t.Errorf("call = %+v, want fine", res)
			case c.says != "" && (!res.IsError || !strings.Contains(res.Content, c.says)):
				t.Errorf("call = %+v, want an error result saying %q", res, c.says)
			}
			if c.mode == "asks" {
				// What the client sent first: initialize at the newest
				// version of that handshake, offering form elicitation
				// and roots with their changes (no sampling); then
				// initialized.
				b, _ := os.ReadFile(received)
				first := strings.SplitN(string(b), "\n", 3)
				if len(first) < 2 || !strings.Contains(first[0], `"method":"initialize"`) || !strings.Contains(first[0], `"protocolVersion":"`+protocolVersion+`"`) ||
					!strings.Contains(first[0], `"capabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}}`) || !strings.Contains(first[0], `"clientInfo":{"name":"cline-ls"`) ||
					!strings.Contains(first[1], `"method":"notifications/initialized"`) {
					t.Errorf("the client began with:\n%s", b)
				}
			}
			if c.mode == "garbage" && !strings.Contains(h.logs.String(), "not JSON-RPC") {
				t.Errorf("the line that is not JSON-RPC was not logged:\n%s", h.logs.String())
			}
			if c.mode == "silent" {
				// The call given up is cancelled on the server.
				deadline := time.Now().Add(guard)
				for {
					b, _ := os.ReadFile(received)
					if strings.Contains(string(b), `"method":"notifications/cancelled"`) && strings.Contains(string(b), `"requestId":`) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no cancellation reached the server; it read:\n%s", b)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			checkNoLeak(t, h, before)
		})
	}
}

// TestHTTPToolListChanges: over both HTTP transports, the server's
// list_changed notification, which belongs to no request, reaches the
// client (Streamable HTTP: on the listening GET) and the tools are listed
// again.
func TestHTTPToolListChanges(t *testing.T) {
	for _, kind := range []string{TransportHTTP, TransportSSE} {
		t.Run(kind, func(t *testing.T) {
			ts := newHTTPServer(t, kind == TransportSSE, "")
			h := start(t, []ServerConfig{{Name: "remote", Type: kind, URL: ts.URL}}, Options{})
			run(t, h.tool(t, "remote__mcp__grow"), `{}`)
			deadline := time.Now().Add(guard)
			for !slices.Contains(toolNames(h.m.Tools()), "remote__mcp__extra") {
				if time.Now().After(deadline) {
					t.Fatalf("the new tool never appeared: %v", toolNames(h.m.Tools()))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if res := run(t, h.tool(t, "remote__mcp__extra"), `{}`); res.Content != "extra here" {
				t.Errorf("extra = %+v", res)
			}
		})
	}
}

func TestHostileHandshakes(t *testing.T) {
	for mode, says := range map[string]string{
		"oldversion": `unsupported protocol version: "1999-01-01"`,
		"loopcursor": `cursor "again" twice`,
	} {
		t.Run(mode, func(t *testing.T) {
			before, _ := clientGoroutines()
			cfg, _ := hostileServer(t, mode)
			h := start(t, []ServerConfig{cfg}, Options{})
			if st := h.statusOf(t, "hostile"); st.State != StateFailed || !strings.Contains(st.Err, says) {
				t.Errorf("status %+v, want failed saying %q", st, says)
			}
			checkNoLeak(t, h, before)
		})
	}
}

// hostileHTTP serves the Streamable HTTP transport by hand, answering
// tools/call as mode says.
func hostileHTTP(t *testing.T, mode string) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			if r.Method == http.MethodGet {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
			return
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params json.RawMessage
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
		}
		if res := hostileAnswer(mode, m.Method, m.Params); res != "" {
			w.Header().Set("Mcp-Session-Id", "s1")
			answer(res)
			return
		}
		switch mode {
		case "huge":
			answer(`{"content":[{"type":"text","text":"` + strings.Repeat("x", maxMessage) + `"}]}`)
		case "garbage":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "this is not JSON at all")
		case "silent", "silentinit", "silentlist":
			<-r.Context().Done()
		case "dies":
			// An event stream cut in the middle of the answer.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(m.ID)+",")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "gone":
			http.Error(w, "no such session", http.StatusNotFound)
		case "status":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestHostileHTTPServers(t *testing.T) {
	for _, c := range []struct {
		mode string
		opts Options
		says string
	}{
		{mode: "huge", says: fmt.Sprintf("the answer is longer than %d bytes", maxMessage)},
		{mode: "garbage", says: "failed to decode response"},
		{mode: "silent", opts: Options{CallTimeout: 300 * time.Millisecond}, says: "did not finish"},
		{mode: "dies", says: "terminated without response"},
		{mode: "gone", says: "connection was lost"},
		{mode: "status", says: "refused calling tool \"one\": HTTP 503 Service Unavailable: overloaded"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			ts := hostileHTTP(t, c.mode)
			before, _ := clientGoroutines()
			h := start(t, []ServerConfig{{Name: "hostile", Type: TransportHTTP, URL: ts.URL}}, c.opts)
			if names := toolNames(h.m.Tools()); !slices.Equal(names, []string{"hostile__mcp__one", "hostile__mcp__two"}) {
				t.Fatalf("tools %v, want one and two from both pages", names)
			}
			res := run(t, h.tool(t, "hostile__mcp__one"), `{}`)
			t.Logf("%s: %+v", c.mode, res)
			if !res.IsError || !strings.Contains(res.Content, c.says) {
				t.Errorf("call = %+v, want an error result saying %q", res, c.says)
			}
			checkNoLeak(t, h, before)
		})
	}
}

// TestContentOfEveryKind: each kind of content block, as the SDK's server
// encodes it, is shown as the bridge has always shown it.
func TestContentOfEveryKind(t *testing.T) {
	res := fromSDK(t, &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "plain"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3, 4, 5}},
		&mcp.AudioContent{Data: []byte{1, 2}},
		&mcp.ResourceLink{URI: "file:///a", Name: "a", Title: "The A", Description: "first letter"},
		&mcp.ResourceLink{URI: "file:///b"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c", Text: "see"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///d", MIMEType: "application/zip", Blob: []byte("PK\x03\x04zip")}},
	}})
	want := []string{
		"plain",
		"[image, image/png, 5 bytes, not shown]",
		"[audio, unknown type, 2 bytes, not shown]",
		"[resource file:///a: The A] first letter",
		"[resource file:///b]",
		"[resource file:///c]\nsee",
		"[resource file:///d, application/zip, 7 bytes of binary data, not shown]",
	}
	if len(res.Content) != len(want) {
		t.Fatalf("%d blocks read, want %d", len(res.Content), len(want))
	}
	for i, c := range res.Content {
		if got := contentText(c); got != want[i] {
			t.Errorf("block %d (%s) = %q, want %q", i, c.Type, got, want[i])
		}
	}
	// A kind newer than this code is shown as its JSON.
	var future callToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"hologram", "depth": 3}]}`), &future); err != nil {
		t.Fatal(err)
	}
	if got := toolResult(&future).Content; got != `{"type":"hologram","depth":3}` {
		t.Errorf("an unknown kind = %q, want its JSON", got)
	}
}

// FuzzToolResult: whatever a server answers a call with, reading it
// either fails or gives text within the bound, never a panic.
func FuzzToolResult(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"AAEC","mimeType":"image/png"},{"type":"resource","resource":{"uri":"u","blob":"AA=="}}]}`,
		`{"content":[],"structuredContent":{"b":[1,2],"a":null},"isError":true}`,
		`{"content":[{"type":"resource_link","uri":"u","title":"t"},{"type":"new","x":{}}]}`,
		`{"content":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var res callToolResult
		if json.Unmarshal(in, &res) != nil {
			return
		}
		r := toolResult(&res)
		if n := len([]rune(r.Content)); n > maxResultChars+100 || r.Content == "" {
			t.Fatalf("%q gave a result of %d characters", in, n)
		}
	})
}

// TestRequestTimeouts: every request to a server that never answers ends
// at the server's limit, with an error naming the server, what was asked
// and the limit: a tool call and a resource read (cancelled on the
// server), the handshake and the listing (the server fails to start).
// The per-server timeoutSeconds wins over the Manager's default.
func TestRequestTimeouts(t *testing.T) {
	t.Run("call and read", func(t *testing.T) {
		before, _ := clientGoroutines()
		cfg, received := hostileServer(t, "silent")
		one := 1.0
		cfg.TimeoutSeconds = &one
		// A default the test would not outlive: only the server's own
		// setting can end these calls.
		h := start(t, []ServerConfig{cfg}, Options{CallTimeout: 10 * guard})
		res := run(t, h.tool(t, "hostile__mcp__one"), `{}`)
		for _, want := range []string{`MCP server "hostile"`, `calling tool "one"`, "time limit of 1s", "timeoutSeconds"} {
			if !res.IsError || !strings.Contains(res.Content, want) {
				t.Errorf("call = %+v, want an error result saying %q", res, want)
			}
		}
		res = run(t, h.builtin(t, "access_mcp_resource"), `{"server_name":"hostile","uri":"test://x"}`)
		for _, want := range []string{`MCP server "hostile"`, `reading "test://x"`, "time limit of 1s"} {
			if !res.IsError || !strings.Contains(res.Content, want) {
				t.Errorf("read = %+v, want an error result saying %q", res, want)
			}
		}
		deadline := time.Now().Add(guard)
		for {
			b, _ := os.ReadFile(received)
			if strings.Count(string(b), `"method":"notifications/cancelled"`) >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the two requests given up were not both cancelled on the server; it read:\n%s", b)
			}
			time.Sleep(10 * time.Millisecond)
		}
		checkNoLeak(t, h, before)
	})
	// The limit bounds the handshake too: silentlist's must leave a
	// loaded machine time to start the server and answer initialize.
	for mode, c := range map[string]struct {
		limit time.Duration
		says  string
	}{
		"silentinit": {300 * time.Millisecond, "no answer to initialize within 300ms"},
		"silentlist": {5 * time.Second, "listing tools: no answer to tools/list within 5s"},
	} {
		says := c.says
		t.Run(mode, func(t *testing.T) {
			before, _ := clientGoroutines()
			cfg, _ := hostileServer(t, mode)
			h := start(t, []ServerConfig{cfg}, Options{CallTimeout: c.limit})
			if st := h.statusOf(t, "hostile"); st.State != StateFailed || !strings.Contains(st.Err, says) {
				t.Errorf("status %+v, want failed saying %q", st, says)
			}
			checkNoLeak(t, h, before)
		})
	}
}

// TestTimeoutDefault: a Manager given no CallTimeout still bounds every
// request, and a server's timeoutSeconds replaces the bound for it alone.
func TestTimeoutDefault(t *testing.T) {
	five := 5.0
	m, err := New([]ServerConfig{{Name: "a", Command: "x"}, {Name: "b", Command: "x", TimeoutSeconds: &five}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.byName["a"].timeout(); got != DefaultCallTimeout {
		t.Errorf("timeout without a setting = %v, want %v", got, DefaultCallTimeout)
	}
	if got := m.byName["b"].timeout(); got != 5*time.Second {
		t.Errorf("timeout with timeoutSeconds 5 = %v, want 5s", got)
	}
	// The Manager keeps its own copy of the setting.
	five = 1
	if got := m.byName["b"].timeout(); got != 5*time.Second {
		t.Errorf("timeout after the caller changed its value = %v, want 5s", got)
	}
}

// TestWideServerCapped: a server listing 1,000 tools with 2 MB of
// descriptions gets a capped share of the model's tool list; its status
// (what the editor is told) and the log say so, naming the server; the
// tools left out can still be called by name through use_mcp_tool.
func TestWideServerCapped(t *testing.T) {
	cfg, _ := hostileServer(t, "wide")
	h := start(t, []ServerConfig{cfg}, Options{})
	got := h.m.Tools()
	if len(got) == 0 || len(got) > tools.DefaultMCPLimits.PerServer {
		t.Fatalf("%d tools offered, want some and at most %d", len(got), tools.DefaultMCPLimits.PerServer)
	}
	size := 0
	for _, tl := range got {
		sp := tl.Spec()
		size += len(sp.Name) + len(sp.Description) + len(sp.Parameters)
	}
	// The note the model is given comes on top of the limit; a few
	// hundred bytes.
	if size > tools.DefaultMCPLimits.TotalBytes+1000 {
		t.Errorf("%d bytes offered, want about %d at most", size, tools.DefaultMCPLimits.TotalBytes)
	}
	st := h.statusOf(t, "hostile")
	if st.Tools != 1000 || st.Offered != len(got) || !strings.Contains(st.Note, `MCP server "hostile" lists 1000 tools;`) {
		t.Errorf("status %+v, want 1000 tools listed, %d offered, and a note naming the server", st, len(got))
	}
	h.status.mu.Lock()
	reported := slices.ContainsFunc(h.status.seen, func(s ServerStatus) bool { return s.Note == st.Note })
	h.status.mu.Unlock()
	if !reported {
		t.Error("no status report carried the note")
	}
	if !strings.Contains(h.logs.String(), "tools left out") || !strings.Contains(h.logs.String(), "server=hostile") {
		t.Errorf("the log does not say which server lost tools:\n%s", h.logs.String())
	}
	if !strings.Contains(got[0].Spec().Description, st.Note) {
		t.Errorf("the model is not told: first description %q", got[0].Spec().Description)
	}
	res := run(t, h.builtin(t, tools.NameUseMCPTool), `{"server_name":"hostile","tool_name":"tool0999","arguments":{}}`)
	if res.IsError || res.Content != "fine" {
		t.Errorf("use_mcp_tool of a tool left out = %+v, want it called", res)
	}
	// An unknown tool's hint names some of the thousand, not all.
	_, err := h.builtin(t, tools.NameUseMCPTool).Build(json.RawMessage(`{"server_name":"hostile","tool_name":"nosuch","arguments":{}}`))
	if err == nil || !strings.Contains(err.Error(), "tool0049 and 950 more") || len(err.Error()) > 2000 {
		t.Errorf("use_mcp_tool of an unknown tool: %v", err)
	}
}

// TestCancelEndsAHungCall: the user cancelling the turn ends a call the
// server never answers at once, however long its limit, and the server
// is told (notifications/cancelled).
func TestCancelEndsAHungCall(t *testing.T) {
	cfg, received := hostileServer(t, "silent")
	h := start(t, []ServerConfig{cfg}, Options{CallTimeout: 10 * guard})
	inv, err := h.tool(t, "hostile__mcp__one").Build(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := inv.Execute(ctx, tools.ExecOptions{})
		done <- err
	}()
	// Cancel once the request is on the server's side.
	deadline := time.Now().Add(guard)
	for {
		b, _ := os.ReadFile(received)
		if strings.Contains(string(b), `"method":"tools/call"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call never reached the server; it read:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v, want context.Canceled", err)
		}
	case <-time.After(guard):
		t.Fatal("the cancelled call went on waiting for the server")
	}
	for {
		b, _ := os.ReadFile(received)
		if strings.Contains(string(b), `"method":"notifications/cancelled"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not told of the cancel; it read:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestURLSecretsStayOut: the SDK's errors quote a server's URL whole;
// what of it may be a secret (user information, the query) reaches
// neither the status, the log nor the model.
func TestURLSecretsStayOut(t *testing.T) {
	ts := hostileHTTP(t, "silent")
	secret := "?key=sekrit-query"
	withUser := strings.Replace(ts.URL, "http://", "http://me:sekrit-pass@", 1)
	h := start(t, []ServerConfig{
		{Name: "hostile", Type: TransportHTTP, URL: withUser + "/mcp" + secret},
		{Name: "nowhere", Type: TransportHTTP, URL: "http://me:sekrit-pass@127.0.0.1:1/mcp" + secret},
	}, Options{MaxRestarts: -1})
	if st := h.statusOf(t, "nowhere"); st.State != StateFailed || strings.Contains(st.Err, "sekrit") || !strings.Contains(st.Err, "127.0.0.1:1/mcp") {
		t.Errorf("status %+v, want failed, naming the URL without its secrets", st)
	}
	ts.Close() // the next call cannot connect
	res := run(t, h.tool(t, "hostile__mcp__one"), `{}`)
	if !res.IsError || strings.Contains(res.Content, "sekrit") {
		t.Errorf("call = %+v, want an error without the URL's secrets", res)
	}
	if strings.Contains(h.logs.String(), "sekrit") {
		t.Errorf("the log holds a secret:\n%s", h.logs.String())
	}
}
