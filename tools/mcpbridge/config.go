package mcpbridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/wire"
)

// Transport names a ServerConfig may give in its "type" field. ACP leaves
// the field out for stdio servers, so an empty Type means stdio too.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// ServerConfig is one MCP server as the client configured it, in ACP's
// McpServer shape: a stdio server {name, command, args, env} or an HTTP
// server {type:"http"|"sse", name, url, headers}, plus our own
// "disabled". Env and headers stay lists, as on the wire, so their order
// (and so which of two equal names wins) is the client's.
type ServerConfig struct {
	Name     string      `json:"name"`
	Type     string      `json:"type,omitempty"`
	Command  string      `json:"command,omitempty"`
	Args     []string    `json:"args,omitempty"`
	Env      []NameValue `json:"env,omitempty"`
	URL      string      `json:"url,omitempty"`
	Headers  []NameValue `json:"headers,omitempty"`
	Disabled bool        `json:"disabled,omitempty"`
	// TimeoutSeconds bounds each request to the server (the handshake,
	// each page of a listing, a tool call, a resource read) and, when
	// longer than Options.ConnectTimeout, its start; nil means
	// Options.CallTimeout.
	TimeoutSeconds *float64 `json:"timeoutSeconds,omitempty"`
}

// MaxTimeoutSeconds is the longest timeoutSeconds a server may be given:
// a call that may take longer than an hour is better run as a command the
// user can watch.
const MaxTimeoutSeconds = 3600

// Timeout returns the server's own timeout, or 0 when it has none.
func (c ServerConfig) Timeout() time.Duration {
	if c.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*c.TimeoutSeconds * float64(time.Second))
}

// NameValue is an environment variable of a stdio server or a header of
// an HTTP one (ACP's EnvVariable and HttpHeader).
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Transport returns the server's transport: TransportStdio,
// TransportHTTP or TransportSSE.
func (c ServerConfig) Transport() string {
	if c.Type == "" {
		return TransportStdio
	}
	return c.Type
}

// ParseConfig decodes and checks the mcpServers list of
// initializationOptions or session/new. Errors name the entry and field
// at fault ("mcpServers[1].command: required") so the client's author can
// fix the configuration; unknown fields such as ACP's _meta are ignored.
// A nil or empty list gives no servers and no error.
func ParseConfig(raw []json.RawMessage) ([]ServerConfig, error) {
	out := make([]ServerConfig, 0, len(raw))
	for i, r := range raw {
		var c ServerConfig
		if err := json.Unmarshal(r, &c); err != nil {
			return nil, fieldError(i, err)
		}
		out = append(out, c)
	}
	if err := validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// fieldError turns a decoding error into one that names the field.
func fieldError(i int, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		at := fmt.Sprintf("mcpServers[%d]", i)
		if te.Field != "" {
			at += "." + te.Field
		}
		return fmt.Errorf("%s: must be %s, got %s", at, wire.JSONKind(te.Type), te.Value)
	}
	return fmt.Errorf("mcpServers[%d]: %w", i, err)
}

// validate checks what decoding cannot: required fields, known transport
// types, usable URLs and unique names. Names must be unique because a
// server's name is the UID in its tools' names and in use_mcp_tool.
func validate(cfgs []ServerConfig) error {
	seen := make(map[string]int, len(cfgs))
	for i, c := range cfgs {
		at := fmt.Sprintf("mcpServers[%d]", i)
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("%s.name: required", at)
		}
		if j, dup := seen[c.Name]; dup {
			return fmt.Errorf("%s.name: %q is already the name of mcpServers[%d]", at, c.Name, j)
		}
		seen[c.Name] = i
		if t := c.TimeoutSeconds; t != nil && !(*t >= 1 && *t <= MaxTimeoutSeconds) {
			return fmt.Errorf("%s.timeoutSeconds: must be between 1 and %d, got %v", at, MaxTimeoutSeconds, *t)
		}
		switch c.Transport() {
		case TransportStdio:
			if strings.TrimSpace(c.Command) == "" {
				return fmt.Errorf("%s.command: required", at)
			}
			for k, e := range c.Env {
				if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
					return fmt.Errorf("%s.env[%d].name: must be a non-empty name without \"=\", got %q", at, k, e.Name)
				}
			}
		case TransportHTTP, TransportSSE:
			if c.URL == "" {
				return fmt.Errorf("%s.url: required", at)
			}
			u, err := url.Parse(c.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s.url: must be an absolute http or https URL, got %q", at, c.URL)
			}
			for k, h := range c.Headers {
				if h.Name == "" || strings.ContainsAny(h.Name, " \t\r\n:") {
					return fmt.Errorf("%s.headers[%d].name: must be a header name, got %q", at, k, h.Name)
				}
				if strings.ContainsAny(h.Value, "\r\n") {
					return fmt.Errorf("%s.headers[%d].value: must be one line", at, k)
				}
			}
		default:
			return fmt.Errorf("%s.type: must be %q, %q or absent (stdio), got %q", at, TransportHTTP, TransportSSE, c.Type)
		}
	}
	return nil
}
