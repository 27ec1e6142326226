package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// sessions holds the connection's agent sessions.
type sessions struct {
	mu    sync.Mutex
	byID  map[string]*liveSession
	store *session.Store
	wg    sync.WaitGroup // running prompts
}

// liveSession is a session and what the connection keeps for it.
type liveSession struct {
	*session.Session
	cwd   string
	files *files
	log   *session.Log
}

var modeInfo = []struct{ id, name, desc string }{
	{"plan", "Plan", "Explore and propose a plan; no edits"},
	{"act", "Act", "Carry out the task, asking before edits and commands"},
	{"search", "Search", "Read and search only"},
	{"minimal", "Minimal", "Commands only"},
	{"yolo", "Yolo", "Act without asking until the task is submitted"},
}

func availableModes() []map[string]any {
	out := make([]map[string]any, len(modeInfo))
	for i, m := range modeInfo {
		out[i] = map[string]any{"id": m.id, "name": m.name, "description": m.desc}
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
// A subagent passes its parent's model in prov (it talks to the same
// model); otherwise prov is nil and the settings name the model.
func (s *Server) openSession(id, cwd, mode string, prov provider.Provider, history []provider.Message, log *session.Log, subagent bool, ownMCP *mcpbridge.Manager) (*liveSession, error) {
	f := s.newFiles()
	f.sessionID = id
	var perr error
	if prov == nil {
		prov, perr = s.newProvider()
	}
	h, err := s.host()
	if err != nil {
		return nil, err
	}
	policy, err := session.NewPolicy(s.policyConfig())
	if err != nil {
		return nil, err
	}
	ls := &liveSession{cwd: cwd, files: f, log: log}
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
	for _, sa := range s.CurrentSettings().Subagents {
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
		Log:       log,
		MaxTurns:  s.CurrentSettings().MaxTurns,
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
		ACP:    s.dialect == DialectACP,
		Edited: func(callID string, edits []tools.FileEdit) {
			s.reportEdits(context.Background(), id, callID, edits)
		},
	}
	if canAsk {
		cfg.Ask = func(ctx context.Context, q string, opts []string) (string, bool, error) {
			return s.askQuestion(ctx, id, q, opts)
		}
	}
	if !subagent {
		cfg.Checkpoint = func(turn int, callID, title string) { s.takeCheckpoint(id, turn, callID, title) }
		s.primeCheckpoints()
	}
	if !subagent && prov != nil {
		cfg.Spawn = func(ctx context.Context, prompt string) (string, error) {
			child, err := s.openSession(newSessionID(), cwd, "search", prov, nil, nil, true, ownMCP)
			if err != nil {
				return "", err
			}
			return session.RunSubagent(ctx, child.Session, prompt)
		}
	}
	_ = h
	sess, err := session.New(cfg, history)
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
	if err := s.conn.Notify(context.Background(), methodSessionUpdate, map[string]any{"sessionId": id, "update": u}); err != nil {
		s.log.Debug("session/update not sent", "err", err)
	}
}

func (s *Server) getSession(id string) (*liveSession, error) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	ls := s.sess.byID[id]
	if ls == nil {
		return nil, invalidParams("sessionId: no session %q (create one with session/new or load it with session/load)", id)
	}
	return ls, nil
}

func (s *Server) addSession(id string, ls *liveSession) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
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
		return nil, invalidParams("mode: must be one of %s, got %q", strings.Join(Modes, ", "), mode)
	}
	id := newSessionID()
	var log *session.Log
	if st, err := s.sessionStore(); err != nil {
		s.log.Warn("sessions will not be saved", "err", err)
	} else if log, err = st.Create(session.Meta{SessionID: id, Cwd: cwd, Mode: mode}); err != nil {
		s.log.Warn("session will not be saved", "err", err)
		log = nil
	}
	own, err := s.sessionMCP(mcpServers, cwd)
	if err != nil {
		return nil, err
	}
	ls, err := s.openSession(id, cwd, mode, nil, nil, log, false, own)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/new: %v", err)
	}
	s.addSession(id, ls)
	return map[string]any{
		"sessionId": id,
		"modes":     map[string]any{"currentModeId": mode, "availableModes": availableModes()},
	}, nil
}

// contentBlock is an ACP content block of a prompt.
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

// promptText flattens a prompt's content blocks to the text the model
// reads.
func promptText(blocks []contentBlock) (string, error) {
	var b strings.Builder
	for i, c := range blocks {
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "resource_link":
			fmt.Fprintf(&b, "\n[file: %s]\n", c.URI)
		case "resource":
			if c.Resource != nil {
				fmt.Fprintf(&b, "\n<file uri=%q>\n%s\n</file>\n", c.Resource.URI, c.Resource.Text)
			}
		default:
			return "", invalidParams("prompt[%d].type: %q is not supported (text, resource_link, resource)", i, c.Type)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", invalidParams("prompt: empty")
	}
	return b.String(), nil
}

// sessionPrompt serves session/prompt. It runs until the turn ends, so it
// releases the read loop first.
func (s *Server) sessionPrompt(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	raw := req.Params()
	var p struct {
		SessionID string         `json:"sessionId"`
		Prompt    []contentBlock `json:"prompt"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return nil, err
	}
	ls, err := s.getSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID()) // $/cancel_request cancels the turn
	defer release()
	return s.runPrompt(work, ls, text)
}

func (s *Server) runPrompt(ctx context.Context, ls *liveSession, text string) (any, error) {
	s.sess.wg.Add(1)
	defer s.sess.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the connection closing cancels the turn
		select {
		case <-s.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	end := s.beginProgress(ctx, titleFor(text), cancel)
	stop, err := ls.Prompt(ctx, text)
	end(string(stop))
	if errors.Is(err, session.ErrBusy) {
		return nil, invalidParams("sessionId: %v", err)
	}
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s", s.redact(err.Error()))
	}
	return map[string]any{"stopReason": string(stop)}, nil
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
	var history []provider.Message
	mode := meta.Mode
	for _, r := range recs {
		switch r.Type {
		case session.RecordMessage:
			if r.Message != nil {
				history = append(history, *r.Message)
			}
		case session.RecordMode:
			mode = r.Mode
		}
	}
	log, err := st.Open(p.SessionID)
	if err != nil {
		s.log.Warn("loaded session will not be saved further", "err", err)
		log = nil
	}
	cwd := p.CWD
	if cwd == "" {
		cwd = meta.Cwd
	}
	own, err := s.sessionMCP(p.MCPServers, cwd)
	if err != nil {
		return nil, err
	}
	ls, err := s.openSession(p.SessionID, cwd, mode, nil, history, log, false, own)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "session/load: %v", err)
	}
	s.addSession(p.SessionID, ls)
	s.replay(p.SessionID, recs)
	return map[string]any{"modes": map[string]any{"currentModeId": mode, "availableModes": availableModes()}}, nil
}

// replay sends a loaded history to the client as session/update.
func (s *Server) replay(id string, recs []session.Record) {
	text := func(t string) map[string]any { return map[string]any{"type": "text", "text": t} }
	for _, r := range recs {
		switch r.Type {
		case session.RecordMode:
			s.sendUpdate(id, session.Update{"sessionUpdate": "current_mode_update", "currentModeId": r.Mode})
		case session.RecordPlan:
			s.sendUpdate(id, session.Update{"sessionUpdate": "plan", "entries": r.Plan})
		case session.RecordMessage:
			m := r.Message
			if m == nil {
				continue
			}
			for _, p := range m.Parts {
				switch {
				case p.Kind == provider.PartText && m.Role == provider.RoleUser:
					s.sendUpdate(id, session.Update{"sessionUpdate": "user_message_chunk", "content": text(p.Text)})
				case p.Kind == provider.PartText:
					s.sendUpdate(id, session.Update{"sessionUpdate": "agent_message_chunk", "content": text(p.Text)})
				case p.Kind == provider.PartThinking && p.Text != "":
					s.sendUpdate(id, session.Update{"sessionUpdate": "agent_thought_chunk", "content": text(p.Text)})
				case p.Kind == provider.PartToolCall && p.Call != nil:
					var raw any
					json.Unmarshal(p.Call.Args, &raw)
					if raw == nil {
						raw = map[string]any{}
					}
					s.sendUpdate(id, session.Update{"sessionUpdate": "tool_call", "toolCallId": p.Call.ID, "title": p.Call.Name,
						"kind": "other", "status": "pending", "locations": []any{}, "rawInput": raw})
				case p.Kind == provider.PartToolResult && p.Result != nil:
					status := "completed"
					if p.Result.IsError {
						status = "failed"
					}
					s.sendUpdate(id, session.Update{"sessionUpdate": "tool_call_update", "toolCallId": p.Result.CallID, "status": status,
						"content": []any{map[string]any{"type": "content", "content": text(p.Result.Content)}}})
				}
			}
		}
	}
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
		if _, err := s.conn.Call(ctx, methodAskQuestion, map[string]any{"sessionId": id, "question": question, "options": options}, &res); err != nil {
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
	if _, err := s.conn.Call(ctx, methodShowMessageRequest, map[string]any{"type": 3, "message": question, "actions": actions}, &res); err != nil {
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
		if ls.log != nil {
			ls.log.Close()
		}
	}
}

// titleFor shortens a prompt for a progress title.
func titleFor(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if r := []rune(t); len(r) > 50 {
		t = string(r[:50]) + "…"
	}
	return t
}
