package rpc_test

//lint:file-ignore SA1019 the test servers use roots, sampling and logging as servers of the initialize handshake do.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// TestMCPToolThroughSession: an MCP server from initializationOptions is
// connected, its tool is offered to the model under <uid>__mcp__<tool>,
// and a call round-trips through the approval path.
func TestMCPToolThroughSession(t *testing.T) {
	ctx := testCtx(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text back."}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the daemon's own cleanup, which closes its MCP session

	tr := transcript(t,
		map[string]any{"expect": map[string]any{"tools": []string{"srv__mcp__echo"}},
			"events": []any{call("m1", "srv__mcp__echo", map[string]any{"text": "ping"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "echo: ping"},
			"events": []any{text("The server said pong-ish.")}},
	)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider":   map[string]any{"name": "replay", "transcript": tr},
		"stateDir":   t.TempDir(),
		"approvals":  map[string]any{"mcp": "allow"},
		"mcpServers": []any{map[string]any{"type": "http", "name": "srv", "url": hs.URL, "headers": []any{}}},
	}})
	// The servers connect in the background; wait for the tool to appear.
	waitForTool(t, ctx, ed, "srv__mcp__echo")
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "use the server"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	if got := agentText(updates(ed, id)); !strings.Contains(got, "pong-ish") {
		t.Fatalf("text = %q", got)
	}
}

// TestMCPElicitationAsksTheUser: a server's elicitation/create reaches
// the user through cline/askQuestion (whether to answer, then each field
// the schema's defaults do not settle, its choices as the options), and
// the answers go back typed; the server's roots are the workspace folder.
func TestMCPElicitationAsksTheUser(t *testing.T) {
	ctx := testCtx(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","title":"Your name"},"colour":{"type":"string","enum":["red","blue"],"default":"blue"},` +
			`"agree":{"type":"boolean"},"note":{"type":"string","default":"none"}},"required":["name"]}`)})
		out := fmt.Sprint("elicit failed: ", err)
		if err == nil {
			b, _ := json.Marshal(res.Content)
			out = res.Action + " " + string(b)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		out := fmt.Sprint("roots failed: ", err)
		if err == nil && len(res.Roots) > 0 {
			out = "root " + res.Roots[0].URI
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	root := t.TempDir()
	tr := transcript(t,
		map[string]any{"expect": map[string]any{"tools": []string{"srv__mcp__ask"}},
			"events": []any{call("m1", "srv__mcp__ask", map[string]any{})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": `accept {"agree":true,"colour":"red","name":"Ada","note":"none"}`},
			"events": []any{call("m2", "srv__mcp__roots", map[string]any{})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "root file://" + filepath.ToSlash(root)},
			"events": []any{text("Done.")}},
	)
	ed := rpctest.New(t, rpc.Options{})
	var mu sync.Mutex
	var asked []string
	ed.Handle("cline/askQuestion", func(_ context.Context, p json.RawMessage) (any, error) {
		var q struct {
			Question string
			Options  []string
		}
		_ = json.Unmarshal(p, &q)
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s %q", q.Question, q.Options))
		mu.Unlock()
		switch {
		case strings.Contains(q.Question, "Who are you?"):
			return map[string]any{"answer": "Answer"}, nil
		case strings.Contains(q.Question, "Your name"):
			return map[string]any{"answer": "Ada"}, nil
		case strings.Contains(q.Question, "colour"):
			return map[string]any{"answer": "red"}, nil
		case strings.Contains(q.Question, "agree"):
			return map[string]any{"answer": "true"}, nil
		}
		return map[string]any{"answer": nil}, nil
	})
	ed.Initialize(ctx, root, map[string]any{
		"capabilities": map[string]any{"experimental": map[string]any{"cline": map[string]any{"questions": true}}},
		"initializationOptions": map[string]any{
			"provider":   map[string]any{"name": "replay", "transcript": tr},
			"stateDir":   t.TempDir(),
			"approvals":  map[string]any{"mcp": "allow"},
			"mcpServers": []any{map[string]any{"type": "http", "name": "srv", "url": hs.URL, "headers": []any{}}},
		}})
	waitForTool(t, ctx, ed, "srv__mcp__ask")
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "ask me"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`MCP server srv asks: Who are you? ["Answer" "Decline"]`,
		`MCP server srv: Your name []`,
		`MCP server srv: agree ["true" "false"]`,
		`MCP server srv: colour (default: blue) ["red" "blue"]`,
	}
	if !slices.Equal(asked, want) {
		t.Errorf("asked:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
}

// TestMCPElicitationThroughShowMessageRequest: without cline/askQuestion
// the questions go as window/showMessageRequest, their choices as the
// actions; a field that needs typed text cannot be asked that way, so
// one that is required cancels the question and one with a default
// keeps it.
func TestMCPElicitationThroughShowMessageRequest(t *testing.T) {
	for _, c := range []struct {
		name, schema, want string
	}{
		{"choices", `{"type":"object","properties":{"colour":{"type":"string","enum":["red","blue"]},"agree":{"type":"boolean"},"note":{"type":"string","default":"none"}}}`,
			`accept {"agree":false,"colour":"red","note":"none"}`},
		{"typed text required", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, "cancel null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Which?", RequestedSchema: json.RawMessage(c.schema)})
				out := fmt.Sprint("elicit failed: ", err)
				if err == nil {
					b, _ := json.Marshal(res.Content)
					out = res.Action + " " + string(b)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
			})
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			t.Cleanup(hs.Close)
			root := t.TempDir()
			tr := transcript(t,
				map[string]any{"expect": map[string]any{"tools": []string{"srv__mcp__ask"}},
					"events": []any{call("m1", "srv__mcp__ask", map[string]any{})}},
				map[string]any{"expect": map[string]any{"last_tool_result_contains": c.want},
					"events": []any{text("Done.")}},
			)
			ed := rpctest.New(t, rpc.Options{})
			ed.Handle("window/showMessageRequest", func(_ context.Context, p json.RawMessage) (any, error) {
				var q struct {
					Message string
					Actions []struct{ Title string }
				}
				_ = json.Unmarshal(p, &q)
				switch {
				case strings.Contains(q.Message, "Which?"):
					return map[string]any{"title": "Answer"}, nil
				case strings.Contains(q.Message, "colour"):
					return map[string]any{"title": "red"}, nil
				case strings.Contains(q.Message, "agree"):
					return map[string]any{"title": "false"}, nil
				}
				t.Errorf("asked %s", p)
				return nil, nil
			})
			ed.Initialize(ctx, root, map[string]any{
				"capabilities": map[string]any{"window": map[string]any{"showMessage": map[string]any{}}},
				"initializationOptions": map[string]any{
					"provider":   map[string]any{"name": "replay", "transcript": tr},
					"stateDir":   t.TempDir(),
					"approvals":  map[string]any{"mcp": "allow"},
					"mcpServers": []any{map[string]any{"type": "http", "name": "srv", "url": hs.URL, "headers": []any{}}},
				}})
			waitForTool(t, ctx, ed, "srv__mcp__ask")
			id := newSessionIn(t, ctx, ed, root)
			if stop, err := promptText(ctx, ed, id, "ask me"); err != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, err)
			}
		})
	}
}

// waitForTool waits until the editor's cline/tools lists name: MCP
// servers connect in the background.
func waitForTool(t *testing.T, ctx context.Context, ed *rpctest.Editor, name string) {
	t.Helper()
	for {
		var r struct{ Tools []map[string]any }
		if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "anthropic"}, &r); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(r.Tools, func(tl map[string]any) bool { return tl["name"] == name }) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the MCP tool %s never appeared", name)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
