package rpc

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cline-ls/cline-ls/wire"
)

const (
	methodProgressCreate = "window/workDoneProgress/create"
	methodProgressCancel = "window/workDoneProgress/cancel"
	methodProgress       = "$/progress"
)

// progress reports prompt turns to a client that supports
// window.workDoneProgress (PROTOCOL.md §6): begin when a turn starts,
// reports of what the agent says and does while it runs, end when it
// stops; the client's cancel button cancels the turn.
type progress struct {
	mu        sync.Mutex                    // guards the fields below
	next      int                           // the last token number used
	cancels   map[string]context.CancelFunc // by token
	bySession map[string]*turnReport        // the turn each session reports now
	// reporting is len(bySession), stored with each change, so that the
	// updates of a connection that reports no turn (most clients, and
	// every ACP one) pass without taking mu: every session update asks.
	reporting atomic.Int32
}

// turnReport is one turn's progress token and the agent text not yet
// reported whole.
type turnReport struct {
	token string
	line  strings.Builder // the agent's current line
	last  time.Time       // when the last report went out
}

// reportEvery bounds how often streamed text is reported: a client
// repaints its status line for each report.
const reportEvery = 250 * time.Millisecond

// beginProgress starts reporting a turn of a session; the returned
// function ends it. Clients without the capability get nothing.
func (s *Server) beginProgress(ctx context.Context, sessionID, title string, cancel context.CancelFunc) func(stop string, err error) {
	s.mu.Lock()
	supported := s.caps.workDoneProgress && s.dialect == DialectLSP
	s.mu.Unlock()
	if !supported {
		return func(string, error) {}
	}
	s.progress.mu.Lock()
	s.progress.next++
	token := "cline-ls/turn/" + strconv.Itoa(s.progress.next)
	if s.progress.cancels == nil {
		s.progress.cancels = make(map[string]context.CancelFunc)
		s.progress.bySession = make(map[string]*turnReport)
	}
	s.progress.cancels[token] = cancel
	s.progress.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, 5*time.Second) // a client that never answers must not hold the turn
	defer stop()
	if err := s.call(cctx, methodProgressCreate, wire.ProgressCreateParams{Token: token}, nil); err != nil {
		s.dropProgress(token)
		return func(string, error) {}
	}
	s.conn.Notify(ctx, methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressBegin{
		Title: "cline: " + title, Cancellable: true}})
	s.progress.mu.Lock()
	s.progress.bySession[sessionID] = &turnReport{token: token}
	s.progress.reporting.Store(int32(len(s.progress.bySession)))
	s.progress.mu.Unlock()
	return func(stop string, err error) {
		s.progress.mu.Lock()
		delete(s.progress.bySession, sessionID)
		s.progress.reporting.Store(int32(len(s.progress.bySession)))
		s.progress.mu.Unlock()
		s.dropProgress(token)
		msg := stop
		if err != nil {
			msg = "failed: " + s.redact(err.Error())
		}
		s.conn.Notify(context.Background(), methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressEnd{Message: msg}})
	}
}

// reportProgress shows a session's update in its turn's progress, for
// clients with no plugin: the agent's text line by line, and each tool
// call's title. Updates of sessions with no reported turn are ignored.
func (s *Server) reportProgress(sessionID string, u wire.SessionUpdate) {
	if s.progress.reporting.Load() == 0 {
		return
	}
	var msg string
	s.progress.mu.Lock()
	tr := s.progress.bySession[sessionID]
	if tr == nil {
		s.progress.mu.Unlock()
		return
	}
	switch u := u.(type) {
	case wire.AgentMessageChunk:
		c, _ := u.Content.(wire.TextBlock)
		t := c.Text
		if i := strings.LastIndexByte(t, '\n'); i >= 0 {
			tr.line.Reset()
			t = t[i+1:]
		}
		tr.line.WriteString(t)
		if time.Since(tr.last) >= reportEvery {
			msg = strings.TrimSpace(tr.line.String())
		}
	case wire.ToolCall:
		msg = u.Title
	}
	if msg == "" {
		s.progress.mu.Unlock()
		return
	}
	if r := []rune(msg); len(r) > 100 {
		msg = "…" + string(r[len(r)-99:])
	}
	tr.last = time.Now()
	token := tr.token
	s.progress.mu.Unlock()
	s.conn.Notify(context.Background(), methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressReport{Message: msg}})
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

// beginWork reports work of the daemon's own that the user did not ask
// for (the first checkpoint's scan of the workspace) to a client that
// supports window.workDoneProgress: report shows a message, end ends it.
// Other clients, ACP's among them, get nothing. It waits for the
// client's answer to the token's creation, so call it off the read loop.
func (s *Server) beginWork(ctx context.Context, title string) (report, end func(msg string)) {
	s.mu.Lock()
	supported := s.caps.workDoneProgress && s.dialect == DialectLSP
	s.mu.Unlock()
	none := func(string) {}
	if !supported {
		return none, none
	}
	s.progress.mu.Lock()
	s.progress.next++
	token := "cline-ls/work/" + strconv.Itoa(s.progress.next)
	s.progress.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, 5*time.Second) // a client that never answers must not hold the work
	defer stop()
	if err := s.call(cctx, methodProgressCreate, wire.ProgressCreateParams{Token: token}, nil); err != nil {
		return none, none
	}
	s.conn.Notify(ctx, methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressBegin{Title: "cline: " + title}})
	var once sync.Once
	return func(msg string) {
			s.conn.Notify(context.Background(), methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressReport{Message: msg}})
		}, func(msg string) {
			once.Do(func() {
				s.conn.Notify(context.Background(), methodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressEnd{Message: msg}})
			})
		}
}
