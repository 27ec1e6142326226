package rpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// promptServer is an MCP server over Streamable HTTP with one prompt,
// review, taking a required file and an optional focus.
func promptServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, nil)
	srv.AddPrompt(&mcp.Prompt{Name: "review", Description: "Review a file.", Arguments: []*mcp.PromptArgument{
		{Name: "file", Required: true}, {Name: "focus"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			focus := a["focus"]
			if focus == "" {
				focus = "anything"
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Review " + a["file"] + " for " + focus + "."}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestMCPPromptAsSlashCommand: "/mcp:srv:review main.go" in a prompt runs
// the server's prompt with its arguments, and its messages are what the
// model reads as the user's turn; a wrong one is the user's error and
// starts no turn.
func TestMCPPromptAsSlashCommand(t *testing.T) {
	ctx := testCtx(t)
	url := promptServer(t)
	tr := transcript(t,
		map[string]any{"expect": map[string]any{"last_user_contains": "Review main.go for errors."},
			"events": []any{text("Reviewed.")}},
	)
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider":   map[string]any{"name": "replay", "transcript": tr},
		"stateDir":   t.TempDir(),
		"mcpServers": []any{map[string]any{"type": "http", "name": "srv", "url": url, "headers": []any{}}},
	}})
	id := newSessionIn(t, ctx, ed, root)
	// The server connects in the background: until it has listed its
	// prompts, the command names an unknown prompt.
	for {
		stop, err := promptText(ctx, ed, id, "/mcp:srv:review main.go focus=errors")
		if err == nil {
			if stop != "end_turn" {
				t.Fatalf("stop = %q", stop)
			}
			break
		}
		if !strings.Contains(err.Error(), "no prompt") && !strings.Contains(err.Error(), "not running") && !strings.Contains(err.Error(), "starting") {
			t.Fatalf("prompt: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the prompt never ran: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, c := range []struct{ text, says string }{
		{"/mcp:srv:review", "missing file"},
		{"/mcp:srv:other x", `has no prompt "other"; its prompts are: review`},
		{"/mcp:nope:review x", `no MCP server "nope"`},
	} {
		if _, err := promptText(ctx, ed, id, c.text); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want %q", c.text, err, c.says)
		}
	}
}

// TestMCPPromptsOfferedAsACPCommands: an ACP session's slash commands
// gain the prompts of its MCP servers once they are listed.
func TestMCPPromptsOfferedAsACPCommands(t *testing.T) {
	ctx := testCtx(t)
	url := promptServer(t)
	root := t.TempDir()
	c := &acpClient{files: map[string]string{}}
	conn, _, _, _ := acpDaemon(t, c, "CLINE_LS_PROVIDER=replay", "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{
		{Http: &acp.McpServerHttpInline{Name: "srv", Url: url, Headers: []acp.HttpHeader{}, Type: "http"}}}}); err != nil {
		t.Fatal(err)
	}
	waitUpdate(t, ctx, c, "available_commands_update with the MCP prompt", func(u acp.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		for _, cmd := range u.AvailableCommandsUpdate.AvailableCommands {
			if cmd.Name == "mcp:srv:review" && cmd.Description == "Review a file." && cmd.Input != nil &&
				cmd.Input.Unstructured != nil && cmd.Input.Unstructured.Hint == "file [focus]" {
				return true
			}
		}
		return false
	})
}
