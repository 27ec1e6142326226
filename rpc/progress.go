package rpc

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

const (
	methodProgressCreate = "window/workDoneProgress/create"
	methodProgressCancel = "window/workDoneProgress/cancel"
	methodProgress       = "$/progress"
)

// progress reports a prompt turn to a client that supports
// window.workDoneProgress (PROTOCOL.md §6): begin when the turn starts,
// end when it stops; the client's cancel button cancels the turn.
type progress struct {
	mu      sync.Mutex
	next    int
	cancels map[string]context.CancelFunc // by token
}

// beginProgress starts reporting a turn; the returned function ends it.
// Clients without the capability get nothing.
func (s *Server) beginProgress(ctx context.Context, title string, cancel context.CancelFunc) func(stop string) {
	s.mu.Lock()
	supported := s.caps.workDoneProgress && s.dialect == DialectLSP
	s.mu.Unlock()
	if !supported {
		return func(string) {}
	}
	s.progress.mu.Lock()
	s.progress.next++
	token := "cline-ls/turn/" + strconv.Itoa(s.progress.next)
	if s.progress.cancels == nil {
		s.progress.cancels = make(map[string]context.CancelFunc)
	}
	s.progress.cancels[token] = cancel
	s.progress.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, 5*time.Second) // a client that never answers must not hold the turn
	defer stop()
	if _, err := s.conn.Call(cctx, methodProgressCreate, map[string]any{"token": token}, nil); err != nil {
		s.dropProgress(token)
		return func(string) {}
	}
	s.conn.Notify(ctx, methodProgress, map[string]any{"token": token, "value": map[string]any{
		"kind": "begin", "title": "cline: " + title, "cancellable": true}})
	return func(stop string) {
		s.dropProgress(token)
		s.conn.Notify(context.Background(), methodProgress, map[string]any{"token": token, "value": map[string]any{
			"kind": "end", "message": stop}})
	}
}

func (s *Server) dropProgress(token string) {
	s.progress.mu.Lock()
	delete(s.progress.cancels, token)
	s.progress.mu.Unlock()
}

// progressCancel serves window/workDoneProgress/cancel.
func (s *Server) progressCancel(raw []byte) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	var token string
	if json.Unmarshal(p.Token, &token) != nil {
		return nil // not one of ours: ours are strings
	}
	s.progress.mu.Lock()
	cancel := s.progress.cancels[token]
	s.progress.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}
