package mcpbridge

//lint:file-ignore SA1019 roots and logging are deprecated only from protocol version 2026-07-28; the client speaks the initialize handshake (2025-11-25 and older), where servers still use them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/internal/sse"
)

// The MCP client is the SDK's (github.com/modelcontextprotocol/go-sdk);
// around it this file keeps what the daemon adds: every request bounded
// by the server's timeout and named when it runs out, listings bounded in
// pages, the session's end observed, and answers read into the shapes
// the tool results are made from (protocol.go).

// maxMessage bounds one message from a server: a line on stdio, a JSON
// answer or an event over HTTP. The model is shown at most maxResultChars
// of a result, so a bigger one is a server gone wrong; one bound for all
// transports, the event reader's.
const maxMessage = sse.MaxLine

// maxPages bounds the pages of one listing: a server that hands out
// cursors for ever must not keep the listing going until the timeout.
const maxPages = 1000

// link is what a session is opened over: the SDK transport, and what
// the daemon needs to know of it. wait, called after the session is
// closed, returns once everything the link started has ended (a stdio
// server's process waited for); failed says why the link broke on our
// side (a message too long), nil when it did not.
type link struct {
	transport mcp.Transport
	wait      func()
	failed    func() error
	// refusal, over HTTP, is the last HTTP error status the server
	// answered with and what it said, for the error of the request it
	// failed; nil for stdio.
	refusal func() string
}

// session is one MCP session with a server.
type session struct {
	client   *mcp.Client
	progress *progress
	cs       *mcp.ClientSession
	link     link
	init     *mcp.InitializeResult // once initialize has succeeded
	// timeout bounds each request; positive.
	timeout time.Duration

	roots []string // what the client was last given; guarded by the Manager's rootsMu

	ended   chan struct{} // closed when the SDK's session has ended
	waitErr error         // set before ended is closed

	closeOnce sync.Once
}

// handlers is what a session calls back: changed when the server says
// its lists changed (on the SDK's reading goroutine; it must not block),
// elicit for the user's answers; roots are the workspace folders when the
// session starts.
type handlers struct {
	server  string
	changed func()
	logger  *slog.Logger
	elicit  Elicitor
	sample  Sampler
	roots   []string
}

// TimeoutError is why a request failed when the server did not answer
// within its timeout.
type TimeoutError struct {
	Method string
	Limit  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no answer to %s within %v", e.Method, e.Limit)
}

// newClient is the SDK client of one connection to a server. It
// advertises roots (the workspace folders, with list changes), form
// elicitation and, when the Manager has a Sampler, sampling; without one
// sampling is not advertised, and refused.
func newClient(version string, h handlers, prog *progress) *mcp.Client {
	changed := func() {
		if h.changed != nil {
			h.changed()
		}
	}
	opts := &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}},
		ElicitationHandler:          elicit(h.server, h.elicit, h.logger),
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { changed() },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { changed() },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { changed() },
		LoggingMessageHandler:       serverLog(h.logger),
		ProgressNotificationHandler: prog.handle,
	}
	if h.sample != nil {
		opts.CreateMessageHandler = sample(h.server, h.sample, h.logger)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "cline-ls", Version: version}, opts)
	if h.sample == nil {
		c.AddReceivingMiddleware(refuseSampling)
	}
	c.AddRoots(rootsOf(h.roots)...)
	return c
}

// connectSession opens a session over l and does the handshake within
// ctx and handshake; timeout bounds each later request.
func connectSession(ctx context.Context, l link, handshake, timeout time.Duration, version string, h handlers) (*session, error) {
	s := &session{link: l, timeout: timeout, ended: make(chan struct{}), progress: &progress{}}
	s.client, s.roots = newClient(version, h, s.progress), h.roots
	limit := &TimeoutError{Method: "initialize", Limit: handshake}
	cctx, cancel := context.WithTimeoutCause(ctx, handshake, limit)
	defer cancel()
	// The version asked for is the newest of the initialize handshake:
	// the stateless one that replaces it is not probed for, so that a
	// server that does not answer unknown methods still starts.
	cs, err := s.client.Connect(cctx, l.transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		if ferr := l.failed(); ferr != nil {
			err = ferr
		} else if ctx.Err() == nil && errors.Is(context.Cause(cctx), limit) {
			err = limit
		}
		return nil, fmt.Errorf("initializing: %w", err)
	}
	s.cs, s.init = cs, cs.InitializeResult()
	if s.init.Capabilities != nil && s.init.Capabilities.Logging != nil {
		// Info and above: what a user looking into a server needs, not
		// its debugging.
		if err := cs.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			h.logger.Warn("mcp: the server refused logging/setLevel", "err", err)
		}
	}
	go func() {
		s.waitErr = cs.Wait()
		close(s.ended)
	}()
	return s, nil
}

// call runs one request with the session's timeout, here and nowhere
// else: the SDK cancels a request given up on the server
// (notifications/cancelled).
func call[R any](ctx context.Context, s *session, method string, do func(context.Context) (R, error)) (R, error) {
	limit := &TimeoutError{Method: method, Limit: s.timeout}
	callCtx, cancel := context.WithTimeoutCause(ctx, s.timeout, limit)
	defer cancel()
	res, err := do(callCtx)
	if err != nil {
		var zero R
		if ferr := s.link.failed(); ferr != nil {
			return zero, ferr
		}
		if ctx.Err() == nil && errors.Is(context.Cause(callCtx), limit) {
			return zero, limit
		}
		var werr *jsonrpc.Error
		if s.link.refusal != nil && errors.As(err, &werr) && werr.Code == codeRejected {
			if r := s.link.refusal(); r != "" {
				err = &httpRefusal{status: r, err: err}
			}
		}
		return zero, err
	}
	return res, nil
}

// codeRejected is the SDK's code for a request its HTTP transport
// could not deliver: the server answered an HTTP error status.
const codeRejected = -32005

// httpRefusal is a request the server refused with an HTTP error
// status, with what it said.
type httpRefusal struct {
	status string
	err    error
}

func (e *httpRefusal) Error() string { return e.err.Error() + " (" + e.status + ")" }
func (e *httpRefusal) Unwrap() error { return e.err }

// listTools lists the server's tools, every page.
func (s *session) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	err := pages(func(cursor string) (string, error) {
		res, err := call(ctx, s, "tools/list", func(ctx context.Context) (*mcp.ListToolsResult, error) {
			return s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		})
		if err != nil {
			return "", err
		}
		out = append(out, res.Tools...)
		return res.NextCursor, nil
	})
	return out, err
}

// listResources lists the URIs of the server's resources, every page.
func (s *session) listResources(ctx context.Context) ([]string, error) {
	var out []string
	err := pages(func(cursor string) (string, error) {
		res, err := call(ctx, s, "resources/list", func(ctx context.Context) (*mcp.ListResourcesResult, error) {
			return s.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		})
		if err != nil {
			return "", err
		}
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return res.NextCursor, nil
	})
	return out, err
}

// listTemplates lists the server's resource URI templates, every page.
func (s *session) listTemplates(ctx context.Context) ([]string, error) {
	var out []string
	err := pages(func(cursor string) (string, error) {
		res, err := call(ctx, s, "resources/templates/list", func(ctx context.Context) (*mcp.ListResourceTemplatesResult, error) {
			return s.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		})
		if err != nil {
			return "", err
		}
		for _, t := range res.ResourceTemplates {
			out = append(out, t.URITemplate)
		}
		return res.NextCursor, nil
	})
	return out, err
}

// listPrompts lists the server's prompts, every page.
func (s *session) listPrompts(ctx context.Context) ([]PromptDef, error) {
	var out []PromptDef
	err := pages(func(cursor string) (string, error) {
		res, err := call(ctx, s, "prompts/list", func(ctx context.Context) (*mcp.ListPromptsResult, error) {
			return s.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		})
		if err != nil {
			return "", err
		}
		for _, p := range res.Prompts {
			d := PromptDef{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				if a != nil {
					d.Arguments = append(d.Arguments, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			out = append(out, d)
		}
		return res.NextCursor, nil
	})
	return out, err
}

// getPrompt fetches a prompt's messages with its arguments filled.
func (s *session) getPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return call(ctx, s, "prompts/get", func(ctx context.Context) (*mcp.GetPromptResult, error) {
		return s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	})
}

// pages calls page with each cursor the previous page gave, starting
// with none, until a page gives none.
func pages(page func(cursor string) (next string, err error)) error {
	cursor := ""
	seen := map[string]bool{}
	for range maxPages {
		next, err := page(cursor)
		if err != nil || next == "" {
			return err
		}
		if seen[next] {
			return fmt.Errorf("the server gave cursor %q twice", next)
		}
		seen[next] = true
		cursor = next
	}
	return fmt.Errorf("the listing has more than %d pages", maxPages)
}

// callTool calls a tool; args is a JSON object. The server's progress
// notifications for the call go to out, when it is not nil.
func (s *session) callTool(ctx context.Context, name string, args json.RawMessage, out func(string)) (*callToolResult, error) {
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if out != nil {
		tok, done := s.progress.token(out)
		defer done()
		params.SetProgressToken(tok)
	}
	res, err := call(ctx, s, "tools/call", func(ctx context.Context) (*mcp.CallToolResult, error) {
		return s.cs.CallTool(ctx, params)
	})
	if err != nil {
		return nil, err
	}
	var shown callToolResult
	return &shown, reshape(res, &shown)
}

// readResource reads a resource.
func (s *session) readResource(ctx context.Context, uri string) (*readResourceResult, error) {
	res, err := call(ctx, s, "resources/read", func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		return s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
	if err != nil {
		return nil, err
	}
	var out readResourceResult
	return &out, reshape(res, &out)
}

// reshape reads an SDK result into the shapes results are shown from,
// through its wire form: one reading of content for every path, the
// raw block kept for kinds newer than this code.
func reshape(from, to any) error {
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, to)
	}
	if err != nil {
		return fmt.Errorf("the answer cannot be read: %w", err)
	}
	return nil
}

// syncRoots gives the client paths as its roots, if they changed.
func (s *session) syncRoots(paths []string) {
	setRoots(s.client, s.roots, paths)
	s.roots = slices.Clone(paths)
}

// done is closed when the session has ended: the server's side closed,
// or close was called.
func (s *session) done() <-chan struct{} { return s.ended }

// endErr says why the session ended, once done is closed: nil when the
// server's output simply ended.
func (s *session) endErr() error {
	if err := s.link.failed(); err != nil {
		return err
	}
	if s.waitErr != nil && !errors.Is(s.waitErr, mcp.ErrConnectionClosed) {
		return s.waitErr
	}
	return nil
}

// close ends the session and waits until everything it started has
// stopped. Calls still waiting fail with mcp.ErrConnectionClosed.
func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.cs.Close()
		s.link.wait()
		<-s.ended
	})
}
