package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerEnv makes the test binary a stdio MCP server with one tool,
// add, and one that fails, boom.
const mcpServerEnv = "CLINE_LS_TEST_MCP_SERVER"

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func runMCPServer() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "adder", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds two numbers.\nSecond line."}, func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(a.A + a.B)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "boom", Description: "Fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// mcpConfig writes a config file with the test binary as the stdio
// server "adder" (a secret in its env), an HTTP server with a secret in
// its URL and header, and a disabled one; it returns the getenv that
// finds it.
func mcpConfig(t *testing.T) func(string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	servers := []any{
		map[string]any{"name": "adder", "command": exe, "env": []any{
			map[string]any{"name": mcpServerEnv, "value": "1"},
			map[string]any{"name": "ADDER_TOKEN", "value": "sekrit-env"},
			map[string]any{"name": "GORACE", "value": "atexit_sleep_ms=0"}}},
		map[string]any{"name": "remote", "type": "http", "url": "http://user:sekrit-user@127.0.0.1:1/mcp?key=sekrit-query",
			"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer sekrit-header"}}},
		map[string]any{"name": "off", "command": "nothing", "disabled": true},
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.MkdirAll(filepath.Join(cfg, "cline-ls"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "cline-ls", "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return os.Getenv(k)
	}
}

func runMCP(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := mcpCmd(args, &out, &errb, getenv)
	if strings.Contains(out.String()+errb.String(), "sekrit") {
		t.Errorf("mcp %v printed a secret:\n%s\n%s", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

// TestMCPCommands: list, get and call on the config file's servers, as
// the daemon runs them; no env or header value, URL user or query is
// printed; bad input is a clear error.
func TestMCPCommands(t *testing.T) {
	getenv := mcpConfig(t)
	code, out, errs := runMCP(t, getenv, "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "adder\tstdio ") || !strings.HasSuffix(lines[0], "\trunning\t2 tools, 0 resources, 0 resource templates, 0 prompts") ||
		!strings.HasPrefix(lines[1], "remote\thttp http://127.0.0.1:1/mcp\tfailed\t") ||
		lines[2] != "off\tstdio nothing\tdisabled" {
		t.Errorf("list: %d\n%s\n%s", code, out, errs)
	}

	code, out, errs = runMCP(t, getenv, "get", "adder")
	for _, want := range []string{"name: adder\n", "env: " + mcpServerEnv + ", ADDER_TOKEN, GORACE\n", "state: running\n", "tools: 2\n", "  add\tAdds two numbers.\n", "  boom\tFails.\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("get adder: %d, want %q in:\n%s\n%s", code, want, out, errs)
		}
	}
	if code, out, _ = runMCP(t, getenv, "get", "remote"); code != 1 || !strings.Contains(out, "headers: Authorization\n") || !strings.Contains(out, "state: failed\n") {
		t.Errorf("get remote: %d\n%s", code, out)
	}

	if code, out, errs = runMCP(t, getenv, "call", "adder", "add", `{"a":2,"b":40}`); code != 0 || out != "42\n" {
		t.Errorf("call add: %d %q %s", code, out, errs)
	}
	if code, out, _ = runMCP(t, getenv, "call", "adder", "boom"); code != 1 || out != "it broke\n" {
		t.Errorf("call boom: %d %q", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"call", "adder", "add", "{not json"}, 2, "not JSON"},
		{[]string{"call", "adder", "add", `{"a":"two"}`}, 1, "a"},
		{[]string{"call", "adder", "nosuch"}, 1, "nosuch"},
		{[]string{"get", "nosuch"}, 1, `no MCP server "nosuch"`},
		{[]string{"get", "off"}, 1, "disabled"},
		{[]string{"get"}, 2, "usage"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	} {
		code, _, errs := runMCP(t, getenv, c.args...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("mcp %v: %d %q, want %d saying %q", c.args, code, errs, c.code, c.says)
		}
	}
}
