package mcpbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/tools"
)

// maxResultChars bounds what one call shows the model, as the built-in
// tools do: a server that returns a whole database must not fill the
// context window.
const maxResultChars = 48000

// Builtins returns the implementations of the generic built-in tools
// use_mcp_tool {server_name, tool_name, arguments} and
// access_mcp_resource {server_name, uri}, keyed by tool name, for
// tools.Builtin or a session's implementation map. A call naming an
// unknown or disabled server, an unknown tool, or arguments that do not
// fit the tool's schema is refused at Build with a *tools.ValidationError
// naming the field, so the model can correct it.
func (m *Manager) Builtins() map[string]tools.BuildFunc {
	return map[string]tools.BuildFunc{
		tools.NameUseMCPTool:        tools.Typed(m.buildUseTool),
		tools.NameAccessMCPResource: tools.Typed(m.buildAccessResource),
	}
}

// useToolArgs are use_mcp_tool's arguments.
type useToolArgs struct {
	ServerName string          `json:"server_name"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
}

func (m *Manager) buildUseTool(a useToolArgs) (tools.Invocation, error) {
	s, err := m.lookup(a.ServerName)
	if err != nil {
		return nil, err
	}
	args := a.Arguments
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		args = json.RawMessage(`{}`)
	}
	if t, ok := m.toolFor(s.cfg.Name, a.ToolName); ok {
		// The dynamic tool checks the arguments against the server's
		// schema; its problems are about our "arguments" field.
		inv, err := t.Build(args)
		var ve *tools.ValidationError
		if errors.As(err, &ve) {
			problems := make([]tools.Problem, len(ve.Problems))
			for i, p := range ve.Problems {
				problems[i] = tools.Problem{Path: joinPath("arguments", p.Path), Message: p.Message}
			}
			return nil, &tools.ValidationError{Problems: problems}
		}
		return inv, err
	}
	if st := s.status(); st.State == StateRunning && !s.lists(a.ToolName) {
		return nil, problem("tool_name", fmt.Sprintf("MCP server %q has no tool %q; its tools are: %s",
			s.cfg.Name, a.ToolName, listOrNone(s.toolNames())))
	}
	// A tool left out of the model's list (tools.MCPLimits) is still the
	// server's: called as named, the server checks the arguments. Not
	// running: the call says why when it runs, as a call to one of the
	// server's own tools would.
	return &callInvocation{s: s, tool: a.ToolName, args: args}, nil
}

// accessResourceArgs are access_mcp_resource's arguments.
type accessResourceArgs struct {
	ServerName string `json:"server_name"`
	URI        string `json:"uri"`
}

func (m *Manager) buildAccessResource(a accessResourceArgs) (tools.Invocation, error) {
	s, err := m.lookup(a.ServerName)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.URI) == "" {
		return nil, problem("uri", "required")
	}
	return &readInvocation{s: s, uri: a.URI}, nil
}

// lookup finds the server use_mcp_tool or access_mcp_resource names.
func (m *Manager) lookup(name string) (*server, error) {
	s, ok := m.byName[name]
	if !ok {
		names := make([]string, 0, len(m.servers))
		for _, s := range m.servers {
			if !s.cfg.Disabled {
				names = append(names, s.cfg.Name)
			}
		}
		return nil, problem("server_name", fmt.Sprintf("no MCP server %q; the servers are: %s", name, listOrNone(names)))
	}
	if s.cfg.Disabled {
		return nil, problem("server_name", fmt.Sprintf("MCP server %q is disabled in the configuration", name))
	}
	return s, nil
}

func problem(path, msg string) error {
	return &tools.ValidationError{Problems: []tools.Problem{{Path: path, Message: msg}}}
}

func joinPath(a, b string) string {
	switch {
	case b == "":
		return a
	case strings.HasPrefix(b, "["):
		return a + b
	default:
		return a + "." + b
	}
}

// listOrNone lists names for a hint, at most 50 of them: a server's
// thousand tools must not come back whole in an error.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	out := strings.Join(names[:min(len(names), 50)], ", ")
	if len(names) > 50 {
		out += fmt.Sprintf(" and %d more", len(names)-50)
	}
	return out
}

// callInvocation is one call of a server's tool, through its dynamic tool
// or use_mcp_tool.
type callInvocation struct {
	s    *server
	tool string
	args json.RawMessage
}

// Describe titles the call "<server>: <tool>"; the arguments reach the
// client as the call's raw input.
func (c *callInvocation) Describe(context.Context) tools.Description {
	return tools.Description{Title: c.s.cfg.Name + ": " + c.tool, Kind: tools.KindOther}
}

// Execute calls the tool on the server's current session. Everything
// that goes wrong on the server's side is an error result, not a Go
// error: the daemon is fine, and the model may try another way.
func (c *callInvocation) Execute(ctx context.Context, opts tools.ExecOptions) (tools.Result, error) {
	sess, why := c.s.session()
	if sess == nil {
		return tools.Errorf("%s", why), nil
	}
	args := c.args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := sess.callTool(ctx, c.tool, args, opts.Output)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return c.s.failure(err, fmt.Sprintf("calling tool %q", c.tool), ""), nil
	}
	return toolResult(res), nil
}

// readInvocation is one access_mcp_resource call.
type readInvocation struct {
	s   *server
	uri string
}

// Describe titles the read "<server>: <uri>".
func (r *readInvocation) Describe(context.Context) tools.Description {
	return tools.Description{Title: r.s.cfg.Name + ": " + r.uri, Kind: tools.KindRead}
}

// Execute reads the resource. A failed read lists the resources the
// server offers, since the usual mistake is a wrong URI.
func (r *readInvocation) Execute(ctx context.Context, _ tools.ExecOptions) (tools.Result, error) {
	sess, why := r.s.session()
	if sess == nil {
		return tools.Errorf("%s", why), nil
	}
	res, err := sess.readResource(ctx, r.uri)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		hint := ""
		if known := r.s.knownResources(); len(known) > 0 {
			hint = " Its resources are: " + strings.Join(known[:min(len(known), 20)], ", ")
			if len(known) > 20 {
				hint += fmt.Sprintf(" and %d more", len(known)-20)
			}
			hint += "."
		}
		if ts := r.s.knownTemplates(); len(ts) > 0 {
			hint += " Its resource templates (fill in the {parts}) are: " + strings.Join(ts[:min(len(ts), 20)], ", ")
			if len(ts) > 20 {
				hint += fmt.Sprintf(" and %d more", len(ts)-20)
			}
			hint += "."
		}
		return r.s.failure(err, fmt.Sprintf("reading %q", r.uri), hint), nil
	}
	parts := make([]string, 0, len(res.Contents))
	for _, c := range res.Contents {
		parts = append(parts, resourceText(c))
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		text = fmt.Sprintf("Resource %s is empty.", r.uri)
	}
	return tools.Result{Content: limit(text)}, nil
}

// failure phrases a failed request for the model; the caller's own
// cancellation was handled before.
func (s *server) failure(err error, what, hint string) tools.Result {
	r := s.failureResult(err, what, hint)
	r.Content = s.redact(r.Content)
	return r
}

func (s *server) failureResult(err error, what, hint string) tools.Result {
	name := s.cfg.Name
	var werr *jsonrpc.Error
	var terr *TimeoutError
	var refused *httpRefusal
	switch {
	case errors.As(err, &refused):
		return tools.Errorf("MCP server %q refused %s: %s.%s", name, what, refused.status, hint)
	case errors.As(err, &terr):
		return tools.Errorf("MCP server %q did not finish %s within its time limit of %v, so the call was cancelled. The limit is the server's \"timeoutSeconds\" setting (default %v).", name, what, terr.Limit, DefaultCallTimeout)
	case errors.Is(err, ErrMessageTooLong):
		return tools.Errorf("MCP server %q sent a message longer than %d bytes while %s; the connection was closed and is being restarted.", name, maxMessage, what)
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return tools.Errorf("MCP server %q: the connection was lost while %s (the server may have stopped); it is being restarted, try again shortly.", name, what)
	case errors.As(err, &werr):
		return tools.Errorf("MCP server %q refused %s: %s.%s", name, what, werr.Message, hint)
	default:
		return tools.Errorf("MCP server %q: %s failed: %v.%s", name, what, err, hint)
	}
}

// toolResult turns an MCP tool result into what the model is shown.
// Only text reaches the model as such; images, audio and binary
// resources are summarised, since a tool result here is text.
func toolResult(res *callToolResult) tools.Result {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(res.Content) == 0 && offers(res.StructuredContent) {
		// Decoded and encoded again: compact, with members in order.
		var v any
		if json.Unmarshal(res.StructuredContent, &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
		if res.IsError {
			text = "The tool failed without saying why."
		}
	}
	return tools.Result{Content: limit(text), IsError: res.IsError}
}

func contentText(c content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s, %s, %d bytes, not shown]", c.Type, cmp.Or(c.MIMEType, "unknown type"), base64Len(c.Data))
	case "resource_link":
		s := "[resource " + c.URI
		if n := cmp.Or(c.Title, c.Name); n != "" {
			s += ": " + n
		}
		s += "]"
		if c.Description != "" {
			s += " " + c.Description
		}
		return s
	case "resource":
		return resourceText(c.Resource)
	default:
		// Content kinds newer than this code: their JSON beats nothing.
		var b bytes.Buffer
		if json.Compact(&b, c.raw) != nil {
			return fmt.Sprintf("[%s content]", c.Type)
		}
		return b.String()
	}
}

// resourceText shows a resource's text, headed by its URI, or a summary
// of binary contents.
func resourceText(r *resourceContents) string {
	if r == nil {
		return ""
	}
	if len(r.Blob) > 0 && r.Text == "" {
		return fmt.Sprintf("[resource %s, %s, %d bytes of binary data, not shown]", r.URI, cmp.Or(r.MIMEType, "unknown type"), base64Len(r.Blob))
	}
	return "[resource " + r.URI + "]\n" + r.Text
}

// limit cuts text longer than maxResultChars in the middle, where the
// least useful part of most outputs is, and says how much went.
func limit(text string) string {
	if utf8.RuneCountInString(text) <= maxResultChars {
		return text
	}
	r := []rune(text)
	keep := maxResultChars / 2
	return fmt.Sprintf("%s\n[... %d characters cut ...]\n%s", string(r[:keep]), len(r)-2*keep, string(r[len(r)-keep:]))
}
