package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/prompt/instructions"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// sessions holds the connection's agent sessions.
type sessions struct {
	mu     sync.Mutex              // guards byID, editor, store and closed
	byID   map[string]*liveSession // the sessions the client made or loaded
	editor map[string]*liveSession // by mode: the editor's own, for cline/callTool without a session
	store  *session.Store
	closed bool           // the connection is ending: no new turns
	wg     sync.WaitGroup // running prompts
}

// liveSession is a session and what the connection keeps for it.
type liveSession struct {
	*session.Session
	cwd    string
	files  *files
	log    *session.Log
	policy *session.Policy
	mcp    *mcpbridge.Manager // the servers session/new or session/load named, if any
	used   time.Time          // last looked up; guarded by sessions.mu
	instr  *instructions.Loader
	turns  sync.WaitGroup // its running prompts, for session/close to wait on
}

// sessionSpec says what session openSession makes.
type sessionSpec struct {
	id, cwd, mode string
	// prov is the parent's model for a subagent (it talks to the same
	// model); nil means the settings name the model.
	prov     provider.Provider
	history  []provider.Message
	log      *session.Log
	subagent bool
	mcp      *mcpbridge.Manager
	// title and plan are a loaded session's.
	title string
	plan  []session.PlanEntry
}

// availableModes is the modes as session/new and session/load list them.
func availableModes() []map[string]any {
	all := tools.AllModes()
	out := make([]map[string]any, len(all))
	for i, m := range all {
		out[i] = map[string]any{"id": m.ID, "name": m.Name, "description": m.Description}
	}
	return out
}

func newSessionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// stateDir returns where sessions persist.
func (s *Server) stateDir() string {
	if d := s.CurrentSettings().StateDir; d != "" {
		return d
	}
	return session.DefaultStateDir(s.opts.Getenv)
}

func (s *Server) sessionStore() (*session.Store, error) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	if s.sess.store == nil {
		st, err := session.NewStoreWithOptions(s.stateDir(), session.StoreOptions{Redact: s.redact, Logger: s.log})
		if err != nil {
			return nil, err
		}
		s.sess.store = st
	}
	return s.sess.store, nil
}

// redact scrubs the value of the configured API key variable (and the
// well-known ones) from text, so a key a model echoes never reaches a
// notification or a session file.
func (s *Server) redact(text string) string {
	st := s.CurrentSettings()
	names := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}
	if st.Provider != nil && st.Provider.APIKeyEnv != "" {
		names = append(names, st.Provider.APIKeyEnv)
	}
	for _, n := range names {
		if v := s.opts.Getenv(n); len(v) >= 8 {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

// newProvider builds the model client from the settings.
func (s *Server) newProvider() (provider.Provider, error) {
	st := s.CurrentSettings()
	p := st.Provider
	if p == nil || p.Name == "" {
		return nil, errors.New("no model is configured: set provider {name, model, apiKeyEnv} in initializationOptions, " +
			"or CLINE_LS_PROVIDER and CLINE_LS_MODEL, or $XDG_CONFIG_HOME/cline-ls/config.json, " +
			"or one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY")
	}
	cfg := provider.Config{Name: p.Name, Model: p.Model, BaseURL: p.BaseURL, NativeTools: p.NativeTools,
		Transcript: p.Transcript, Logger: s.log}
	if p.APIKeyEnv != "" {
		cfg.APIKey = s.opts.Getenv(p.APIKeyEnv)
	}
	if s.opts.HTTPClient != nil {
		cfg.HTTPClient = s.opts.HTTPClient
	}
	return provider.New(cfg)
}

// openSession makes a session object bound to this connection.
func (s *Server) openSession(sp sessionSpec) (*liveSession, error) {
	id, cwd, mode, prov, ownMCP, subagent := sp.id, sp.cwd, sp.mode, sp.prov, sp.mcp, sp.subagent
	f := s.newFiles()
	f.sessionID = id
	f.cwd = cwd
	var perr error
	if prov == nil {
		prov, perr = s.newProvider()
	}
	st := s.CurrentSettings()
	policy, err := session.NewPolicy(policyConfig(st))
	if err != nil {
		return nil, err
	}
	ls := &liveSession{cwd: cwd, files: f, log: sp.log, policy: policy, mcp: ownMCP}
	s.mu.Lock()
	canAsk := (s.caps.clineQuestions || s.caps.showMessageReq) && s.dialect == DialectLSP
	s.mu.Unlock()
	extra, mcpImpls := s.mcpFor(ownMCP)
	impls := builtinImpls(f)
	for name, b := range mcpImpls {
		impls[name] = b
	}
	findSkills := func() []tools.Skill {
		return tools.FindSkills(tools.SkillDirs(realFolders(s.folders.Paths()), s.opts.Getenv)...)
	}
	impls[tools.NameUseSkill] = tools.UseSkill(findSkills)
	var subagents []tools.SubagentConfig
	for _, sa := range st.Subagents {
		subagents = append(subagents, tools.SubagentConfig{Name: sa.Name, Description: sa.Description, Prompt: sa.Prompt})
	}
	cfg := session.Config{
		ID: id, CWD: cwd, Mode: mode, Provider: prov, ProviderErr: perr,
		Impls:     impls,
		Extra:     extra,
		Skills:    func() []string { return tools.SkillNames(findSkills()) },
		Subagents: subagents,
		Files:     f,
		Policy:    policy,
		Approver:  s.approvals.approver(id),
		Updates:   func(u session.Update) { s.sendUpdate(id, u) },
		Log:       sp.log,
		MaxTurns:  st.MaxTurns,
		Family:    tools.FamilyGeneric,
		Subagent:  subagent,
		OpenBuffers: func() []string {
			var out []string
			for _, p := range f.OpenBuffers() {
				out = append(out, f.Display(p))
			}
			slices.Sort(out)
			return out
		},
		Redact: s.redact,
		Title:  sp.title,
		Plan:   sp.plan,
		Warn:   func(msg string) { s.showMessage(2, "cline-ls: "+msg) },
		ACP:    s.dialect == DialectACP,
		Edited: func(callID string, edits []tools.FileEdit) {
			s.reportEdits(context.Background(), id, f, callID, edits)
		},
	}
	s.withInstructions(&cfg, ls)
	if st.Provider != nil {
		cfg.ContextWindow = st.Provider.ContextWindow
	}
	if st.Context != nil {
		cfg.CompactAt = st.Context.CompactAt
	}
	if canAsk {
		cfg.Ask = func(ctx context.Context, q string, opts []string) (string, bool, error) {
			return s.askQuestion(ctx, id, q, opts)
		}
	}
	if !subagent && prov != nil {
		cfg.Spawn = func(ctx context.Context, prompt string) (string, error) {
			child, err := s.openSession(sessionSpec{id: newSessionID(), cwd: cwd, mode: "search", prov: prov, subagent: true, mcp: ownMCP})
			if err != nil {
				return "", err
			}
			return session.RunSubagent(ctx, child.Session, prompt)
		}
	}
	sess, err := session.New(cfg, sp.history)
	if err != nil {
		return nil, err
	}
	ls.Session = sess
	return ls, nil
}

// sessionMCP starts the MCP servers a session/new or session/load named,
// owned by that session (nil when it named none).
func (s *Server) sessionMCP(raw []json.RawMessage, cwd string) (*mcpbridge.Manager, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	m, err := s.startMCP(raw, "mcpServers", cwd)
	if err != nil {
		return nil, err
	}
	s.mcp.mu.Lock()
	s.mcp.sessions = append(s.mcp.sessions, m)
	s.mcp.mu.Unlock()
	return m, nil
}

// sendUpdate sends session/update.
func (s *Server) sendUpdate(id string, u session.Update) {
	s.reportProgress(id, u)
	if s.dialect == DialectACP {
		u = s.acpUpdate(u)
	}
	if err := s.conn.Notify(context.Background(), methodSessionUpdate, map[string]any{"sessionId": id, "update": u}); err != nil {
		s.log.Debug("session/update not sent", "err", err)
	}
}

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
	s.addSessionLocked(id, ls)
	return ls, nil
}

// idleRelease is how long a session may sit unused before it is released
// (history closed, MCP servers stopped); it reopens on demand. ACP clients
// open a session per thread, each with its MCP servers: without this they
// would pile up for as long as the connection lives.
const idleRelease = 30 * time.Minute

// releaseIdle releases the sessions unused for longer than maxIdle.
func (s *Server) releaseIdle(maxIdle time.Duration) {
	now := time.Now()
	var idle []*liveSession
	s.sess.mu.Lock()
	for id, ls := range s.sess.byID {
		if now.Sub(ls.used) > maxIdle && !ls.Running() {
			idle = append(idle, ls)
			delete(s.sess.byID, id)
		}
	}
	s.sess.mu.Unlock()
	for _, ls := range idle {
		s.log.Info("releasing idle session", "session", ls.ID())
		s.release(ls)
	}
}

// releaseIdleLoop runs releaseIdle now and then until ctx ends.
func (s *Server) releaseIdleLoop(ctx context.Context) {
	t := time.NewTicker(idleRelease / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.releaseIdle(idleRelease)
		}
	}
}

func (s *Server) addSession(id string, ls *liveSession) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	s.addSessionLocked(id, ls)
}

func (s *Server) addSessionLocked(id string, ls *liveSession) {
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

func (s *Server) newSession(cwd, mode string, mcpServers []json.RawMessage) (map[string]any, error) {
	if cwd == "" {
		if p := s.folders.Paths(); len(p) > 0 {
			cwd = p[0]
		}
	}
	if cwd != "" && !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd: must be an absolute path, got %q", cwd)
	}
	if mode == "" {
		mode = s.CurrentSettings().Mode
	}
	if _, ok := tools.PresetFor(mode); !ok {
		return nil, invalidParams("mode: must be one of %s, got %q", strings.Join(tools.Modes(), ", "), mode)
	}
	id := newSessionID()
	// The session's MCP servers first: a refused session/new must leave
	// nothing behind (no file in session/list, no process).
	own, err := s.sessionMCP(mcpServers, cwd)
	if err != nil {
		return nil, err
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
			s.dropMCP(own)
		}
		if log != nil {
			log.Close()
			if st, serr := s.sessionStore(); serr == nil {
				st.Remove(id)
			}
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/new: %v", err)
	}
	s.addSession(id, ls)
	return map[string]any{
		"sessionId": id,
		"modes":     map[string]any{"currentModeId": mode, "availableModes": availableModes()},
	}, nil
}

// sessionCancel serves the session/cancel notification.
func (s *Server) sessionCancel(raw []byte) error {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	ls, err := s.getSession(p.SessionID)
	if err != nil {
		return err
	}
	ls.Cancel()
	s.approvals.cancelSession(p.SessionID)
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
	return map[string]any{}, nil
}

// sessionLoad serves session/load: it reopens a saved session and replays
// its history as session/update notifications.
func (s *Server) sessionLoad(raw []byte) (any, error) {
	var p struct {
		SessionID  string            `json:"sessionId"`
		CWD        string            `json:"cwd"`
		MCPServers []json.RawMessage `json:"mcpServers"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
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
		return map[string]any{"modes": map[string]any{"currentModeId": live.Mode(), "availableModes": availableModes()}}, nil
	}
	cwd := p.CWD
	if cwd == "" {
		cwd = meta.Cwd
	}
	ls, mode, err := s.reopen(p.SessionID, cwd, p.MCPServers, meta, recs)
	if err != nil {
		return nil, err
	}
	s.addSession(p.SessionID, ls)
	ls.Replay(recs)
	return map[string]any{"modes": map[string]any{"currentModeId": mode, "availableModes": availableModes()}}, nil
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
	out := make([]map[string]any, len(list))
	for i, x := range list {
		out[i] = map[string]any{"sessionId": x.SessionID, "cwd": x.Cwd, "title": x.Title, "updatedAt": x.UpdatedAt}
	}
	return map[string]any{"sessions": out}, nil
}

// askQuestion serves ask_question: cline/askQuestion for clients that
// declared it, else window/showMessageRequest with the options as actions.
func (s *Server) askQuestion(ctx context.Context, id, question string, options []string) (string, bool, error) {
	s.mu.Lock()
	viaCline := s.caps.clineQuestions
	s.mu.Unlock()
	if viaCline {
		var res struct {
			Answer *string `json:"answer"`
		}
		if err := s.call(ctx, methodAskQuestion, map[string]any{"sessionId": id, "question": question, "options": options}, &res); err != nil {
			return "", false, err
		}
		if res.Answer == nil {
			return "", false, nil
		}
		return *res.Answer, true, nil
	}
	actions := make([]map[string]string, len(options))
	for i, o := range options {
		actions[i] = map[string]string{"title": o}
	}
	var res *struct {
		Title string `json:"title"`
	}
	if err := s.call(ctx, methodShowMessageRequest, map[string]any{"type": 3, "message": question, "actions": actions}, &res); err != nil {
		return "", false, err
	}
	if res == nil {
		return "", false, nil
	}
	return res.Title, true, nil
}

// cancelAll cancels every running turn and waits for them to end.
func (s *Server) cancelAll() {
	s.sess.mu.Lock()
	s.sess.closed = true
	list := make([]*liveSession, 0, len(s.sess.byID))
	for id, ls := range s.sess.byID {
		list = append(list, ls)
		s.approvals.cancelSession(id)
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
	own, err := s.sessionMCP(mcpServers, cwd)
	if err != nil {
		return nil, "", err
	}
	log, err := st.Open(id)
	if err != nil {
		s.warnNotSaved(err)
		log = nil
	}
	ls, err := s.openSession(sessionSpec{id: id, cwd: cwd, mode: r.Mode, history: r.History, log: log, mcp: own,
		title: r.Title, plan: r.Plan})
	if err != nil {
		if own != nil {
			s.dropMCP(own)
		}
		if log != nil {
			log.Close()
		}
		return nil, "", jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	ls.Restore(r)
	return ls, r.Mode, nil
}

// warnNotSaved tells the user that a session's history cannot be saved.
func (s *Server) warnNotSaved(err error) {
	s.log.Warn("session will not be saved", "err", err)
	s.showMessage(2, "cline-ls: this session is not being saved: "+err.Error())
}

// closeSession serves cline/closeSession (and ACP's session/close): the
// turn is cancelled, the history flushed and closed, the session's own
// MCP servers stopped. The session can be loaded again.
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
	ls := s.sess.byID[p.SessionID]
	delete(s.sess.byID, p.SessionID)
	s.sess.mu.Unlock()
	if ls == nil {
		return nil, invalidParams("sessionId: no session %q is open", p.SessionID)
	}
	jsonrpc2.Async(ctx) // the turn may wait on the client while it ends
	s.release(ls)
	return map[string]any{}, nil
}

// release ends a live session that is no longer in byID: its turn and
// calls are cancelled and waited for, its history closed, its MCP
// servers stopped.
func (s *Server) release(ls *liveSession) {
	ls.Cancel()
	s.approvals.cancelSession(ls.ID())
	ls.turns.Wait()
	ls.WaitIdle()
	ls.Close()
	if ls.mcp != nil {
		s.dropMCP(ls.mcp)
	}
}
