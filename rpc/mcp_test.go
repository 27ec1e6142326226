package rpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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
	for {
		var r struct{ Tools []map[string]any }
		if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "anthropic"}, &r); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range r.Tools {
			if tl["name"] == "srv__mcp__echo" {
				found = true
			}
		}
		if found {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the MCP tool never appeared")
		case <-time.After(20 * time.Millisecond):
		}
	}
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "use the server"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	if got := agentText(updates(ed, id)); !strings.Contains(got, "pong-ish") {
		t.Fatalf("text = %q", got)
	}
}
