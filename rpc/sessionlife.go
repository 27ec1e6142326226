package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// sessions is the connection's sessions: the Manager, and the handlers
// of the session methods (session/new, load, list, set_mode, cancel,
// cline/closeSession, cline/forkSession), which decode their params, ask
// the Manager and answer with wire values.
type sessions struct {
	*sessionManager
	// folders' first is where a session that names no cwd opens.
	folders *workspace.Folders
	// mode is the settings' mode, for a session/new that names none.
	mode func() string
	// cancelApprovals withdraws what a cancelled session asked the client.
	cancelApprovals func(id string)
	// addFolder makes an ACP session's cwd a workspace folder.
	addFolder func(dir string) error
	// withConfig adds a session's ACP config options to res, its answer.
	withConfig func(reqID jsonrpc2.ID, res any, id string) (any, error)
	log        *slog.Logger
}

// get returns a live session, reopened quietly (no replay) when it was
// released for being idle or saved by an earlier daemon.
func (c *sessions) get(id string) (*liveSession, error) {
	ls, err := c.Get(id)
	if err == nil {
		return ls, nil
	}
	var missing *session.NotFoundError
	switch {
	case errors.As(err, &missing):
		return nil, invalidParams("sessionId: no session %q (create one with session/new or load it with session/load)", id)
	case errors.Is(err, session.ErrClosedByClient):
		return nil, closedSession(id)
	}
	return nil, sessionErr(methodSessionLoad, err)
}

// sessionErr is the wire error for the Manager's err in method: the one
// place that maps its kinds (a store or a session that fails to open is
// ours, a held session is PROTOCOL.md §12's, a session the store does
// not have is the caller's); an error already on the wire shape (an MCP
// server refused) goes out as it is.
func sessionErr(method string, err error) error {
	if held := sessionHeld(err); held != nil {
		return held
	}
	var store *session.StoreError
	var open *session.OpenError
	var missing *session.NotFoundError
	switch {
	case errors.As(err, &store), errors.As(err, &open):
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, err)
	case errors.As(err, &missing):
		return invalidParams("sessionId: %v", err)
	}
	return err
}

// closedSession is the error for a call naming a session the client
// closed.
func closedSession(id string) error {
	return invalidParams("sessionId: session %q was closed; reopen it with session/load", id)
}

// InUse reports whether the session works now, whenever it was last looked
// up: a turn or an editor call runs, or a background command it started
// (a dev server the user relies on) still does.
func (ls *liveSession) InUse() bool {
	return ls.Busy() || ls.bg.Running() > 0
}

// sessionParams are the params of a call that names only a session.
type sessionParams struct {
	SessionID string `json:"sessionId"`
}

// newSessionParams are session/new's.
type newSessionParams struct {
	CWD        string            `json:"cwd"`
	Mode       string            `json:"mode"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

// setModeParams are session/set_mode's.
type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// loadParams are session/load's.
type loadParams struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// ReadOnly replays the session without opening it (Manager.Load).
	ReadOnly bool `json:"readOnly,omitempty"`
}

// listParams are session/list's.
type listParams struct {
	CWD string `json:"cwd"`
}

// serveNew serves session/new.
func (c *sessions) serveNew(raw []byte) (any, error) {
	var p newSessionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	return c.newSession(p.CWD, p.Mode, p.MCPServers)
}

// newSession makes a session in cwd (the first folder when empty) and
// mode (the settings' when empty) with the MCP servers the client named.
func (c *sessions) newSession(cwd, mode string, mcpServers []json.RawMessage) (wire.NewSessionResult, error) {
	if cwd == "" {
		if p := c.folders.Paths(); len(p) > 0 {
			cwd = p[0]
		}
	}
	if cwd != "" && !filepath.IsAbs(cwd) {
		return wire.NewSessionResult{}, invalidParams("cwd: must be an absolute path, got %q", cwd)
	}
	if mode == "" {
		mode = c.mode()
	}
	if _, ok := tools.PresetFor(mode); !ok {
		return wire.NewSessionResult{}, invalidParams("mode: must be one of %s, got %q", strings.Join(tools.Modes(), ", "), mode)
	}
	ls, err := c.New(cwd, mode, mcpServers)
	if err != nil {
		return wire.NewSessionResult{}, sessionErr(methodSessionNew, err)
	}
	return wire.NewSessionResult{SessionID: ls.ID(), Modes: sessionModes(mode)}, nil
}

// serveCancel serves the session/cancel notification.
func (c *sessions) serveCancel(raw []byte) error {
	var p sessionParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	// Only a live session runs a turn: one released for being idle or
	// closed has nothing to cancel, and looking it up as a prompt does
	// would reopen it (MCP servers and all) for nothing.
	ls, ok := c.Lookup(p.SessionID)
	if !ok {
		c.log.Debug("session/cancel: no live session", "session", p.SessionID)
		return nil
	}
	ls.Cancel()
	c.cancelApprovals(p.SessionID)
	return nil
}

// serveSetMode serves session/set_mode.
func (c *sessions) serveSetMode(raw []byte) (any, error) {
	var p setModeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	ls, err := c.get(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := ls.SetMode(p.ModeID); err != nil {
		return nil, invalidParams("modeId: %v", err)
	}
	return wire.Empty{}, nil
}

// serveLoad serves session/load: it reopens a saved session and replays
// its history as session/update notifications.
func (c *sessions) serveLoad(raw []byte) (any, error) {
	var p loadParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	mode, err := c.Load(p.SessionID, p.CWD, p.MCPServers, p.ReadOnly)
	if err != nil {
		return nil, sessionErr(methodSessionLoad, err)
	}
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

// fork saves the fork p asks for of a saved session (Manager.Fork) and
// returns its id, or method's wire error.
func (c *sessions) fork(method string, p forkParams) (string, error) {
	if err := required("sessionId", p.SessionID); err != nil {
		return "", err
	}
	if err := session.CheckSessionID(p.SessionID); err != nil {
		return "", invalidParams("sessionId: %v", err)
	}
	id, err := c.Fork(p.SessionID, p.AtTurn, p.CWD)
	var store *session.StoreError
	switch {
	case errors.As(err, &store):
		return "", jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, err)
	case err != nil:
		return "", invalidParams("%v", err)
	}
	return id, nil
}

// serveFork serves cline/forkSession (and cline.forkSession): the fork
// is saved, not opened; session/load opens it.
func (c *sessions) serveFork(raw []byte) (any, error) {
	var p forkParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	id, err := c.fork(methodForkSession, p)
	if err != nil {
		return nil, err
	}
	return wire.SessionIDResult{SessionID: id}, nil
}

// serveACPFork serves ACP's session/fork: the fork is made and opened
// as session/load opens a session (in cwd, with the given MCP servers,
// its history replayed), and answered like session/new.
func (c *sessions) serveACPFork(_ context.Context, req *jsonrpc2.Request) (any, error) {
	var p forkParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.CWD); err != nil {
		return nil, err
	}
	id, err := c.fork(methodACPSessionFork, p)
	if err != nil {
		return nil, err
	}
	load, _ := json.Marshal(loadParams{SessionID: id, CWD: p.CWD, MCPServers: p.MCPServers})
	res, err := c.serveACPLoad(load)
	if err != nil {
		return nil, err
	}
	modes, _ := res.(wire.ModesResult)
	return c.withConfig(req.ID(), wire.NewSessionResult{SessionID: id, Modes: modes.Modes}, id)
}

// serveList serves session/list.
func (c *sessions) serveList(raw []byte) (any, error) {
	var p listParams
	if len(raw) > 0 {
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
	}
	list, err := c.List(p.CWD)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/list: %v", err)
	}
	out := make([]wire.SessionInfo, len(list))
	for i, x := range list {
		out[i] = wire.SessionInfo{SessionID: x.SessionID, Cwd: x.Cwd, Title: x.Title, UpdatedAt: x.UpdatedAt, HeldBy: x.HeldBy, ParentSessionID: x.ParentSessionID}
	}
	return wire.ListSessionsResult{Sessions: out}, nil
}

// codeSessionHeld is PROTOCOL.md §12's error for a session another daemon
// holds; its data is {"heldBy": pid}.
const codeSessionHeld jsonrpc2.Code = -32002

// heldData is codeSessionHeld's data.
type heldData struct {
	HeldBy int `json:"heldBy"`
}

// sessionHeld returns the wire error for a session another daemon holds
// (session.HeldError), nil for any other error: the one place that
// decides how a load, a reopen for a prompt or a call, says so.
func sessionHeld(err error) error {
	var held *session.HeldError
	if !errors.As(err, &held) {
		return nil
	}
	data, _ := json.Marshal(heldData{held.PID})
	return &jsonrpc2.Error{Code: codeSessionHeld, Message: held.Error(), Data: data}
}

// serveClose serves cline/closeSession (and ACP's session/close): the
// turn is cancelled, the history flushed and closed, the session's own
// MCP servers stopped. The session can be loaded again with session/load;
// until then calls naming it are refused.
func (c *sessions) serveClose(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p sessionParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	release, err := c.Close(p.SessionID)
	if err != nil {
		return nil, invalidParams("sessionId: no session %q is open", p.SessionID)
	}
	if release != nil {
		jsonrpc2.Async(ctx) // the turn may wait on the client while it ends
		release()
	}
	return wire.Empty{}, nil
}

// sessionsCall makes a handler of the sessions part a route's.
func sessionsCall(f func(*sessions, []byte) (any, error)) func(*Server, []byte) (any, error) {
	return func(s *Server, raw []byte) (any, error) { return f(s.sess, raw) }
}
