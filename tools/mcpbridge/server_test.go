package mcpbridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests run real MCP servers made with the SDK: over stdio, the test
// binary itself started again with serverModeEnv set (TestMain then runs
// the server instead of the tests); over HTTP, an httptest server.
const (
	serverModeEnv = "MCPBRIDGE_TEST_SERVER" // "stdio" or "mute"
	// The stdio server writes a file at this path when it starts...
	startedFileEnv = "MCPBRIDGE_TEST_STARTED"
	// ...appends a line to this one...
	startsLogEnv = "MCPBRIDGE_TEST_STARTS"
	// ...exits at once if this file exists...
	dieIfEnv = "MCPBRIDGE_TEST_DIE_IF"
	// ...which its crash tool creates before exiting...
	crashMarkEnv = "MCPBRIDGE_TEST_CRASH_MARK"
	// ...and its sleep tool creates this file once it is running.
	sleepingFileEnv = "MCPBRIDGE_TEST_SLEEPING"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		os.Exit(runTestServer(mode))
	}
	os.Exit(m.Run())
}

// runTestServer is the stdio server's main.
func runTestServer(mode string) int {
	if p := os.Getenv(startedFileEnv); p != "" {
		_ = os.WriteFile(p, []byte("started"), 0o600)
	}
	if p := os.Getenv(startsLogEnv); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if p := os.Getenv(dieIfEnv); p != "" {
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintln(os.Stderr, "test server: dying on purpose")
			return 7
		}
	}
	if strings.HasPrefix(mode, "hostile-") {
		return runHostileServer(strings.TrimPrefix(mode, "hostile-"))
	}
	if mode == "mute" {
		// Never answers: reads its input until it is closed.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	fmt.Fprintln(os.Stderr, "test server: ready")
	if err := newTestServer(true).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "test server: run returned")
	return 0
}

// addSchema has what a converter could lose: an enum, a default, a
// format, a nested object with its own required list, and a number
// bound.
const addSchema = `{
  "type": "object",
  "properties": {
    "a": {"type": "number", "description": "first addend", "minimum": -1000},
    "b": {"type": "number"},
    "mode": {"type": "string", "enum": ["sum", "max"], "default": "sum"},
    "opts": {
      "type": "object",
      "properties": {
        "round": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string", "format": "uuid"}}
      },
      "required": ["round"],
      "additionalProperties": false
    }
  },
  "required": ["a", "b"]
}`

const (
	echoSchema  = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	nameSchema  = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	emptySchema = `{"type":"object"}`
)

// newTestServer builds the server both transports serve. stdio says
// whether it runs in its own process, where crash may exit.
func newTestServer(stdio bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpbridge-test", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	tool := func(name, schema string, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: "Test tool " + name + ".", InputSchema: json.RawMessage(schema)}, h)
	}
	tool("echo", echoSchema, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return text(in.Text), nil
	})
	tool("add", addSchema, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			A, B float64
			Mode string
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		if in.Mode == "max" {
			return text(strconv.FormatFloat(max(in.A, in.B), 'g', -1, 64)), nil
		}
		return text(strconv.FormatFloat(in.A+in.B, 'g', -1, 64)), nil
	})
	tool("pid", emptySchema, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	tool("getenv", nameSchema, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return text(os.Getenv(in.Name)), nil
	})
	tool("crash", emptySchema, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !stdio {
			return nil, errors.New("crash works only over stdio")
		}
		if p := os.Getenv(crashMarkEnv); p != "" {
			_ = os.WriteFile(p, []byte("crashed"), 0o600)
		}
		fmt.Fprintln(os.Stderr, "test server: crashing")
		os.Exit(3)
		return nil, nil
	})
	tool("fail", emptySchema, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}, IsError: true}, nil
	})
	tool("mixed", emptySchema, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "some text"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3, 4}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://inline", MIMEType: "text/plain", Text: "inline text"}},
			&mcp.ResourceLink{URI: "test://greeting", Name: "greeting"},
		}}, nil
	})
	tool("sleep", emptySchema, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if p := os.Getenv(sleepingFileEnv); p != "" {
			_ = os.WriteFile(p, []byte("sleeping"), 0o600)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tool("grow", emptySchema, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Adding a tool makes the SDK tell connected clients that the
		// list changed.
		srv.AddTool(&mcp.Tool{Name: "extra", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("extra here"), nil
			})
		return text("grown"), nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello resource"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "test://blob", Name: "blob", MIMEType: "application/octet-stream"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://notes/{name}", Name: "note"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			name, ok := strings.CutPrefix(req.Params.URI, "test://notes/")
			if !ok || name == "missing" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "note " + name}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "review", Description: "Review a file.", Arguments: []*mcp.PromptArgument{
		{Name: "file", Description: "the file to review", Required: true}, {Name: "focus"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Review " + a["file"] + " for " + cmp.Or(a["focus"], "anything") + "."}},
				{Role: "assistant", Content: &mcp.TextContent{Text: "I will read it first."}},
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://style", MIMEType: "text/plain", Text: "Tabs, not spaces."}}},
			}}, nil
		})
	return srv
}

// newHTTPServer serves a test server over streamable HTTP (or SSE) on
// 127.0.0.1, refusing requests without the expected Authorization header
// when token is set.
func newHTTPServer(t *testing.T, sse bool, token string) *httptest.Server {
	t.Helper()
	srv := newTestServer(false)
	var h http.Handler
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	if token != "" {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}
