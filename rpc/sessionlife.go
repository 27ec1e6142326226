package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// lookup returns a session live on the connection, or nil.
func (s *Server) lookup(id string) *liveSession {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	return s.sess.byID[id]
}

// getSession returns a live session. One that was released for being
// idle, or saved by an earlier daemon, is reopened quietly (no replay).
func (s *Server) getSession(id string) (*liveSession, error) {
	s.sess.mu.Lock()
	ls := s.sess.byID[id]
	if ls != nil {
		ls.used = time.Now()
	}
	s.sess.mu.Unlock()
	if ls != nil {
		return ls, nil
	}
	missing := invalidParams("sessionId: no session %q (create one with session/new or load it with session/load)", id)
	if session.CheckSessionID(id) != nil {
		return nil, missing
	}
	s.sess.mu.Lock()
	closed := s.sess.closedByClient[id]
	s.sess.mu.Unlock()
	if closed {
		return nil, closedSession(id)
	}
	s.awaitRelease(id)
	st, err := s.sessionStore()
	if err != nil {
		return nil, missing
	}
	meta, recs, err := st.Load(id)
	if err != nil {
		return nil, missing
	}
	ls, _, err = s.reopen(id, meta.Cwd, nil, meta, recs)
	if err != nil {
		return nil, err
	}
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	if prev := s.sess.byID[id]; prev != nil {
		go s.release(ls) // another call reopened it first
		return prev, nil
	}
	if s.sess.closedByClient[id] {
		// Another call reopened it while this one did, and the client
		// closed that copy since: this one must not bring it back.
		go s.release(ls)
		return nil, closedSession(id)
	}
	s.addSessionLocked(id, ls)
	return ls, nil
}

// closedSession is the error for a call naming a session the client
// closed.
func closedSession(id string) error {
	return invalidParams("sessionId: session %q was closed; reopen it with session/load", id)
}

// idleRelease is how long a session may sit unused before it is released
// (history closed, MCP servers stopped), unless Options.IdleRelease says
// otherwise; it reopens on demand. ACP clients open a session per thread,
// each with its MCP servers: without this they would pile up for as long
// as the connection lives.
const idleRelease = 30 * time.Minute

// releaseIdle releases the sessions unused for longer than maxIdle.
func (s *Server) releaseIdle(maxIdle time.Duration) {
	now := time.Now()
	var idle []*liveSession
	s.sess.mu.Lock()
	for id, ls := range s.sess.byID {
		if now.Sub(ls.used) > maxIdle && !ls.inUse() {
			idle = append(idle, ls)
			s.detachLocked(id)
		}
	}
	s.sess.mu.Unlock()
	for _, ls := range idle {
		s.log.Info("releasing idle session", "session", ls.ID())
		s.release(ls)
	}
}

// inUse reports whether the session works now, whenever it was last looked
// up: a turn or an editor call runs, or a background command it started
// (a dev server the user relies on) still does.
func (ls *liveSession) inUse() bool {
	return ls.Busy() || ls.bg.Running() > 0
}

// releaseIdleLoop runs releaseIdle now and then until ctx ends.
func (s *Server) releaseIdleLoop(ctx context.Context) {
	maxIdle := s.opts.IdleRelease
	if maxIdle <= 0 {
		maxIdle = idleRelease
	}
	t := time.NewTicker(maxIdle / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.releaseIdle(maxIdle)
		}
	}
}

func (s *Server) addSession(id string, ls *liveSession) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	s.addSessionLocked(id, ls)
}

func (s *Server) addSessionLocked(id string, ls *liveSession) {
	delete(s.sess.closedByClient, id)
	ls.used = time.Now()
	if s.sess.byID == nil {
		s.sess.byID = make(map[string]*liveSession)
	}
	s.sess.byID[id] = ls
}

// sessionNew serves session/new.
func (s *Server) sessionNew(raw []byte) (any, error) {
	var p struct {
		CWD        string            `json:"cwd"`
		Mode       string            `json:"mode"`
		MCPServers []json.RawMessage `json:"mcpServers"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	return s.newSession(p.CWD, p.Mode, p.MCPServers)
}

func (s *Server) newSession(cwd, mode string, mcpServers []json.RawMessage) (wire.NewSessionResult, error) {
	if cwd == "" {
		if p := s.folders.Paths(); len(p) > 0 {
			cwd = p[0]
		}
	}
	if cwd != "" && !filepath.IsAbs(cwd) {
		return wire.NewSessionResult{}, invalidParams("cwd: must be an absolute path, got %q", cwd)
	}
	if mode == "" {
		mode = s.CurrentSettings().Mode
	}
	if _, ok := tools.PresetFor(mode); !ok {
		return wire.NewSessionResult{}, invalidParams("mode: must be one of %s, got %q", strings.Join(tools.Modes(), ", "), mode)
	}
	id := newSessionID()
	// The session's MCP servers first: a refused session/new must leave
	// nothing behind (no file in session/list, no process).
	own, err := startMCP(s.mcp, mcpServers, cwd)
	if err != nil {
		return wire.NewSessionResult{}, err
	}
	var log *session.Log
	if st, err := s.sessionStore(); err != nil {
		s.warnNotSaved(err)
	} else if log, err = st.Create(session.Meta{SessionID: id, Cwd: cwd, Mode: mode}); err != nil {
		s.warnNotSaved(err)
		log = nil
	}
	ls, err := s.openSession(sessionSpec{id: id, cwd: cwd, mode: mode, log: log, mcp: own})
	if err != nil {
		if own != nil {
			s.mcp.Drop(own)
		}
		if log != nil {
			log.Close()
			if st, serr := s.sessionStore(); serr == nil {
				st.Remove(id)
			}
		}
		return wire.NewSessionResult{}, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/new: %v", err)
	}
	s.addSession(id, ls)
	return wire.NewSessionResult{SessionID: id, Modes: sessionModes(mode)}, nil
}

// sessionCancel serves the session/cancel notification.
func (s *Server) sessionCancel(raw []byte) error {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	// Only a live session runs a turn: one released for being idle or
	// closed has nothing to cancel, and looking it up as a prompt does
	// would reopen it (MCP servers and all) for nothing.
	ls := s.lookup(p.SessionID)
	if ls == nil {
		s.log.Debug("session/cancel: no live session", "session", p.SessionID)
		return nil
	}
	ls.Cancel()
	s.approvals.CancelSession(p.SessionID)
	return nil
}

// sessionSetMode serves session/set_mode.
func (s *Server) sessionSetMode(raw []byte) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	ls, err := s.getSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := ls.SetMode(p.ModeID); err != nil {
		return nil, invalidParams("modeId: %v", err)
	}
	return wire.Empty{}, nil
}

// sessionLoad serves session/load: it reopens a saved session and replays
// its history as session/update notifications.
func (s *Server) sessionLoad(raw []byte) (any, error) {
	var p struct {
		SessionID  string            `json:"sessionId"`
		CWD        string            `json:"cwd"`
		MCPServers []json.RawMessage `json:"mcpServers"`
		// ReadOnly replays the session without opening it (showStored).
		ReadOnly bool `json:"readOnly"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	s.awaitRelease(p.SessionID)
	st, err := s.sessionStore()
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	meta, recs, err := st.Load(p.SessionID)
	if err != nil {
		return nil, invalidParams("sessionId: %v", err)
	}
	if live := s.lookup(p.SessionID); live != nil {
		// Already open on this connection (an editor reopening a
		// thread): show it again; opening a second copy would leave two
		// writers of one history.
		live.Replay(recs)
		return wire.ModesResult{Modes: sessionModes(live.Mode())}, nil
	}
	cwd := p.CWD
	if cwd == "" {
		cwd = meta.Cwd
	}
	if p.ReadOnly {
		return s.showStored(p.SessionID, cwd, meta, recs)
	}
	ls, mode, err := s.reopen(p.SessionID, cwd, p.MCPServers, meta, recs)
	if err != nil {
		return nil, err
	}
	s.sess.mu.Lock()
	prev := s.sess.byID[p.SessionID]
	if prev == nil {
		s.addSessionLocked(p.SessionID, ls)
	}
	s.sess.mu.Unlock()
	if prev != nil {
		// A call that names it off the read loop (cline/restore of the
		// conversation) reopened it meanwhile:
		// that copy stays, the one writer of the history.
		go s.release(ls)
		ls, mode = prev, prev.Mode()
	}
	ls.Replay(recs)
	return wire.ModesResult{Modes: sessionModes(mode)}, nil
}

// forkParams are cline/forkSession's and session/fork's.
type forkParams struct {
	SessionID string `json:"sessionId"`
	// AtTurn is the last turn the fork holds, 1-based; 0 or absent is
	// all of them.
	AtTurn     int               `json:"atTurn"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

// fork makes a new session of the saved one p names, up to p.AtTurn, and
// returns its id. The parent's file is read, not claimed: a session
// another daemon holds (-32002) can be forked, which is what that
// error suggests. A session writes a turn's records when the turn ends,
// so a turn in flight is not in the fork.
func (s *Server) fork(method string, p forkParams) (string, error) {
	if err := required("sessionId", p.SessionID); err != nil {
		return "", err
	}
	if err := session.CheckSessionID(p.SessionID); err != nil {
		return "", invalidParams("sessionId: %v", err)
	}
	st, err := s.sessionStore()
	if err != nil {
		return "", jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, err)
	}
	id := newSessionID()
	if _, err := st.Fork(p.SessionID, id, p.AtTurn, p.CWD); err != nil {
		return "", invalidParams("%v", err)
	}
	return id, nil
}

// forkSession serves cline/forkSession (and cline.forkSession): the fork
// is saved, not opened; session/load opens it.
func (s *Server) forkSession(raw []byte) (any, error) {
	var p forkParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	id, err := s.fork(methodForkSession, p)
	if err != nil {
		return nil, err
	}
	return wire.SessionIDResult{SessionID: id}, nil
}

// acpSessionFork serves ACP's session/fork: the fork is made and opened
// as session/load opens a session (in cwd, with the given MCP servers,
// its history replayed), and answered like session/new.
func (s *Server) acpSessionFork(_ context.Context, req *jsonrpc2.Request) (any, error) {
	var p forkParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.CWD); err != nil {
		return nil, err
	}
	id, err := s.fork(methodACPSessionFork, p)
	if err != nil {
		return nil, err
	}
	load, _ := json.Marshal(map[string]any{"sessionId": id, "cwd": p.CWD, "mcpServers": p.MCPServers})
	res, err := s.acpSessionLoad(load)
	if err != nil {
		return nil, err
	}
	modes, _ := res.(wire.ModesResult)
	return s.withConfig(req.ID(), wire.NewSessionResult{SessionID: id, Modes: modes.Modes}, id)
}

// sessionList serves session/list.
func (s *Server) sessionList(raw []byte) (any, error) {
	var p struct {
		CWD string `json:"cwd"`
	}
	if len(raw) > 0 {
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
	}
	st, err := s.sessionStore()
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/list: %v", err)
	}
	list, err := st.List(p.CWD)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/list: %v", err)
	}
	out := make([]wire.SessionInfo, len(list))
	for i, x := range list {
		out[i] = wire.SessionInfo{SessionID: x.SessionID, Cwd: x.Cwd, Title: x.Title, UpdatedAt: x.UpdatedAt, HeldBy: x.HeldBy, ParentSessionID: x.ParentSessionID}
	}
	return wire.ListSessionsResult{Sessions: out}, nil
}

// cancelAll cancels every running turn and waits for them to end, then
// closes every session, the editor's own ones too (their background
// commands end with them).
func (s *Server) cancelAll() {
	s.sess.mu.Lock()
	s.sess.closed = true
	list := make([]*liveSession, 0, len(s.sess.byID)+len(s.sess.editor))
	for id, ls := range s.sess.byID {
		list = append(list, ls)
		s.approvals.CancelSession(id)
	}
	for _, ls := range s.sess.editor {
		list = append(list, ls)
		s.approvals.CancelSession(ls.ID())
	}
	s.sess.mu.Unlock()
	for _, ls := range list {
		ls.Cancel()
	}
	s.sess.wg.Wait()
	for _, ls := range list {
		ls.Close()
	}
}

// reopen makes a live session of a saved one: its history, mode, title
// and plan as they were, appending to the same file.
func (s *Server) reopen(id, cwd string, mcpServers []json.RawMessage, meta session.Meta, recs []session.Record) (*liveSession, string, error) {
	st, err := s.sessionStore()
	if err != nil {
		return nil, "", jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	r := session.Resume(meta, recs)
	// The history first: one another daemon holds is refused before any
	// MCP server starts for it.
	log, err := st.Open(id)
	if err != nil {
		if held := sessionHeld(err); held != nil {
			return nil, "", held
		}
		s.warnNotSaved(err)
		log = nil
	}
	own, err := startMCP(s.mcp, mcpServers, cwd)
	if err != nil {
		if log != nil {
			log.Close()
		}
		return nil, "", err
	}
	ls, err := s.openSession(sessionSpec{id: id, cwd: cwd, mode: r.Mode, history: r.History, log: log, mcp: own,
		title: r.Title, plan: r.Plan})
	if err != nil {
		if own != nil {
			s.mcp.Drop(own)
		}
		if log != nil {
			log.Close()
		}
		return nil, "", jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	ls.Restore(r)
	return ls, r.Mode, nil
}

// showStored replays a saved session without opening it (session/load
// with readOnly): its history is read, not claimed, so a session another
// daemon holds can be shown. It is not live here afterwards: a prompt to
// it reopens it, which that daemon's hold refuses (-32002) until it lets
// go; a fork continues it.
func (s *Server) showStored(id, cwd string, meta session.Meta, recs []session.Record) (any, error) {
	r := session.Resume(meta, recs)
	ls, err := s.openSession(sessionSpec{id: id, cwd: cwd, mode: r.Mode, history: r.History, title: r.Title, plan: r.Plan})
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	ls.Replay(recs)
	s.release(ls)
	return wire.ModesResult{Modes: sessionModes(r.Mode)}, nil
}

// codeSessionHeld is PROTOCOL.md §12's error for a session another daemon
// holds; its data is {"heldBy": pid}.
const codeSessionHeld jsonrpc2.Code = -32002

// sessionHeld returns the wire error for a session another daemon holds
// (session.HeldError), nil for any other error: the one place that
// decides how a load, a reopen for a prompt or a call, says so.
func sessionHeld(err error) error {
	var held *session.HeldError
	if !errors.As(err, &held) {
		return nil
	}
	data, _ := json.Marshal(struct {
		HeldBy int `json:"heldBy"`
	}{held.PID})
	return &jsonrpc2.Error{Code: codeSessionHeld, Message: held.Error(), Data: data}
}

// warnNotSaved tells the user that a session's history cannot be saved.
func (s *Server) warnNotSaved(err error) {
	s.log.Warn("session will not be saved", "err", err)
	s.showMessage(wire.MessageWarning, "cline-ls: this session is not being saved: "+err.Error())
}

// closeSession serves cline/closeSession (and ACP's session/close): the
// turn is cancelled, the history flushed and closed, the session's own
// MCP servers stopped. The session can be loaded again with session/load;
// until then calls naming it are refused.
func (s *Server) closeSession(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	s.sess.mu.Lock()
	ls := s.detachLocked(p.SessionID)
	if ls != nil {
		s.markClosedLocked(p.SessionID)
	}
	s.sess.mu.Unlock()
	if ls == nil {
		// Released for being idle (or saved by an earlier daemon):
		// nothing of it runs, but the close holds all the same.
		if !s.saved(p.SessionID) {
			return nil, invalidParams("sessionId: no session %q is open", p.SessionID)
		}
		s.sess.mu.Lock()
		s.markClosedLocked(p.SessionID)
		s.sess.mu.Unlock()
		return wire.Empty{}, nil
	}
	jsonrpc2.Async(ctx) // the turn may wait on the client while it ends
	s.release(ls)
	return wire.Empty{}, nil
}

// markClosedLocked records that the client closed session id, which
// only session/load reopens (addSessionLocked forgets it). s.sess.mu is
// held.
func (s *Server) markClosedLocked(id string) {
	if s.sess.closedByClient == nil {
		s.sess.closedByClient = make(map[string]bool)
	}
	s.sess.closedByClient[id] = true
}

// saved reports whether session id has a history in the store.
func (s *Server) saved(id string) bool {
	if session.CheckSessionID(id) != nil {
		return false
	}
	s.awaitRelease(id)
	st, err := s.sessionStore()
	if err != nil {
		return false
	}
	_, _, err = st.Load(id)
	return err == nil
}

// release ends a live session that is no longer in byID: its turn and
// calls are cancelled and waited for, its history closed, its MCP
// servers stopped.
func (s *Server) release(ls *liveSession) {
	ls.Cancel()
	s.approvals.CancelSession(ls.ID())
	ls.turns.Wait()
	ls.WaitIdle()
	ls.Close()
	if ls.mcp != nil {
		s.mcp.Drop(ls.mcp)
	}
	s.sess.mu.Lock()
	if ch := s.sess.releasing[ls.ID()]; ch != nil && ls.detached {
		close(ch)
		delete(s.sess.releasing, ls.ID())
	}
	s.sess.mu.Unlock()
}

// detachLocked takes session id out of byID for release, which must
// follow, and marks it as being released until then (awaitRelease).
// s.sess.mu is held.
func (s *Server) detachLocked(id string) *liveSession {
	ls := s.sess.byID[id]
	if ls == nil {
		return nil
	}
	delete(s.sess.byID, id)
	if s.sess.releasing == nil {
		s.sess.releasing = make(map[string]chan struct{})
	}
	if s.sess.releasing[id] == nil {
		s.sess.releasing[id] = make(chan struct{})
	}
	ls.detached = true
	return ls
}

// awaitRelease waits until a release of session id under way has closed
// its history, so that reopening it reads every record.
func (s *Server) awaitRelease(id string) {
	s.sess.mu.Lock()
	ch := s.sess.releasing[id]
	s.sess.mu.Unlock()
	if ch != nil {
		<-ch
	}
}
