package rpc

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"runtime/trace"
	"strings"
	"sync/atomic"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/prompt/instructions"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// sessionManager is the connection's session table and lifecycle.
type sessionManager = session.Manager[*liveSession]

// newSessions makes the connection's sessions. The Manager opens them
// through openSession and reaches the rest of the server only through
// the functions of its sessionOpener.
func newSessions(s *Server) *sessions {
	o := sessionOpener{
		start: func(sp session.Spec) (*mcpbridge.Manager, error) { return startMCP(s.mcp, sp.Servers, sp.CWD) },
		open:  s.openSession, stop: s.mcp.Drop, cancelled: s.approvals.CancelSession,
		notSaved: func(err error) {
			s.log.Warn("session will not be saved", "err", err)
			s.showMessage(wire.MessageWarning, "cline-ls: this session is not being saved: "+err.Error())
		},
	}
	m := session.NewManager(o, session.ManagerOptions{
		Store: func() (*session.Store, error) {
			return session.NewStoreWithOptions(s.stateDir(), session.StoreOptions{Redact: s.redact, Logger: s.log})
		},
		IdleRelease: s.opts.IdleRelease,
		Go:          s.ws.Go,
		Done:        s.bgCtx.Done(),
		Logger:      s.log,
	})
	return &sessions{sessionManager: m, folders: s.folders, mode: func() string { return s.CurrentSettings().Mode },
		cancelApprovals: s.approvals.CancelSession, addFolder: s.addFolderFor, withConfig: withConfigOf(s), log: s.log}
}

// sessionOpener is session.Opener over the connection: a session's MCP
// servers are the ones its session/new or session/load named.
type sessionOpener struct {
	start     func(session.Spec) (*mcpbridge.Manager, error)
	open      func(session.Spec) (*liveSession, error)
	stop      func(*mcpbridge.Manager)
	cancelled func(id string)
	notSaved  func(error)
}

func (o sessionOpener) Start(sp session.Spec) (any, error) {
	m, err := o.start(sp)
	if m == nil {
		return nil, err
	}
	return m, err
}

func (o sessionOpener) Open(sp session.Spec) (*liveSession, error) { return o.open(sp) }

func (o sessionOpener) Stop(own any) {
	if m, _ := own.(*mcpbridge.Manager); m != nil {
		o.stop(m)
	}
}

func (o sessionOpener) Cancelled(id string) { o.cancelled(id) }
func (o sessionOpener) NotSaved(err error)  { o.notSaved(err) }

// liveSession is a session and what the connection keeps for it.
type liveSession struct {
	*session.Session
	cwd    string
	files  *delivery.Files
	log    *session.Log
	policy *session.Policy
	mcp    *mcpbridge.Manager // the servers session/new or session/load named, if any
	instr  *instructions.Loader
	bg     *tools.Background // its background commands (nil for a subagent)
	// turnLog records the turn a stock client started (stockturn.go).
	turnLog atomic.Pointer[session.TurnLog]
}

// availableModes is the modes as session/new and session/load list them.
func availableModes() []wire.Mode {
	all := tools.AllModes()
	out := make([]wire.Mode, len(all))
	for i, m := range all {
		out[i] = wire.Mode{ID: m.ID, Name: m.Name, Description: m.Description}
	}
	return out
}

// sessionModes is a session's modes as session/new and session/load
// answer them.
func sessionModes(current string) wire.SessionModes {
	return wire.SessionModes{CurrentModeID: current, AvailableModes: availableModes()}
}

// stateDir returns where sessions persist.
func (s *Server) stateDir() string {
	if d := s.CurrentSettings().StateDir; d != "" {
		return d
	}
	return session.DefaultStateDir(s.opts.Getenv)
}

// ownPaths are the daemon's own folders, never part of a workspace (not
// checkpointed, listed, searched or resolved to): the state directory in
// force and the default one.
func (s *Server) ownPaths() *workspace.OwnPaths {
	return workspace.NewOwnPaths(s.stateDir(), session.DefaultStateDir(s.opts.Getenv))
}

// redact scrubs the value of the configured API key variable (and the
// well-known ones) from text, so a key a model echoes never reaches a
// notification or a session file.
func (s *Server) redact(text string) string { return secretKeys(s.cfg.Secrets).redact(text) }

// secretKeys returns the secrets in force: the configured API key
// variable's value and the well-known ones'.
type secretKeys func() []string

func (keys secretKeys) redact(text string) string {
	for _, v := range keys() {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

// keyStart reports how many bytes at the end of text are the start of
// one of the secrets redact scrubs (the longest such end, shorter than
// the secret): text that may go on in a next chunk.
func (keys secretKeys) keyStart(text string) int {
	n := 0
	for _, k := range keys() {
		for l := min(len(k)-1, len(text)); l > n; l-- {
			if strings.HasSuffix(text, k[:l]) {
				n = l
				break
			}
		}
	}
	return n
}

// modelFamily is the prompt and tool family of a session's model
// (provider.Family); generic while there is no model.
func modelFamily(p provider.Provider) toolspec.Family {
	if p == nil {
		return toolspec.FamilyGeneric
	}
	return provider.Family(p.Model())
}

// redactFrame scrubs secrets from an outgoing message, whatever its shape
// (tool arguments in updates, approval previews, diffs, results): the one
// place every message to the client passes. Edits the daemon delivers to
// the editor's text (workspace/applyEdit, fs/write_text_file) are left as
// they are: they are the user's files, and a key in a .env file must stay
// a key.
func (keys secretKeys) redactFrame(data []byte) []byte {
	ks := keys()
	if len(ks) == 0 {
		return data
	}
	head := data[:min(len(data), 200)]
	if bytes.Contains(head, []byte(`"method":"`+methodApplyEdit+`"`)) || bytes.Contains(head, []byte(`"method":"`+methodWriteTextFile+`"`)) {
		return data
	}
	for _, k := range ks {
		if bytes.Contains(data, []byte(k)) {
			data = bytes.ReplaceAll(data, []byte(k), []byte("[redacted]"))
		}
	}
	return data
}

// newProvider builds the model client from the settings.
func (s *Server) newProvider() (provider.Provider, error) { return s.newProviderWith("") }

// newProviderWith builds the model client from the settings, with model
// in place of theirs unless empty.
func (s *Server) newProviderWith(model string) (provider.Provider, error) {
	st := s.CurrentSettings()
	p := st.Provider
	if p == nil || p.Name == "" {
		s.mu.Lock()
		dialect, client := s.dialect, s.caps.name
		s.mu.Unlock()
		return nil, errors.New(settings.NoModelMessage(dialect == DialectACP, client))
	}
	cfg := provider.Config{Name: p.Name, Model: p.Model, BaseURL: p.BaseURL, NativeTools: p.NativeTools,
		Transcript: p.Transcript, Logger: s.log, Limits: p.Limits(), Version: s.opts.Version,
		Reasoning: p.Reasoning(), API: p.API}
	if model != "" {
		cfg.Model = model
	}
	if p.APIKeyEnv != "" {
		cfg.APIKey = s.opts.Getenv(p.APIKeyEnv)
	}
	if s.opts.HTTPClient != nil {
		cfg.HTTPClient = s.opts.HTTPClient
	}
	return provider.New(cfg)
}

// openSession makes a session object bound to this connection (the
// Manager's Opener.Open).
func (s *Server) openSession(sp session.Spec) (*liveSession, error) {
	id, cwd, mode, prov, subagent := sp.ID, sp.CWD, sp.Mode, sp.Provider, sp.Subagent
	ownMCP, _ := sp.Own.(*mcpbridge.Manager)
	// A subagent is no session the client knows: what it reads through
	// the client (ACP's fs/*) it reads in its parent's name.
	clientID := id
	if sp.Parent != "" {
		clientID = sp.Parent
	}
	f := s.delivery.Files(clientID, cwd)
	var perr error
	if prov == nil {
		prov, perr = s.newProvider()
		prov = s.models.Switch(id, prov, perr, s.CurrentSettings().Provider)
	} else {
		prov = sameModel{prov}
	}
	st := s.CurrentSettings()
	s.sandboxWarn.warn(st, s.log, s.showMessage)
	policy, err := session.NewPolicy(s.acpcfg.policy(id, policyConfig(st)))
	if err != nil {
		return nil, err
	}
	ls := &liveSession{cwd: cwd, files: f, log: sp.Log, policy: policy, mcp: ownMCP}
	s.mu.Lock()
	lsp := lspFeatures(s.dialect, s.caps)
	s.mu.Unlock()
	extra, mcpImpls := s.mcp.Tools(ownMCP)
	// A session's background commands live as long as it does (closed
	// or released); a subagent runs none.
	var bg *tools.Background
	if !subagent {
		bg = tools.NewBackground(tools.DefaultMaxBackground)
	}
	ls.bg = bg
	// A subagent's session is not one the client knows, so its commands
	// cannot name a client terminal.
	var term tools.ClientTerminal
	if !subagent {
		term = s.client().Terminal(id)
	}
	impls := builtinImpls(f, s.cfg.HiddenEnv(), bg, secretKeys(s.cfg.Secrets).keyStart, sandboxPolicyFor(s, cwd), term)
	for name, b := range mcpImpls {
		impls[name] = b
	}
	if len(lsp) > 0 {
		maps.Copy(impls, tools.LSPTools(f, editorServers{caller: connCaller(s), enc: s.Encoding}, lsp))
	}
	findSkills := func() []tools.Skill {
		return tools.FindSkills(tools.SkillDirs(workspace.RealFolders(s.folders.Paths()), s.opts.Getenv)...)
	}
	impls[tools.NameUseSkill] = tools.UseSkill(findSkills)
	var subagents []tools.SubagentConfig
	for _, sa := range st.Subagents {
		subagents = append(subagents, tools.SubagentConfig{Name: sa.Name, Description: sa.Description, Prompt: sa.Prompt})
	}
	host := &sessionHost{id: id, files: f, note: ls.noteUpdate, send: s.sendUpdate,
		redact: s.redact, keyStart: secretKeys(s.cfg.Secrets).keyStart, extra: extra, edited: s.toolCalls.reportEdits,
		warn:   func(msg string) { s.showMessage(wire.MessageWarning, msg) },
		skills: func() []string { return tools.SkillNames(findSkills()) },
	}
	cfg := session.Config{
		ID: id, CWD: cwd, Mode: mode, Provider: prov, ProviderErr: perr,
		Impls:      impls,
		Background: bg,
		LSP:        lsp,
		Subagents:  subagents,
		Files:      f,
		Policy:     policy,
		Approver:   s.approvals.Approver(id),
		Host:       host,
		Log:        sp.Log,
		MaxTurns:   st.MaxTurns,
		Family:     modelFamily(prov),
		Subagent:   subagent,
		Title:      sp.Title,
		Plan:       sp.Plan,
		ACP:        s.dialect == DialectACP,
	}
	cfg.Hooks = newSessionHooks(s, id, cwd, f, sp.Log.Path())
	withInstructions(s, host, ls)
	if _, own := prov.(*settings.ModelSwitch); !own && st.Provider != nil {
		// A session's own model says its window (the settings' override
		// of the model in use); a subagent's shares its parent's.
		cfg.ContextWindow = st.Provider.ContextWindow
	}
	if st.Context != nil {
		cfg.CompactAt = st.Context.CompactAt
	}
	if s.approvals.Channels().CanAsk() {
		host.ask = s.approvals.Question
	}
	if !subagent {
		host.checkpoint = s.ckpt.Take
		s.ckpt.Prime()
	}
	if sp.Spawn != nil && prov != nil {
		host.spawn = func(ctx context.Context, prompt string) (string, error) { return sp.Spawn(ctx, prov, prompt) }
	}
	sess, err := session.New(cfg, sp.History)
	if err != nil {
		return nil, err
	}
	ls.Session = sess
	return ls, nil
}

// sendUpdate sends session/update.
func (s *Server) sendUpdate(id string, u wire.SessionUpdate) {
	if trace.IsEnabled() {
		traceToolUpdate(id, u)
	}
	s.client().Report(id, u)
	s.ckpt.TrackToolCall(id, u)
	u = s.client().Update(u)
	if err := s.conn.Notify(context.Background(), methodSessionUpdate, wire.SessionNotification{SessionID: id, Update: u}); err != nil {
		s.log.Debug("session/update not sent", "err", err)
	}
}

// traceToolUpdate marks, in an execution trace of the process, the moment
// a tool call's update leaves its session for the connection: a log event
// "tool update" with "session call status" on the goroutine that sends it.
// bench/sessions matches these to what its client receives, to split a
// slow call's time between the session and the way to the client.
func traceToolUpdate(id string, u wire.SessionUpdate) {
	call, status, ok := wire.ToolCallState(u)
	if !ok {
		return
	}
	trace.Log(context.Background(), "tool update", id+" "+call+" "+string(status))
}
