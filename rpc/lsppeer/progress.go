package lsppeer

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/wire"
)

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

// createWait bounds the wait for the client's answer to a token's
// creation: a client that never answers must not hold the turn.
const createWait = 5 * time.Second

// ProgressCancelParams are window/workDoneProgress/cancel's params; the
// token is raw, since a client may cancel a number token not ours.
type ProgressCancelParams struct {
	Token json.RawMessage `json:"token"`
}

// BeginTurn starts reporting a turn of a session (PROTOCOL.md §6); the
// returned function ends it. The client's cancel button calls cancel.
// Clients without the capability get nothing.
func (p *Peer) BeginTurn(ctx context.Context, sessionID, title string, cancel context.CancelFunc) (end func(stop string, err error)) {
	if !p.caps.WorkDoneProgress {
		return func(string, error) {}
	}
	p.mu.Lock()
	p.next++
	token := "cline-ls/turn/" + strconv.Itoa(p.next)
	if p.cancels == nil {
		p.cancels = make(map[string]context.CancelFunc)
		p.bySession = make(map[string]*turnReport)
	}
	p.cancels[token] = cancel
	p.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, createWait)
	defer stop()
	if err := p.c.Call(cctx, MethodProgressCreate, wire.ProgressCreateParams{Token: token}, nil); err != nil {
		p.drop(token)
		return func(string, error) {}
	}
	p.c.Notify(ctx, MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressBegin{
		Title: "cline: " + title, Cancellable: true}})
	p.mu.Lock()
	p.bySession[sessionID] = &turnReport{token: token}
	p.reporting.Store(int32(len(p.bySession)))
	p.mu.Unlock()
	return func(stop string, err error) {
		p.mu.Lock()
		delete(p.bySession, sessionID)
		p.reporting.Store(int32(len(p.bySession)))
		p.mu.Unlock()
		p.drop(token)
		msg := stop
		if err != nil {
			msg = "failed: " + p.redact(err.Error())
		}
		p.c.Notify(context.Background(), MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressEnd{Message: msg}})
	}
}

// Report shows a session's update in its turn's progress, for clients
// with no plugin: the agent's text line by line, and each tool call's
// title. Updates of sessions with no reported turn are ignored.
func (p *Peer) Report(sessionID string, u wire.SessionUpdate) {
	if p.reporting.Load() == 0 {
		return
	}
	var msg string
	p.mu.Lock()
	tr := p.bySession[sessionID]
	if tr == nil {
		p.mu.Unlock()
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
		p.mu.Unlock()
		return
	}
	if r := []rune(msg); len(r) > 100 {
		msg = "…" + string(r[len(r)-99:])
	}
	tr.last = time.Now()
	token := tr.token
	p.mu.Unlock()
	p.c.Notify(context.Background(), MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressReport{Message: msg}})
}

func (p *Peer) drop(token string) {
	p.mu.Lock()
	delete(p.cancels, token)
	p.mu.Unlock()
}

// CancelProgress serves window/workDoneProgress/cancel: the turn of the
// token is cancelled. Tokens not ours (ours are strings) are ignored.
func (p *Peer) CancelProgress(params ProgressCancelParams) {
	var token string
	if json.Unmarshal(params.Token, &token) != nil {
		return
	}
	p.mu.Lock()
	cancel := p.cancels[token]
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// BeginWork reports work of the daemon's own that the user did not ask
// for (the first checkpoint's scan of the workspace) to a client that
// supports window.workDoneProgress: report shows a message, end ends it.
// It waits for the client's answer to the token's creation, so call it
// off the read loop.
func (p *Peer) BeginWork(ctx context.Context, title string) (report, end func(msg string)) {
	none := func(string) {}
	if !p.caps.WorkDoneProgress {
		return none, none
	}
	p.mu.Lock()
	p.next++
	token := "cline-ls/work/" + strconv.Itoa(p.next)
	p.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, createWait)
	defer stop()
	if err := p.c.Call(cctx, MethodProgressCreate, wire.ProgressCreateParams{Token: token}, nil); err != nil {
		return none, none
	}
	p.c.Notify(ctx, MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressBegin{Title: "cline: " + title}})
	var once sync.Once
	return func(msg string) {
			p.c.Notify(context.Background(), MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressReport{Message: msg}})
		}, func(msg string) {
			once.Do(func() {
				p.c.Notify(context.Background(), MethodProgress, wire.ProgressParams{Token: token, Value: wire.ProgressEnd{Message: msg}})
			})
		}
}
