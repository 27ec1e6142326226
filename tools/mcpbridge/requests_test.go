package mcpbridge

//lint:file-ignore SA1019 the test servers use roots, sampling and logging as servers of the initialize handshake do.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/tools"
)

// Tests of what a server asks the client and tells it: elicitation
// through the Manager's Elicitor (with the schema's defaults), sampling
// refused, roots and their changes, log messages, progress.

// fakeElicitor answers every question with action and content, and
// records what it was asked.
type fakeElicitor struct {
	action  string
	content map[string]any

	mu     sync.Mutex
	asked  []string // server: message
	schema json.RawMessage
}

func (f *fakeElicitor) Elicit(_ context.Context, server, message string, schema json.RawMessage) (string, map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, server+": "+message)
	f.schema = schema
	return f.action, f.content
}

// askingServer is an SDK server over Streamable HTTP whose tools ask the
// client: "ask" elicits a name and a colour (default "blue"), "sample"
// asks for the model, "roots" lists the client's roots, "chatty" logs and
// reports progress. rootsChanged receives each roots/list_changed.
func askingServer(t *testing.T) (*httptest.Server, chan struct{}) {
	t.Helper()
	rootsChanged := make(chan struct{}, 10)
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged <- struct{}{} },
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	obj := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	tool := func(name string, h mcp.ToolHandler) {
		tl := *obj
		tl.Name = name
		srv.AddTool(&tl, h)
	}
	tool("ask", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message: "Who are you?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","title":"Your name"},` +
				`"colour":{"type":"string","enum":["red","blue"],"default":"blue"}},"required":["name"]}`),
		})
		if err != nil {
			return text("elicit failed: " + err.Error()), nil
		}
		b, _ := json.Marshal(res.Content)
		return text(res.Action + " " + string(b)), nil
	})
	tool("sample", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		return text(fmt.Sprint("sampling: ", err)), nil
	})
	tool("roots", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return text("roots failed: " + err.Error()), nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI+"="+r.Name)
		}
		return text(strings.Join(uris, " ")), nil
	})
	tool("chatty", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "too fine to show"})
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "db", Data: map[string]any{"slow": "query"}})
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
			// The client handles what the server sends in order, but its
			// answer to the call may overtake a notification; a request
			// of ours answered means the progress was handled.
			_, _ = req.Session.ListRoots(ctx, nil)
		}
		return text("done"), nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts, rootsChanged
}

func TestElicitationReachesTheUser(t *testing.T) {
	for _, c := range []struct {
		name    string
		e       *fakeElicitor
		nilE    bool
		want    string
		asked   bool
		wantKey string
	}{
		// The user's answer, with the schema's default for what it left out.
		{name: "accept", e: &fakeElicitor{action: ElicitAccept, content: map[string]any{"name": "Ada"}}, want: `accept {"colour":"blue","name":"Ada"}`, asked: true},
		{name: "decline", e: &fakeElicitor{action: ElicitDecline}, want: "decline null", asked: true},
		{name: "cancel", e: &fakeElicitor{action: "anything else"}, want: "cancel null", asked: true},
		// No one to ask: declined, not an error.
		{name: "no elicitor", nilE: true, want: "decline null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, _ := askingServer(t)
			opts := Options{}
			if !c.nilE {
				opts.Elicit = c.e
			}
			h := start(t, []ServerConfig{{Name: "asking", Type: TransportHTTP, URL: ts.URL}}, opts)
			res := run(t, h.tool(t, "asking__mcp__ask"), `{}`)
			if res.IsError || res.Content != c.want {
				t.Errorf("ask = %+v, want %q", res, c.want)
			}
			if c.nilE {
				return
			}
			c.e.mu.Lock()
			defer c.e.mu.Unlock()
			if !slices.Equal(c.e.asked, []string{"asking: Who are you?"}) {
				t.Errorf("asked %q", c.e.asked)
			}
			fields := ElicitFields(c.e.schema)
			if len(fields) != 2 || fields[0].Name != "name" || !fields[0].Required || fields[0].Prompt != "Your name" ||
				fields[1].Name != "colour" || !slices.Equal(fields[1].Choices, []string{"red", "blue"}) || fields[1].Default != "blue" {
				t.Errorf("the schema read as %+v", fields)
			}
		})
	}
}

// TestSamplingRefused: a server asking for the model, though sampling is
// not advertised, is refused saying why.
func TestSamplingRefused(t *testing.T) {
	cfg, _ := hostileServer(t, "samples")
	h := start(t, []ServerConfig{cfg}, Options{})
	res := run(t, h.tool(t, "hostile__mcp__one"), `{}`)
	if !strings.Contains(res.Content, "Code:-31001") || !strings.Contains(res.Content, "cline-ls does not let MCP servers use its model") {
		t.Errorf("sample = %+v, want the refusal saying why", res)
	}
}

func TestRootsAreTheWorkspaceFolders(t *testing.T) {
	ts, changed := askingServer(t)
	h := start(t, []ServerConfig{{Name: "asking", Type: TransportHTTP, URL: ts.URL}}, Options{Roots: []string{"/work/a", "/work/b c"}})
	if res := run(t, h.tool(t, "asking__mcp__roots"), `{}`); res.Content != "file:///work/a=a file:///work/b%20c=b c" {
		t.Errorf("roots = %+v", res)
	}
	h.m.SetRoots([]string{"/work/b c", "/work/d"})
	select {
	case <-changed:
	case <-time.After(guard):
		t.Fatal("no roots/list_changed reached the server")
	}
	// Either order of the SDK's two notifications (one removal, one
	// addition) leaves the same list.
	deadline := time.Now().Add(guard)
	for {
		res := run(t, h.tool(t, "asking__mcp__roots"), `{}`)
		if res.Content == "file:///work/b%20c=b c file:///work/d=d" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("roots after the change = %+v", res)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServerLogsAndProgress(t *testing.T) {
	ts, _ := askingServer(t)
	h := start(t, []ServerConfig{{Name: "asking", Type: TransportHTTP, URL: ts.URL}}, Options{})
	inv, err := h.tool(t, "asking__mcp__chatty").Build(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := inv.Execute(ctx, tools.ExecOptions{Output: func(s string) { mu.Lock(); out.WriteString(s); mu.Unlock() }})
	if err != nil || res.Content != "done" {
		t.Fatalf("chatty = %+v, %v", res, err)
	}
	mu.Lock()
	got := out.String()
	mu.Unlock()
	if got != "[1/2] half way\n" {
		t.Errorf("progress shown %q", got)
	}
	// The level set (info) keeps the debug message on the server; the
	// warning reaches the daemon's log, with the server's name.
	deadline := time.Now().Add(guard)
	for !strings.Contains(h.logs.String(), `msg="mcp: server log" mcp_server=asking level=warning logger=db data="{\"slow\":\"query\"}"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's warning is not in the log:\n%s", h.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(h.logs.String(), "too fine to show") {
		t.Errorf("a debug message passed the level set:\n%s", h.logs.String())
	}
}
