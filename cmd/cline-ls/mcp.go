package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// mcpCmd is "cline-ls mcp": the MCP servers of the configuration, seen
// from the terminal, through the same client the daemon runs them with.
func mcpCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		mcpUsage(stderr)
		return 2
	}
	switch args[0] {
	case "list", "get", "call", "login":
		return mcpServersCmd(args[0], args[1:], stdout, stderr, getenv)
	case "conformance-client":
		return mcpConformance(args[1:], stderr, getenv)
	case "-h", "-help", "--help", "help":
		mcpUsage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "cline-ls mcp: unknown command %q\n", args[0])
	mcpUsage(stderr)
	return 2
}

func mcpUsage(w io.Writer) {
	fmt.Fprint(w, `usage: cline-ls mcp COMMAND

The servers are those of the config file's "mcpServers", the ones the
daemon starts when an editor names none.

commands:
  list                     each server: how it is reached, its state, its tools
  get NAME                 one server: its configuration (no env or header
                           values) and every tool it lists
  call NAME TOOL [JSON]    call a tool with JSON arguments (default {}); the
                           result goes to stdout, exit status 1 when it is an error
  login NAME               sign in to an HTTP server that asks for it (OAuth):
                           open the URL printed; the tokens are kept under the
                           state folder, where the daemon finds them
  help                     print this help
`)
}

// mcpServersCmd runs list, get and call: the config file's servers are
// started as the daemon starts them (get and call start only the one
// named), in the current folder, with it as their root. A server's
// questions are declined: there is no editor to ask them in.
func mcpServersCmd(cmd string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "cline-ls mcp %s: %s\n", cmd, fmt.Sprintf(format, a...))
		return code
	}
	want := map[string][2]int{"list": {0, 0}, "get": {1, 1}, "call": {2, 3}, "login": {1, 1}}[cmd]
	if len(args) < want[0] || len(args) > want[1] {
		mcpUsage(stderr)
		return 2
	}
	cfgs, file, err := settings.ConfigMCPServers(getenv)
	if err != nil {
		return fail(1, "%v", err)
	}
	if len(cfgs) == 0 {
		if file == "" {
			return fail(1, "no config folder: set HOME or XDG_CONFIG_HOME")
		}
		return fail(1, "%s configures no MCP server (\"mcpServers\")", file)
	}
	if cmd != "list" {
		i := slices.IndexFunc(cfgs, func(c mcpbridge.ServerConfig) bool { return c.Name == args[0] })
		if i < 0 {
			names := make([]string, len(cfgs))
			for j, c := range cfgs {
				names[j] = c.Name
			}
			return fail(1, "no MCP server %q in %s; it has %s", args[0], file, strings.Join(names, ", "))
		}
		cfgs = cfgs[i : i+1]
		if cfgs[0].Disabled {
			return fail(1, "MCP server %q is disabled in %s", args[0], file)
		}
	}
	dir, _ := os.Getwd()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stateDir := session.DefaultStateDir(getenv)
	signIn := func(_ context.Context, server, u string) error {
		if cmd != "login" {
			return fmt.Errorf("MCP server %s needs a sign-in; run: cline-ls mcp login %s", server, server)
		}
		fmt.Fprintf(stderr, "Open this URL to sign in to %s (waiting up to %v):\n\n  %s\n\n", server, mcpbridge.SignInWait, u)
		return nil
	}
	oauth := mcpbridge.NewOAuth(mcpbridge.OAuthConfig{StateDir: stateDir, Logger: logger, SignIn: signIn})
	m, err := mcpbridge.New(cfgs, mcpbridge.Options{Logger: logger, Version: version(), Dir: dir, Roots: []string{dir}, MaxRestarts: -1, OAuth: oauth})
	if err != nil {
		return fail(1, "%v", err)
	}
	defer m.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m.Start(ctx)
	switch cmd {
	case "list":
		for i, st := range m.Status() {
			fmt.Fprintf(stdout, "%s\t%s\t%s", st.Name, reach(cfgs[i]), st.State)
			if st.State == mcpbridge.StateRunning {
				fmt.Fprintf(stdout, "\t%d tools, %d resources, %d resource templates, %d prompts", st.Tools, st.Resources, st.Templates, st.Prompts)
			}
			if st.Err != "" {
				fmt.Fprintf(stdout, "\t%s", st.Err)
			}
			fmt.Fprintln(stdout)
		}
		return 0
	case "get":
		c, st := cfgs[0], m.Status()[0]
		fmt.Fprintf(stdout, "name: %s\nreached by: %s\n", c.Name, reach(c))
		if len(c.Env) > 0 {
			fmt.Fprintf(stdout, "env: %s\n", strings.Join(names(c.Env), ", "))
		}
		if len(c.Headers) > 0 {
			fmt.Fprintf(stdout, "headers: %s\n", strings.Join(names(c.Headers), ", "))
		}
		if t := c.Timeout(); t > 0 {
			fmt.Fprintf(stdout, "timeout: %v\n", t)
		}
		fmt.Fprintf(stdout, "state: %s\n", st.State)
		if st.Err != "" {
			fmt.Fprintf(stdout, "error: %s\n", st.Err)
			return 1
		}
		defs, _ := m.ServerTools(c.Name)
		fmt.Fprintf(stdout, "resources: %d\ntools: %d\n", st.Resources, len(defs))
		for _, d := range defs {
			line, _, _ := strings.Cut(strings.TrimSpace(d.Description), "\n")
			fmt.Fprintf(stdout, "  %s\t%s\n", d.Name, line)
		}
		if st.Templates > 0 {
			fmt.Fprintf(stdout, "resource templates: %d\n", st.Templates)
		}
		if ps := m.Prompts(); len(ps) > 0 {
			fmt.Fprintf(stdout, "prompts (slash commands in a prompt): %d\n", len(ps))
			for _, p := range ps {
				line, _, _ := strings.Cut(strings.TrimSpace(p.Description), "\n")
				fmt.Fprintf(stdout, "  /%s %s\t%s\n", p.Command(), p.Hint(), line)
			}
		}
		return 0
	}
	if st := m.Status()[0]; st.State != mcpbridge.StateRunning {
		return fail(1, "MCP server %q is %s: %s", st.Name, st.State, st.Err)
	}
	if cmd == "login" {
		if cfgs[0].Transport() != mcpbridge.TransportHTTP {
			return fail(1, "MCP server %q is not a Streamable HTTP server: it has no sign-in", args[0])
		}
		fmt.Fprintf(stdout, "MCP server %s: connected; a sign-in it asked for is kept under %s\n", args[0], stateDir)
		return 0
	}
	targs := json.RawMessage(`{}`)
	if len(args) == 3 {
		if !json.Valid([]byte(args[2])) {
			return fail(2, "the arguments are not JSON: %s", args[2])
		}
		targs = json.RawMessage(args[2])
	}
	res, err := callTool(ctx, m, args[0], args[1], targs)
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintln(stdout, res.Content)
	if res.IsError {
		return 1
	}
	return 0
}

// reach says how a server is reached, without what may be a secret.
func reach(c mcpbridge.ServerConfig) string {
	if t := c.Transport(); t != mcpbridge.TransportStdio {
		return t + " " + mcpbridge.DisplayURL(c.URL)
	}
	return strings.Join(append([]string{"stdio", c.Command}, c.Args...), " ")
}

// names lists the names of env variables or headers, not their values.
func names(vs []mcpbridge.NameValue) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// conformanceServer is the name the conformance client gives the server
// under test.
const conformanceServer = "conformance"

// mcpConformance plays the client under test of the MCP conformance
// suite (@modelcontextprotocol/conformance): the suite starts a server
// for a scenario and runs this with its URL, the scenario named in
// MCP_CONFORMANCE_SCENARIO and what it needs in MCP_CONFORMANCE_CONTEXT
// (JSON). The server is run by a Manager, as the daemon runs one, and
// called through use_mcp_tool; questions are accepted with the schema's
// defaults, and sign-in is the daemon's, with a browser that follows the
// suite's authorization server (it signs in without asking). Exit status 0 when
// the scenario's calls succeeded.
func mcpConformance(args []string, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: cline-ls mcp conformance-client URL")
		return 2
	}
	scenario := getenv("MCP_CONFORMANCE_SCENARIO")
	var sctx map[string]any
	if raw := getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sctx); err != nil {
			fmt.Fprintln(stderr, "cline-ls mcp conformance-client: MCP_CONFORMANCE_CONTEXT is not a JSON object:", err)
			return 2
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := mcpbridge.Options{Logger: logger, Version: version(), MaxRestarts: -1, Elicit: acceptDefaults{},
		ConnectTimeout: 30 * time.Second, CallTimeout: 30 * time.Second}
	if strings.HasPrefix(scenario, "auth/") {
		dir, err := os.MkdirTemp("", "cline-ls-conformance-")
		if err != nil {
			fmt.Fprintln(stderr, "cline-ls mcp conformance-client:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		opts.OAuth = conformanceOAuth(sctx, dir, logger)
	}
	m, err := mcpbridge.New([]mcpbridge.ServerConfig{{Name: conformanceServer, Type: mcpbridge.TransportHTTP, URL: args[0]}}, opts)
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls mcp conformance-client:", err)
		return 1
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.Start(ctx)
	if st := m.Status()[0]; st.State != mcpbridge.StateRunning {
		fmt.Fprintf(stderr, "cline-ls mcp conformance-client: the server is %s: %s\n", st.State, st.Err)
		return 1
	}
	tool, targs := conformanceCall(scenario)
	if tool == "" {
		return 0 // connecting and listing was the scenario
	}
	res, err := callTool(ctx, m, conformanceServer, tool, targs)
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls mcp conformance-client:", err)
		return 1
	}
	fmt.Fprintf(stderr, "%s: %s\n", tool, res.Content)
	if res.IsError {
		return 1
	}
	return 0
}

// conformanceCall is the tool call a scenario expects of the client once
// connected, if any.
func conformanceCall(scenario string) (string, json.RawMessage) {
	switch {
	case scenario == "tools_call":
		return "add_numbers", json.RawMessage(`{"a":5,"b":3}`)
	case scenario == "elicitation-sep1034-client-defaults":
		return "test_client_elicitation_defaults", json.RawMessage(`{}`)
	case scenario == "sse-retry":
		return "test_reconnection", json.RawMessage(`{}`)
	case strings.HasPrefix(scenario, "auth/"):
		return "test-tool", json.RawMessage(`{}`)
	}
	return "", nil
}

// callTool calls a server's tool through use_mcp_tool, the generic
// built-in: the arguments are checked against the tool's schema as a
// model's call would be.
func callTool(ctx context.Context, m *mcpbridge.Manager, server, tool string, args json.RawMessage) (tools.Result, error) {
	raw, _ := json.Marshal(map[string]any{"server_name": server, "tool_name": tool, "arguments": args})
	inv, err := m.Builtins()[tools.NameUseMCPTool](raw)
	if err != nil {
		return tools.Result{}, err
	}
	return inv.Execute(ctx, tools.ExecOptions{})
}

// acceptDefaults accepts every question, answering nothing: the
// Manager fills in the schema's defaults.
type acceptDefaults struct{}

func (acceptDefaults) Elicit(context.Context, string, string, json.RawMessage) (string, map[string]any) {
	return mcpbridge.ElicitAccept, map[string]any{}
}

// conformanceOAuth is the daemon's sign-in (mcpbridge.NewOAuth: the
// loopback redirect, the stored tokens) with the suite's client
// metadata document URL and pre-registered client, and a "browser" that
// follows the suite's authorization server, which redirects at once.
func conformanceOAuth(sctx map[string]any, stateDir string, logger *slog.Logger) func(mcpbridge.ServerConfig) auth.OAuthHandler {
	c := mcpbridge.OAuthConfig{StateDir: stateDir, Logger: logger, SignIn: browse,
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json"}
	id, _ := sctx["client_id"].(string)
	secret, _ := sctx["client_secret"].(string)
	if id != "" && secret != "" {
		c.Preregistered = &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}
	}
	return mcpbridge.NewOAuth(c)
}

// browse plays the user's browser on an authorization server that
// signs in without asking: it follows the redirects, the last one to
// the daemon's loopback port.
func browse(ctx context.Context, _, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
