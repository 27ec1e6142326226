package mcpbridge

//lint:file-ignore SA1019 roots and logging are deprecated only from protocol version 2026-07-28; the client speaks the initialize handshake (2025-11-25 and older), where servers still use them.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server asks of the client: a question for the user
// (elicitation/create), the workspace's folders (roots/list); and what
// it tells it: log messages and the progress of a call. The model
// (sampling/createMessage) is not lent: sampling is not advertised, and
// a server that asks all the same is told why.

// Elicitor asks the user what a server wants to know. schema is the
// requested schema as the server sent it (a flat object of primitive
// properties). action is "accept", "decline" or "cancel"; content, on
// accept, holds the user's answers by property. A Manager fills in the
// schema's defaults for properties the answer leaves out.
type Elicitor interface {
	Elicit(ctx context.Context, server, message string, schema json.RawMessage) (action string, content map[string]any)
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// elicit answers elicitation/create through e, or declines when the
// daemon has no one to ask.
func elicit(server string, e Elicitor, logger *slog.Logger) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		if p.Mode == "url" {
			// A URL to open is not asked as a form; the user would be
			// sent to a page the server chose.
			return &mcp.ElicitResult{Action: ElicitDecline}, nil
		}
		if e == nil {
			return &mcp.ElicitResult{Action: ElicitDecline}, nil
		}
		schema, _ := json.Marshal(p.RequestedSchema)
		action, content := e.Elicit(ctx, server, p.Message, schema)
		logger.Info("mcp: the server asked the user", "answer", action)
		switch action {
		case ElicitAccept:
			return &mcp.ElicitResult{Action: action, Content: withDefaults(schema, content)}, nil
		case ElicitDecline:
			return &mcp.ElicitResult{Action: action}, nil
		default:
			return &mcp.ElicitResult{Action: ElicitCancel}, nil
		}
	}
}

// withDefaults returns content with the schema's default for each
// property it leaves out.
func withDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	out := make(map[string]any, len(s.Properties))
	for name, p := range s.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	for k, v := range content {
		out[k] = v
	}
	return out
}

// ElicitField is one property of an elicitation's schema, as a question
// to ask: its name, its title or description, the choices it allows
// (an enum's values, or true and false) and its default.
type ElicitField struct {
	Name     string
	Prompt   string
	Choices  []string
	Default  any
	Required bool
	Type     string // "string", "number", "integer" or "boolean"
}

// ElicitFields reads an elicitation's schema into the questions that
// fill it, in a stable order (required first, then by name), for an
// Elicitor to ask.
func ElicitFields(schema json.RawMessage) []ElicitField {
	var s struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	var out []ElicitField
	for name, p := range s.Properties {
		f := ElicitField{Name: name, Prompt: p.Title, Default: p.Default, Required: slices.Contains(s.Required, name), Type: p.Type}
		if f.Prompt == "" {
			f.Prompt = name
		}
		if p.Description != "" {
			f.Prompt += " (" + p.Description + ")"
		}
		for _, v := range p.Enum {
			f.Choices = append(f.Choices, fmt.Sprint(v))
		}
		for _, o := range p.OneOf {
			f.Choices = append(f.Choices, fmt.Sprint(o.Const))
		}
		if p.Type == "boolean" {
			f.Choices = []string{"true", "false"}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b ElicitField) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// codeUnsupported is the SDK's code for a request the client does not
// serve.
const codeUnsupported = -31001

// refuseSampling answers sampling/createMessage with why: the daemon
// does not lend a server its model (the SDK's own answer says only that
// the client does not support it).
func refuseSampling(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "sampling/createMessage" {
			return nil, &jsonrpc.Error{Code: codeUnsupported, Message: "cline-ls does not let MCP servers use its model: sampling/createMessage is refused"}
		}
		return next(ctx, method, req)
	}
}

// maxLogData bounds what one of a server's log messages puts in the
// daemon's log.
const maxLogData = 2000

// serverLog writes a server's log messages into the daemon's log, at
// the matching level.
func serverLog(logger *slog.Logger) func(context.Context, *mcp.LoggingMessageRequest) {
	return func(ctx context.Context, req *mcp.LoggingMessageRequest) {
		p := req.Params
		b, _ := json.Marshal(p.Data)
		data := string(b)
		if len(data) > maxLogData {
			data = data[:maxLogData] + "…"
		}
		level := slog.LevelInfo
		switch p.Level {
		case "debug":
			level = slog.LevelDebug
		case "notice", "info":
		case "warning":
			level = slog.LevelWarn
		default: // error, critical, alert, emergency
			level = slog.LevelError
		}
		logger.Log(ctx, level, "mcp: server log", "level", string(p.Level), "logger", p.Logger, "data", data)
	}
}

// progress routes a server's progress notifications to the call that
// gave their token.
type progress struct {
	next   atomic.Int64
	routes sync.Map // token (string) → func(string)
}

// token registers out for one call and returns its token and the
// function that unregisters it.
func (p *progress) token(out func(string)) (string, func()) {
	tok := fmt.Sprintf("cline-ls-%d", p.next.Add(1))
	p.routes.Store(tok, out)
	return tok, func() { p.routes.Delete(tok) }
}

func (p *progress) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, _ := req.Params.ProgressToken.(string)
	out, ok := p.routes.Load(tok)
	if !ok {
		return
	}
	msg := req.Params.Message
	switch {
	case req.Params.Total > 0:
		msg = strings.TrimSpace(fmt.Sprintf("[%g/%g] %s", req.Params.Progress, req.Params.Total, msg))
	case msg == "":
		msg = fmt.Sprintf("[%g]", req.Params.Progress)
	}
	out.(func(string))(msg + "\n")
}

// rootsOf makes MCP roots of folder paths.
func rootsOf(paths []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(paths))
	for _, p := range paths {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		if !strings.HasPrefix(u.Path, "/") {
			u.Path = "/" + u.Path // a Windows drive
		}
		out = append(out, &mcp.Root{URI: u.String(), Name: filepath.Base(p)})
	}
	return out
}

// setRoots changes the client's roots from old to paths; the SDK tells
// the servers connected (roots/list_changed) when they changed.
func setRoots(c *mcp.Client, old, paths []string) {
	uris := func(rs []*mcp.Root) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.URI
		}
		return out
	}
	was, now := rootsOf(old), rootsOf(paths)
	wasURIs, nowURIs := uris(was), uris(now)
	var gone []string
	for _, u := range wasURIs {
		if !slices.Contains(nowURIs, u) {
			gone = append(gone, u)
		}
	}
	var added []*mcp.Root
	for _, r := range now {
		if !slices.Contains(wasURIs, r.URI) {
			added = append(added, r)
		}
	}
	if len(gone) > 0 {
		c.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		c.AddRoots(added...)
	}
}
