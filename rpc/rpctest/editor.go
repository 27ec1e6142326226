// Package rpctest provides a fake editor that drives a real rpc.Server over
// an in-memory pipe, the way gopls's integration tests drive gopls: tests
// open buffers, type into them, answer the server's requests and assert on
// the notifications it sends. ACPClient is a minimal ACP client of a
// daemon's stdio with no line limit, for the tests and benchmarks that
// move large files.
package rpctest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/workspace"
)

// Message is a notification or request the server sent to the editor.
type Message = jsonrpcclient.Message

// RequestHandler answers a server-to-client request. Returning (nil, nil)
// answers null.
type RequestHandler = jsonrpcclient.Handler

// Editor is a fake LSP client connected to a real server. The connection
// is the project's JSON-RPC client: Call, Notify, Handle, Messages and Await
// are its; the buffers and the answer to
// workspace/applyEdit are the editor's.
type Editor struct {
	t      testing.TB
	Server *rpc.Server
	*jsonrpcclient.Client

	mu   sync.Mutex // guards the fields below
	docs map[string]*doc
	// sessions are those KnowSession named (ACP): nil answers fs/* for
	// any session.
	sessions map[string]bool
	enc      workspace.Encoding

	served chan struct{}
	code   int
	err    error
	stop   sync.Once // the test's end: close the connection, wait for the server

	// Mode selects how workspace/applyEdit is answered.
	Mode ApplyMode
	// Applied counts workspace/applyEdit requests the editor applied.
	Applied int
	// AfterApply, when set, runs for each document an applied
	// workspace/applyEdit changed, after its didChange is sent and before
	// the edit is answered, with the document's new version and text: a
	// test's diagnostic source answers there, as the editor's language
	// servers would (SendDiagnostics).
	AfterApply func(ctx context.Context, uri string, version int32, text string)
	// late holds the didChange notifications ApplyLateChange keeps back.
	late []lateChange
	// acp: the client speaks ACP (NewACP), so buffers are served through
	// fs/* and opening one sends nothing.
	acp bool
}

// lateChange is a didChange held back.
type lateChange struct {
	uri     string
	version int32
	changes []any
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
	// ApplyLateChange applies the edit and answers applied:true, but
	// holds its didChange until SendLate, as Eglot 1.9 does (it reports
	// the change only once Emacs is idle again, well after the answer).
	ApplyLateChange
)

// New starts a server with opts and connects a fake editor to it. The
// connection is torn down when the test ends.
func New(t testing.TB, opts rpc.Options) *Editor {
	t.Helper()
	e := start(t, opts, false)
	e.Handle("workspace/applyEdit", e.applyEdit)
	return e
}

// start serves a new server with opts over a pipe to an editor speaking
// LSP or, with acp, ACP's framing; the connection is torn down when the
// test ends.
func start(t testing.TB, opts rpc.Options, acp bool) *Editor {
	srvEnd, edEnd := net.Pipe()
	var framing jsonrpcclient.Options
	if acp {
		framing.Framing = jsonrpcclient.ACP
	}
	e := &Editor{
		t:      t,
		Server: rpc.NewServer(opts),
		Client: jsonrpcclient.New(edEnd, edEnd, framing),
		docs:   make(map[string]*doc),
		enc:    workspace.UTF16,
		served: make(chan struct{}),
		acp:    acp,
	}
	go func() {
		defer close(e.served)
		e.code, e.err = e.Server.Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	t.Cleanup(e.stopServer)
	return e
}

// stopServer closes the connection and waits for the server to stop,
// its background work (a checkpoint being taken, the watcher) included.
// It runs once, from the first of the cleanups that New and Initialize
// register: Initialize's runs before the folders made for its arguments
// (t.TempDir) are removed, so no work of the server writes into a folder
// being removed.
func (e *Editor) stopServer() {
	e.stop.Do(func() {
		e.Close()
		select {
		case <-e.served:
		case <-time.After(10 * time.Second):
			e.t.Errorf("server did not stop after the editor closed the connection")
		}
	})
}

// Initialize sends initialize with the given capabilities and options
// merged into a default request for folder root, then initialized. It
// registers stopServer as a cleanup of its own (see there).
func (e *Editor) Initialize(ctx context.Context, root string, extra map[string]any) (map[string]any, error) {
	e.t.Cleanup(e.stopServer)
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
	if e.acp {
		return nil
	}
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
			//lint:ignore ST1005 the fake editor's refusal is an editor's message to the daemon, worded as editors word it
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
	if mode == ApplyLateChange {
		for _, n := range notices {
			e.late = append(e.late, lateChange(n))
		}
		e.mu.Unlock()
		return map[string]any{"applied": true}, nil
	}
	after := e.AfterApply
	texts := make([]string, len(notices))
	for i, n := range notices {
		texts[i] = e.docs[n.uri].text
	}
	e.mu.Unlock()
	for i, n := range notices {
		e.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": n.uri, "version": n.version},
			"contentChanges": n.changes,
		})
		if after != nil {
			after(ctx, n.uri, n.version, texts[i])
		}
	}
	return map[string]any{"applied": true}, nil
}

// SendLate sends the didChange notifications ApplyLateChange held back.
// With replace non-empty, each reports the whole buffer as replace
// instead (and the editor's copy becomes it): an editor whose buffer
// ended up other than the edit said.
func (e *Editor) SendLate(ctx context.Context, replace string) {
	e.mu.Lock()
	late := e.late
	e.late = nil
	if replace != "" {
		for i := range late {
			late[i].changes = []any{map[string]any{"text": replace}}
			if d := e.docs[late[i].uri]; d != nil {
				d.text = replace
			}
		}
	}
	e.mu.Unlock()
	for _, n := range late {
		e.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": n.uri, "version": n.version},
			"contentChanges": n.changes,
		})
	}
}

// Diagnostic is one diagnostic as the editor sends it in
// cline/diagnostics (LSP's Diagnostic shape, 0-based line).
type Diagnostic struct {
	Line     int
	Severity int
	Source   string
	Message  string
}

// SendDiagnostics sends cline/diagnostics: the editor's diagnostics of
// uri at version.
func (e *Editor) SendDiagnostics(ctx context.Context, uri string, version int32, diags []Diagnostic) error {
	list := make([]any, 0, len(diags))
	for _, d := range diags {
		pos := map[string]any{"line": d.Line, "character": 0}
		list = append(list, map[string]any{
			"range":    map[string]any{"start": pos, "end": pos},
			"severity": d.Severity, "source": d.Source, "message": d.Message,
		})
	}
	return e.Notify(ctx, "cline/diagnostics", map[string]any{"uri": uri, "version": version, "diagnostics": list})
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

// Sync makes a round trip to the server. The server handles messages in
// order, so once it returns every notification sent before it has been
// applied.
func (e *Editor) Sync(ctx context.Context) {
	e.t.Helper()
	// An unknown request is answered in order with -32601; the answer
	// itself is the barrier.
	e.Call(ctx, "cline-ls/sync", nil, nil)
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
	e.Close()
}
