package rpctest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/workspace"
)

// NewACP starts a server with opts and connects a fake ACP client to it
// over an in-memory pipe: newline-delimited JSON, the client's buffers
// served through fs/read_text_file and changed by fs/write_text_file (a
// file it holds no buffer for is read from and written to disk), so the
// same Open, Text and Messages work in both dialects. Open sends nothing:
// an ACP client tells the agent of no buffers, it is asked for them.
func NewACP(t testing.TB, opts rpc.Options) *Editor {
	t.Helper()
	e := start(t, opts, true)
	e.Handle("fs/read_text_file", e.readTextFile)
	e.Handle("fs/write_text_file", e.writeTextFile)
	return e
}

// InitializeACP sends ACP's initialize with clientCapabilities caps (nil:
// both fs methods).
func (e *Editor) InitializeACP(ctx context.Context, caps map[string]any) (map[string]any, error) {
	e.t.Cleanup(e.stopServer)
	if caps == nil {
		caps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}
	}
	var res map[string]any
	err := e.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, &res)
	return res, err
}

type fsParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// KnowSession tells the editor of a session the daemon made for it. Once
// it knows one, it answers fs/* only for the sessions it knows, as a
// real client does: it holds its files per session, and has none for
// a session it never saw (a subagent's).
func (e *Editor) KnowSession(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions == nil {
		e.sessions = make(map[string]bool)
	}
	e.sessions[id] = true
}

// unknownSession is the error a client gives for fs/* in a session it
// does not hold.
func (e *Editor) unknownSession(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions == nil || e.sessions[id] {
		return nil
	}
	return fmt.Errorf("session not found: %q", id)
}

func (e *Editor) readTextFile(_ context.Context, raw json.RawMessage) (any, error) {
	var p fsParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	if err := e.unknownSession(p.SessionID); err != nil {
		return nil, err
	}
	if text, _, ok := e.Text(workspace.PathToURI(p.Path)); ok {
		return map[string]any{"content": text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return nil, err
	}
	return map[string]any{"content": string(b)}, nil
}

// writeTextFile changes the client's buffer of the file if it holds one
// and writes the disk otherwise, as an editor that saves what it was given
// for a file it has not open: so a scenario's disk expectations read the
// same in both dialects.
func (e *Editor) writeTextFile(_ context.Context, raw json.RawMessage) (any, error) {
	var p fsParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	if err := e.unknownSession(p.SessionID); err != nil {
		return nil, err
	}
	uri := workspace.PathToURI(p.Path)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Applied++
	if d := e.docs[uri]; d != nil {
		d.text = p.Content
		d.version++
		return map[string]any{}, nil
	}
	return map[string]any{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}
