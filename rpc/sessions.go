package rpc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cline-ls/cline-ls/internal/sandbox"
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

// sessions holds the connection's agent sessions.
type sessions struct {
	mu     sync.Mutex              // guards byID, editor, store, releasing, closedByClient and closed
	byID   map[string]*liveSession // the sessions the client made or loaded
	editor map[string]*liveSession // by mode: the editor's own, for cline/callTool without a session
	store  *session.Store
	// releasing has a channel per session being released, closed once its
	// history is closed: reading its file before that could miss (or
	// race) the last records. Guarded by mu.
	releasing map[string]chan struct{}
	// closedByClient holds the sessions the client closed: unlike one
	// released for being idle, such a session is reopened by session/load
	// only, never quietly by the next call that names it.
	closedByClient map[string]bool
	closed         bool           // the connection is ending: no new turns
	wg             sync.WaitGroup // running prompts
	// idleLoop starts releaseIdleLoop with the first session: a
	// connection that opens none has nothing to release.
	idleLoop sync.Once
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
	bg     *tools.Background // its background commands (nil for a subagent)
	// detached: taken out of byID by detachLocked; guarded by sessions.mu
	detached bool
	turns    sync.WaitGroup // its running prompts, for session/close to wait on
	// turnLog records the turn a stock client started (stockturn.go).
	turnLog atomic.Pointer[turnLog]
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

// ownPaths are the daemon's own folders, never part of a workspace (not
// checkpointed, listed, searched or resolved to): the state directory in
// force and the default one.
func (s *Server) ownPaths() *workspace.OwnPaths {
	return workspace.NewOwnPaths(s.stateDir(), session.DefaultStateDir(s.opts.Getenv))
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
	for _, v := range s.cfg.Secrets() {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

// keyStart reports how many bytes at the end of text are the start of
// one of the secrets redact scrubs (the longest such end, shorter than
// the secret): text that may go on in a next chunk.
func (s *Server) keyStart(text string) int {
	n := 0
	for _, k := range s.cfg.Secrets() {
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
func (s *Server) redactFrame(data []byte) []byte {
	keys := s.cfg.Secrets()
	if len(keys) == 0 {
		return data
	}
	head := data[:min(len(data), 200)]
	if bytes.Contains(head, []byte(`"method":"`+methodApplyEdit+`"`)) || bytes.Contains(head, []byte(`"method":"`+methodWriteTextFile+`"`)) {
		return data
	}
	for _, k := range keys {
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

// openSession makes a session object bound to this connection.
func (s *Server) openSession(sp sessionSpec) (*liveSession, error) {
	s.sess.idleLoop.Do(func() { s.ws.Go(func() { s.releaseIdleLoop(s.bgCtx) }) })
	id, cwd, mode, prov, ownMCP, subagent := sp.id, sp.cwd, sp.mode, sp.prov, sp.mcp, sp.subagent
	f := s.newFiles()
	f.sessionID = id
	f.cwd = cwd
	var perr error
	if prov == nil {
		prov, perr = s.newProvider()
		prov = s.models.Switch(id, prov, perr, s.CurrentSettings().Provider)
	} else {
		prov = sameModel{prov}
	}
	st := s.CurrentSettings()
	s.warnNoSandbox(st)
	policy, err := session.NewPolicy(s.sessionPolicy(id, policyConfig(st)))
	if err != nil {
		return nil, err
	}
	ls := &liveSession{cwd: cwd, files: f, log: sp.log, policy: policy, mcp: ownMCP}
	s.mu.Lock()
	canAsk := (s.caps.clineQuestions || s.caps.showMessageReq) && s.dialect == DialectLSP
	s.mu.Unlock()
	extra, mcpImpls := s.mcpFor(ownMCP)
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
		term = s.clientTerminal(id)
	}
	impls := builtinImpls(f, s.hiddenEnv(), bg, s.keyStart, func() sandbox.Policy { return s.sandboxPolicy(cwd) }, term)
	for name, b := range mcpImpls {
		impls[name] = b
	}
	lsp := s.lspFeatures()
	if len(lsp) > 0 {
		maps.Copy(impls, tools.LSPTools(f, editorServers{s}, lsp))
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
		Impls:      impls,
		Background: bg,
		LSP:        lsp,
		Extra:      extra,
		Skills:     func() []string { return tools.SkillNames(findSkills()) },
		Subagents:  subagents,
		Files:      f,
		Policy:     policy,
		Approver:   s.approvals.approver(id),
		Updates: func(u wire.SessionUpdate) {
			ls.noteUpdate(u)
			s.sendUpdate(id, u)
		},
		Log:      sp.log,
		MaxTurns: st.MaxTurns,
		Family:   modelFamily(prov),
		Subagent: subagent,
		OpenBuffers: func() []string {
			var out []string
			for _, p := range f.OpenBuffers() {
				out = append(out, f.Display(p))
			}
			slices.Sort(out)
			return out
		},
		Redact:   s.redact,
		KeyStart: s.keyStart,
		Title:    sp.title,
		Plan:     sp.plan,
		Warn:     func(msg string) { s.showMessage(wire.MessageWarning, "cline-ls: "+msg) },
		ACP:      s.dialect == DialectACP,
		Edited: func(callID string, edits []tools.FileEdit) {
			s.reportEdits(context.Background(), id, f, callID, edits)
		},
	}
	cfg.Hooks = &sessionHooks{s: s, id: id, cwd: cwd, files: f, transcript: sp.log.Path()}
	s.withInstructions(&cfg, ls)
	if _, own := prov.(*settings.ModelSwitch); !own && st.Provider != nil {
		// A session's own model says its window (the settings' override
		// of the model in use); a subagent's shares its parent's.
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
	if !subagent {
		cfg.Checkpoint = func(turn int, callID, title string) { s.takeCheckpoint(id, turn, callID, title) }
		s.primeCheckpoints()
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
func (s *Server) sendUpdate(id string, u wire.SessionUpdate) {
	if trace.IsEnabled() {
		traceToolUpdate(id, u)
	}
	s.reportProgress(id, u)
	s.trackToolCall(id, u)
	if s.dialect == DialectACP {
		u = s.acpUpdate(u)
	}
	if err := s.conn.Notify(context.Background(), methodSessionUpdate, wire.SessionNotification{SessionID: id, Update: u}); err != nil {
		s.log.Debug("session/update not sent", "err", err)
	}
}

// toolCallState is the tool call id and status a session update carries;
// ok is false for an update that is not a tool call's.
func toolCallState(u wire.SessionUpdate) (id string, status wire.ToolCallStatus, ok bool) {
	switch u := u.(type) {
	case wire.ToolCall:
		return u.ToolCallID, u.Status, true
	case wire.ToolCallUpdate:
		return u.ToolCallID, u.Status, true
	}
	return "", "", false
}

// traceToolUpdate marks, in an execution trace of the process, the moment
// a tool call's update leaves its session for the connection: a log event
// "tool update" with "session call status" on the goroutine that sends it.
// bench/sessions matches these to what its client receives, to split a
// slow call's time between the session and the way to the client.
func traceToolUpdate(id string, u wire.SessionUpdate) {
	call, status, ok := toolCallState(u)
	if !ok {
		return
	}
	trace.Log(context.Background(), "tool update", id+" "+call+" "+string(status))
}
