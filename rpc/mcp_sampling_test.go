package rpc_test

//lint:file-ignore SA1019 the test server asks for sampling as servers of the initialize handshake do.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// samplingServer is an MCP server whose tool "poem" asks the client's
// model for a poem (sampling/createMessage) and returns what it got, or
// why it got nothing.
func samplingServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "poem", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100000, SystemPrompt: "You are a poet.",
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Write a poem about Go."}}}})
		out := fmt.Sprint("sampling failed: ", err)
		if err == nil {
			out = fmt.Sprintf("sampled by %s (%s): %s", res.Model, res.StopReason, res.Content.(*mcp.TextContent).Text)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestMCPSampling: with mcpSampling on, a server's sampling request is
// shown to the user and, allowed, answered by the settings' model
// (its reply bounded); denied, or with the setting off, the server is
// told why, and the model never sees the server's request.
func TestMCPSampling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		allowed bool   // mcpSampling
		answer  string // the user's
		want    string // in the tool's result
	}{
		{"allowed", true, "Allow", "sampled by test-model (endTurn): Gophers dig"},
		{"denied", true, "Deny", "sampling failed: calling \"sampling/createMessage\": the user did not let the server use the model"},
		{"off", false, "", "sampling failed: calling \"sampling/createMessage\": cline-ls does not let MCP servers use its model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			url := samplingServer(t)
			ws := newWindowServer(t, 1<<20, func(n int) map[string]any {
				return nil // replaced below, once the request order is known
			})
			var mu sync.Mutex
			var sampled [][]byte
			ws.step = func(n int) map[string]any {
				body := ws.chatBodies()[n]
				switch {
				case strings.Contains(string(body), "Write a poem about Go."):
					mu.Lock()
					sampled = append(sampled, body)
					mu.Unlock()
					return map[string]any{"content": "Gophers dig"}
				case strings.Contains(string(body), "sampling failed") || strings.Contains(string(body), "sampled by"):
					return map[string]any{"content": "Done."}
				}
				return toolCall(n, "srv__mcp__poem", map[string]any{})
			}
			root := t.TempDir()
			ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
				if k == "TEST_API_KEY" {
					return "sk-test"
				}
				return ""
			}})
			var questions []string
			ed.Handle("cline/askQuestion", func(_ context.Context, p json.RawMessage) (any, error) {
				var q struct {
					Question string
					Options  []string
				}
				_ = json.Unmarshal(p, &q)
				mu.Lock()
				questions = append(questions, fmt.Sprintf("%s %q", q.Question, q.Options))
				mu.Unlock()
				return map[string]any{"answer": tc.answer}, nil
			})
			opts := openAISettings(ws.URL, t.TempDir())
			opts["approvals"] = map[string]any{"mcp": "allow"}
			opts["mcpSampling"] = tc.allowed
			opts["mcpServers"] = []any{map[string]any{"type": "http", "name": "srv", "url": url, "headers": []any{}}}
			ed.Initialize(ctx, root, map[string]any{
				"capabilities":          map[string]any{"experimental": map[string]any{"cline": map[string]any{"questions": true}}},
				"initializationOptions": opts})
			waitForTool(t, ctx, ed, "srv__mcp__poem")
			id := newSessionIn(t, ctx, ed, root)
			if stop, err := promptText(ctx, ed, id, "get a poem"); err != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, err)
			}
			bodies := ws.chatBodies()
			last := string(bodies[len(bodies)-1])
			if !strings.Contains(toolMessages(last), tc.want) {
				t.Errorf("the tool result the model read: %s\nwant %q", toolMessages(last), tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tc.allowed || tc.answer != "Allow" {
				if len(sampled) != 0 {
					t.Errorf("the model was asked the server's request %d times, want never", len(sampled))
				}
			} else {
				if len(sampled) != 1 || !strings.Contains(string(sampled[0]), "You are a poet.") || !strings.Contains(string(sampled[0]), `"max_tokens":8192`) ||
					strings.Contains(string(sampled[0]), `"tools"`) {
					t.Errorf("the sampling request = %s; want the server's system prompt, max_tokens cut to 8192, no tools", sampled)
				}
			}
			if tc.allowed && (len(questions) != 1 || !strings.Contains(questions[0], "MCP server srv asks to use your model (1 messages, a reply of up to 8192 tokens") ||
				!strings.Contains(questions[0], `["Deny" "Allow"]`)) {
				t.Errorf("questions = %q", questions)
			}
			if !tc.allowed && len(questions) != 0 {
				t.Errorf("asked %q with sampling off", questions)
			}
		})
	}
}

// toolMessages is the content of the tool messages of a Chat Completions
// request body.
func toolMessages(body string) string {
	var req struct {
		Messages []struct{ Role, Content string }
	}
	_ = json.Unmarshal([]byte(body), &req)
	var out []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return strings.Join(out, "\n")
}
