package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/internal/sse"
)

// The MCP client: JSON-RPC through internal/jsonrpcclient, one message
// per line whatever the transport; a link (transport.go) carries the
// lines to the server and back.

// maxMessage bounds one message from a server: a line on stdio, a JSON
// answer or an event over HTTP. The model is shown at most maxResultChars
// of a result, so a bigger one is a server gone wrong; one bound for all
// transports, the event reader's.
const maxMessage = sse.MaxLine

// maxPages bounds the pages of one listing: a server that hands out
// cursors for ever must not keep the listing going until the timeout.
const maxPages = 1000

// link is what a session runs over: the server's messages, one JSON-RPC
// message per line (r), and where ours go (w, written one line at a
// time; closing it ends the session from our side). wait, called after w
// is closed, returns once everything the link started has ended: a stdio
// server's process waited for, HTTP requests and streams closed.
type link struct {
	r    io.Reader
	w    io.WriteCloser
	wait func()
}

// session is one MCP session with a server.
type session struct {
	rpc  *jsonrpcclient.Client
	link link
	init initializeResult // once initialize has succeeded
	// timeout bounds each request; positive.
	timeout time.Duration

	closeOnce sync.Once
}

// newSession starts the JSON-RPC connection over l; initialize does the
// handshake. changed is called, on the read loop, when the server says its
// tool or resource list changed; it must not block.
func newSession(l link, timeout time.Duration, logger *slog.Logger, changed func()) *session {
	rpc := jsonrpcclient.New(l.r, l.w, jsonrpcclient.Options{
		Framing:  jsonrpcclient.ACP, // newline-delimited JSON, as MCP's stdio transport
		Discard:  true,
		MaxFrame: maxMessage,
		Observe: func(m jsonrpcclient.Message) {
			if m.ID == nil && (m.Method == notifyToolListChanged || m.Method == notifyResourceListChanged) {
				changed()
			}
		},
		Cancel: func(method string, id json.RawMessage) (string, any) {
			if method == methodInitialize {
				return "", nil // MCP does not cancel the handshake: the connection is closed instead
			}
			return notifyCancelled, cancelledParams{RequestID: id, Reason: "the call was cancelled"}
		},
		Malformed: func(body []byte, err error) {
			logger.Warn("mcp: skipped a message from the server that is not JSON-RPC", "start", string(body[:min(len(body), 200)]), "err", err)
		},
	})
	// Roots, sampling and elicitation are not advertised; their requests
	// are answered "method not found".
	rpc.Handle(methodPing, func(context.Context, json.RawMessage) (any, error) { return struct{}{}, nil })
	return &session{rpc: rpc, link: l, timeout: timeout}
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

// initialize does the MCP handshake: initialize, a check of the version
// the server chose, then notifications/initialized.
func (s *session) initialize(ctx context.Context, version string) error {
	params := initializeParams{ProtocolVersion: protocolVersion, ClientInfo: implementation{Name: "cline-ls", Version: version}}
	var res initializeResult
	if err := s.call(ctx, methodInitialize, params, &res); err != nil {
		return fmt.Errorf("initializing: %w", err)
	}
	if !accepted(res.ProtocolVersion) {
		return fmt.Errorf("the server speaks MCP version %q; cline-ls speaks %v", res.ProtocolVersion, acceptedVersions)
	}
	s.init = res
	if err := s.rpc.Notify(ctx, notifyInitialized, struct{}{}); err != nil {
		return fmt.Errorf("initializing: %w", err)
	}
	return nil
}

// call sends a request and decodes its answer into result. Every
// request is bounded by the session's timeout, here and nowhere else; a
// request given up is cancelled on the server (the client's Cancel).
func (s *session) call(ctx context.Context, method string, params, result any) error {
	limit := &TimeoutError{Method: method, Limit: s.timeout}
	callCtx, cancel := context.WithTimeoutCause(ctx, s.timeout, limit)
	defer cancel()
	raw, err := s.rpc.CallRaw(callCtx, method, params)
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(callCtx), limit) {
			return limit
		}
		return err
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("the answer to %s cannot be read: %w", method, err)
	}
	return nil
}

// listTools lists the server's tools, every page.
func (s *session) listTools(ctx context.Context) ([]mcpTool, error) {
	var out []mcpTool
	err := pages(func(cursor string) (string, error) {
		var res listToolsResult
		err := s.call(ctx, methodToolsList, cursorParams{Cursor: cursor}, &res)
		out = append(out, res.Tools...)
		return res.NextCursor, err
	})
	return out, err
}

// listResources lists the URIs of the server's resources, every page.
func (s *session) listResources(ctx context.Context) ([]string, error) {
	var out []string
	err := pages(func(cursor string) (string, error) {
		var res listResourcesResult
		err := s.call(ctx, methodResourcesList, cursorParams{Cursor: cursor}, &res)
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return res.NextCursor, err
	})
	return out, err
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

// callTool calls a tool; args is a JSON object.
func (s *session) callTool(ctx context.Context, name string, args json.RawMessage) (*callToolResult, error) {
	var res callToolResult
	if err := s.call(ctx, methodToolsCall, callToolParams{Name: name, Arguments: args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// readResource reads a resource.
func (s *session) readResource(ctx context.Context, uri string) (*readResourceResult, error) {
	var res readResourceResult
	if err := s.call(ctx, methodResourcesRead, readResourceParams{URI: uri}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// done is closed when the session has ended: the server's side closed,
// or close was called.
func (s *session) done() <-chan struct{} { return s.rpc.Done() }

// endErr says why the session ended, once done is closed: nil when the
// server's output simply ended.
func (s *session) endErr() error {
	if err := s.rpc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// close ends the session and waits until everything it started has
// stopped. Calls still waiting fail with jsonrpcclient.ErrClosed.
func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.rpc.Close() // closes the link's writing side
		s.link.wait()
		<-s.rpc.Done()
	})
}
