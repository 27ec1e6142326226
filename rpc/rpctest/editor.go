// Package rpctest provides a fake editor that drives a real rpc.Server over
// an in-memory pipe, the way gopls's integration tests drive gopls: tests
// open buffers, type into them, answer the server's requests and assert on
// the notifications it sends.
package rpctest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/workspace"
)

// Message is a notification or request the server sent to the editor.
type Message struct {
	Method string
	Params json.RawMessage
}

// RequestHandler answers a server-to-client request. Returning (nil, nil)
// answers null.
type RequestHandler func(ctx context.Context, params json.RawMessage) (any, error)

// Editor is a fake LSP client connected to a real server.
type Editor struct {
	t      testing.TB
	Server *rpc.Server
	conn   jsonrpc2.Conn
	raw    net.Conn // the editor's end of the pipe, for hand-made frames

	mu       sync.Mutex
	msgs     []Message
	arrived  chan struct{} // closed and replaced when a message arrives
	handlers map[string]RequestHandler
	docs     map[string]*doc
	enc      workspace.Encoding

	served chan struct{}
	code   int
	err    error

	// Mode selects how workspace/applyEdit is answered.
	Mode ApplyMode
	// Applied counts workspace/applyEdit requests the editor applied.
	Applied int
}

type doc struct {
	version int32
	text    string
	pending []any // content changes typed but not yet sent (debounced)
}

// ApplyMode is how the fake editor answers workspace/applyEdit.
type ApplyMode int

// The behaviours of real clients the daemon must survive.
const (
	// ApplyNormal applies an edit for the current version and refuses one
	// for an older version with an error, as VS Code and eglot do ("Edits
	// on X require version N, you have M").
	ApplyNormal ApplyMode = iota
	// ApplySkipStale answers applied:true but silently skips an edit for
	// an older version, as Neovim does.
	ApplySkipStale
	// ApplyRefuse answers applied:false, as a user declining would.
	ApplyRefuse
)

// New starts a server with opts and connects a fake editor to it. The
// connection is torn down when the test ends.
func New(t testing.TB, opts rpc.Options) *Editor {
	t.Helper()
	srvEnd, edEnd := net.Pipe()
	e := &Editor{
		t:        t,
		Server:   rpc.NewServer(opts),
		raw:      edEnd,
		arrived:  make(chan struct{}),
		handlers: make(map[string]RequestHandler),
		docs:     make(map[string]*doc),
		enc:      workspace.UTF16,
		served:   make(chan struct{}),
	}
	go func() {
		defer close(e.served)
		e.code, e.err = e.Server.Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	e.handlers["workspace/applyEdit"] = e.applyEdit
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(edEnd))
	e.conn.Go(context.Background(), e.handle)
	t.Cleanup(func() {
		e.conn.Close()
		edEnd.Close()
		select {
		case <-e.served:
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop after the editor closed the connection")
		}
	})
	return e
}

// Handle installs the answer to server requests of one method.
func (e *Editor) Handle(method string, h RequestHandler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers[method] = h
}

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	params := json.RawMessage(slices.Clone(req.Params()))
	m := Message{Method: strings.Clone(req.Method()), Params: params} // the request is borrowed from the read buffer
	e.mu.Lock()
	e.msgs = append(e.msgs, m)
	close(e.arrived)
	e.arrived = make(chan struct{})
	h := e.handlers[req.Method()]
	e.mu.Unlock()
	if !req.IsCall() {
		return nil, nil
	}
	// Messages are recorded inline, in wire order; answering a request
	// may wait on the server, so it runs off the read loop.
	jsonrpc2.Async(ctx)
	if h == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "fake editor: no handler for %s", req.Method())
	}
	return h(ctx, params)
}

// Call sends a request and decodes its result into result (may be nil).
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	var raw json.RawMessage
	_, err := e.conn.Call(ctx, method, params, &raw)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		return json.Unmarshal(raw, result)
	}
	return nil
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	return e.conn.Notify(ctx, method, params)
}

// WriteRaw writes bytes to the server as they are, for malformed-frame
// tests.
func (e *Editor) WriteRaw(b []byte) error {
	_, err := e.raw.Write(b)
	return err
}

// Initialize sends initialize with the given capabilities and options
// merged into a default request for folder root, then initialized.
func (e *Editor) Initialize(ctx context.Context, root string, extra map[string]any) (map[string]any, error) {
	params := map[string]any{
		"processId": nil,
		"rootUri":   nil,
		"capabilities": map[string]any{
			"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
			"window":    map[string]any{"showMessage": map[string]any{}, "workDoneProgress": true},
		},
	}
	if root != "" {
		params["workspaceFolders"] = []any{map[string]any{"uri": workspace.PathToURI(root), "name": "root"}}
	}
	for k, v := range extra {
		params[k] = v
	}
	var res map[string]any
	if err := e.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	if caps, ok := res["capabilities"].(map[string]any); ok {
		if enc, ok := caps["positionEncoding"].(string); ok {
			e.mu.Lock()
			e.enc = workspace.Encoding(enc)
			e.mu.Unlock()
		}
	}
	return res, e.Notify(ctx, "initialized", map[string]any{})
}

// Open opens a buffer with text at version 1.
func (e *Editor) Open(ctx context.Context, uri, text string) error {
	e.mu.Lock()
	e.docs[uri] = &doc{version: 1, text: text}
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": text},
	})
}

// Edit replaces the range r of the editor's buffer with text, as a user
// typing would, and sends the incremental didChange.
func (e *Editor) Edit(ctx context.Context, uri string, r workspace.Range, text string) error {
	e.mu.Lock()
	d := e.docs[uri]
	if d == nil {
		e.mu.Unlock()
		return fmt.Errorf("fake editor: %s is not open", uri)
	}
	m := workspace.NewMapper(d.text)
	s, end := m.Offset(r.Start, e.enc), m.Offset(r.End, e.enc)
	d.text = d.text[:s] + text + d.text[end:]
	d.version++
	v := d.version
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{map[string]any{"range": r, "text": text}},
	})
}

// Type changes the editor's buffer as a user typing would, but holds the
// didChange back, as clients that debounce do; Flush sends it.
func (e *Editor) Type(uri string, r workspace.Range, text string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.docs[uri]
	if d == nil {
		return fmt.Errorf("fake editor: %s is not open", uri)
	}
	m := workspace.NewMapper(d.text)
	s, end := m.Offset(r.Start, e.enc), m.Offset(r.End, e.enc)
	d.text = d.text[:s] + text + d.text[end:]
	d.version++
	d.pending = append(d.pending, map[string]any{"range": r, "text": text})
	return nil
}

// Flush sends the held-back changes of a buffer as one didChange.
func (e *Editor) Flush(ctx context.Context, uri string) error {
	e.mu.Lock()
	d := e.docs[uri]
	if d == nil || len(d.pending) == 0 {
		e.mu.Unlock()
		return nil
	}
	changes, v := d.pending, d.version
	d.pending = nil
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": changes,
	})
}

type applyEditParams struct {
	Edit struct {
		DocumentChanges []struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int32  `json:"version"`
			} `json:"textDocument"`
			Edits []diff.Edit `json:"edits"`
		} `json:"documentChanges"`
		Changes map[string][]diff.Edit `json:"changes"`
	} `json:"edit"`
}

// applyEdit answers workspace/applyEdit per e.Mode. An applied edit
// changes the editor's buffer and is reported back with an incremental
// didChange, the way clients do.
func (e *Editor) applyEdit(ctx context.Context, raw json.RawMessage) (any, error) {
	var p applyEditParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	e.mu.Lock()
	mode := e.Mode
	e.mu.Unlock()
	if mode == ApplyRefuse {
		return map[string]any{"applied": false, "failureReason": "the user declined"}, nil
	}
	type docEdit struct {
		uri     string
		version *int32
		edits   []diff.Edit
	}
	var all []docEdit
	for _, dc := range p.Edit.DocumentChanges {
		v := dc.TextDocument.Version
		all = append(all, docEdit{dc.TextDocument.URI, &v, dc.Edits})
	}
	for uri, edits := range p.Edit.Changes {
		all = append(all, docEdit{uri, nil, edits})
	}
	e.mu.Lock()
	// Check every document first: a workspace edit applies whole or not.
	for _, de := range all {
		d := e.docs[de.uri]
		if d == nil {
			e.mu.Unlock()
			return nil, fmt.Errorf("fake editor: %s is not open", de.uri)
		}
		if de.version != nil && *de.version != d.version {
			e.mu.Unlock()
			if mode == ApplySkipStale {
				return map[string]any{"applied": true}, nil
			}
			return nil, fmt.Errorf("Edits on %s require version %d, you have %d", de.uri, *de.version, d.version)
		}
	}
	type notice struct {
		uri     string
		version int32
		changes []any
	}
	var notices []notice
	for _, de := range all {
		d := e.docs[de.uri]
		text, err := diff.ApplyEdits(d.text, de.edits, e.enc)
		if err != nil {
			e.mu.Unlock()
			return nil, err
		}
		d.text = text
		d.version++
		// Content changes apply in sequence, so send the edits last to
		// first: each range is then still valid in the text it meets.
		var changes []any
		for i := len(de.edits) - 1; i >= 0; i-- {
			changes = append(changes, map[string]any{"range": de.edits[i].Range, "text": de.edits[i].NewText})
		}
		notices = append(notices, notice{de.uri, d.version, changes})
	}
	e.Applied++
	e.mu.Unlock()
	for _, n := range notices {
		e.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": n.uri, "version": n.version},
			"contentChanges": n.changes,
		})
	}
	return map[string]any{"applied": true}, nil
}

// Text returns the editor's own copy of a buffer.
func (e *Editor) Text(uri string) (string, int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.docs[uri]
	if d == nil {
		return "", 0, false
	}
	return d.text, d.version, true
}

// CloseDoc closes a buffer.
func (e *Editor) CloseDoc(ctx context.Context, uri string) error {
	e.mu.Lock()
	delete(e.docs, uri)
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// Messages returns what the server sent with this method so far ("" for
// all).
func (e *Editor) Messages(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Message
	for _, m := range e.msgs {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Await waits until the server has sent a message of method for which ok
// holds (ok nil: any), and returns it.
func (e *Editor) Await(ctx context.Context, method string, ok func(json.RawMessage) bool) (Message, error) {
	seen := 0
	for {
		e.mu.Lock()
		msgs := e.msgs[seen:]
		ch := e.arrived
		seen = len(e.msgs)
		e.mu.Unlock()
		for _, m := range msgs {
			if m.Method == method && (ok == nil || ok(m.Params)) {
				return m, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// Sync makes a round trip to the server. The server handles messages in
// order, so once it returns every notification sent before it has been
// applied.
func (e *Editor) Sync(ctx context.Context) {
	e.t.Helper()
	// An unknown request is answered in order with -32601; the answer
	// itself is the barrier.
	e.conn.Call(ctx, "cline-ls/sync", nil, nil)
}

// Shutdown sends shutdown then exit and returns the server's exit code.
func (e *Editor) Shutdown(ctx context.Context) (int, error) {
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		return -1, err
	}
	e.Notify(ctx, "exit", nil)
	return e.Wait(ctx)
}

// Wait waits for the server to stop and returns its exit code and error.
func (e *Editor) Wait(ctx context.Context) (int, error) {
	select {
	case <-e.served:
		return e.code, e.err
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// Disconnect closes the editor's end of the connection, as an editor that
// goes away does (the daemon sees its input end).
func (e *Editor) Disconnect() {
	e.raw.Close() // first: closing the jsonrpc2 connection waits for its calls
	e.conn.Close()
}
