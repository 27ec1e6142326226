package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/wire"
)

// mcpServers holds the connection's MCP servers: those of the settings
// (initializationOptions.mcpServers), shared by all sessions, and those a
// session/new named, owned by that session.
type mcpServers struct {
	mu       sync.Mutex
	conn     *mcpbridge.Manager
	connRaw  string // the settings they were started from
	sessions []*mcpbridge.Manager
}

// startMCP parses MCP server configurations and starts them in the
// background: connecting may take seconds, and neither initialize nor
// session/new should wait for it. Their tools appear at the next model
// request once connected.
func (s *Server) startMCP(raw []json.RawMessage, field, dir string) (*mcpbridge.Manager, error) {
	cfgs, err := mcpbridge.ParseConfig(raw)
	if err != nil {
		return nil, invalidParams("%s%v", field, strings.TrimPrefix(err.Error(), "mcpServers"))
	}
	// The last note about left-out tools sent per server: reports come
	// one at a time, and the user is told of each new note once.
	noted := map[string]string{}
	// The prompts each server last listed: ACP sessions are told their
	// slash commands again when that changes.
	prompts := map[string]int{}
	m, err := mcpbridge.New(cfgs, mcpbridge.Options{
		Logger: s.log, Version: s.opts.Version, Dir: dir, HideEnv: s.hiddenEnv(),
		Elicit: mcpElicitor{s: s}, Roots: s.folders.Paths(), Sample: s.mcpSamplerIfAllowed(),
		OAuth: mcpbridge.NewOAuth(mcpbridge.OAuthConfig{StateDir: s.stateDir(), Logger: s.log, SignIn: s.mcpSignIn}),
		OnStatus: func(st mcpbridge.ServerStatus) {
			if st.Prompts != prompts[st.Name] {
				prompts[st.Name] = st.Prompts
				// Not from here: the report may come while the server
				// holds what listing its prompts takes.
				s.ws.Go(s.sendAvailableCommands)
			}
			s.log.Info("mcp server", "name", st.Name, "state", st.State, "tools", st.Tools, "offered", st.Offered, "err", st.Err)
			if st.State == mcpbridge.StateFailed || st.State == mcpbridge.StateRestarting {
				s.logToClient(context.Background(), 2, fmt.Sprintf("MCP server %s: %s %s", st.Name, st.State, st.Err))
			}
			if st.Note != noted[st.Name] {
				noted[st.Name] = st.Note
				if st.Note != "" {
					s.logToClient(context.Background(), 2, st.Note)
				}
			}
		},
	})
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "MCP: %v", err)
	}
	s.ws.Go(func() { m.Start(s.bgCtx) })
	return m, nil
}

// connMCP (re)starts the settings' MCP servers when they changed.
func (s *Server) connMCP(raw []json.RawMessage, field string) error {
	key := []byte(nil) // none: what a connection starts with, and no encoding to compare at every start
	if len(raw) > 0 {
		key, _ = json.Marshal(raw)
		// The servers are children to stop on the way out.
		s.catchSignals()
	}
	s.mcp.mu.Lock()
	same := s.mcp.connRaw == string(key)
	s.mcp.mu.Unlock()
	if same {
		return nil
	}
	var m *mcpbridge.Manager
	if len(raw) > 0 {
		var err error
		if m, err = s.startMCP(raw, field, s.files0Root()); err != nil {
			return err
		}
	}
	s.mcp.mu.Lock()
	old := s.mcp.conn
	s.mcp.conn, s.mcp.connRaw = m, string(key)
	s.mcp.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// files0Root is the primary folder, where stdio MCP servers start.
func (s *Server) files0Root() string {
	if p := s.folders.Paths(); len(p) > 0 {
		return p[0]
	}
	return ""
}

// mcpFor returns the dynamic tools and the MCP built-ins for a session:
// its own servers (if session/new named some) else the connection's.
func (s *Server) mcpFor(own *mcpbridge.Manager) (func() []tools.Tool, map[string]tools.BuildFunc) {
	pick := func() *mcpbridge.Manager {
		if own != nil {
			return own
		}
		s.mcp.mu.Lock()
		defer s.mcp.mu.Unlock()
		return s.mcp.conn
	}
	extra := func() []tools.Tool {
		if m := pick(); m != nil {
			return m.Tools()
		}
		return nil
	}
	builtins := map[string]tools.BuildFunc{
		tools.NameUseMCPTool: func(raw json.RawMessage) (tools.Invocation, error) {
			return mcpBuiltin(pick(), tools.NameUseMCPTool, raw)
		},
		tools.NameAccessMCPResource: func(raw json.RawMessage) (tools.Invocation, error) {
			return mcpBuiltin(pick(), tools.NameAccessMCPResource, raw)
		},
	}
	return extra, builtins
}

func mcpBuiltin(m *mcpbridge.Manager, name string, raw json.RawMessage) (tools.Invocation, error) {
	if m == nil {
		return nil, &tools.ValidationError{Tool: name, Problems: []tools.Problem{{Path: "server_name", Message: "no MCP server is configured"}}}
	}
	return m.Builtins()[name](raw)
}

// mcpManager is the MCP servers ls calls: its own, if session/new named
// some, else the connection's; nil when there are none.
func (s *Server) mcpManager(ls *liveSession) *mcpbridge.Manager {
	if ls != nil && ls.mcp != nil {
		return ls.mcp
	}
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	return s.mcp.conn
}

// mcpPromptText is the turn a slash command naming an MCP prompt
// ("/mcp:server:prompt args") stands for: the prompt's messages, fetched
// with its arguments. What goes wrong is the user's to read, as a
// params error, and no turn starts.
func (s *Server) mcpPromptText(ctx context.Context, ls *liveSession, text string) (string, error) {
	m := s.mcpManager(ls)
	if m == nil {
		return "", invalidParams("prompt: %s names an MCP prompt, and no MCP server is configured", strings.Fields(text)[0])
	}
	out, err := m.RunPromptCommand(ctx, text)
	if err != nil {
		return "", invalidParams("prompt: %s", s.redact(err.Error()))
	}
	return out, nil
}

// mcpCommands are the slash commands of the MCP prompts ls can run.
func (s *Server) mcpCommands(ls *liveSession) []wire.AvailableCommand {
	m := s.mcpManager(ls)
	if m == nil {
		return nil
	}
	var out []wire.AvailableCommand
	for _, p := range m.Prompts() {
		c := wire.AvailableCommand{Name: p.Command(), Description: cmp.Or(p.Description, p.Title, "MCP prompt "+p.Name+" of "+p.Server)}
		if h := p.Hint(); h != "" {
			c.Input = &wire.CommandInput{Hint: h}
		}
		out = append(out, c)
	}
	return out
}

// dropMCP stops the servers one session owned.
func (s *Server) dropMCP(m *mcpbridge.Manager) {
	s.mcp.mu.Lock()
	s.mcp.sessions = slices.DeleteFunc(s.mcp.sessions, func(x *mcpbridge.Manager) bool { return x == m })
	s.mcp.mu.Unlock()
	if err := m.Close(); err != nil {
		s.log.Warn("stopping a session's MCP servers", "err", err)
	}
}

// mcpSignIn shows the user the URL to sign in to an MCP server at: the
// editor opens it in the browser (window/showDocument, external), or,
// for an editor that cannot (Neovim 0.7's own LSP client), a message
// gives it to the user to open. An ACP
// client has no such request, and a message would need a session the
// connection's servers do not have: the user is told to sign in from
// the terminal, whose tokens the daemon then reads.
func (s *Server) mcpSignIn(ctx context.Context, server, u string) error {
	if s.dialect == DialectACP {
		return fmt.Errorf("MCP server %s needs a sign-in; run: cline-ls mcp login %s", server, server)
	}
	s.mu.Lock()
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if !canShow {
		// The user opens it by hand; the sign-in waits for the browser.
		s.showMessage(wire.MessageInfo, fmt.Sprintf("cline-ls: MCP server %s needs a sign-in: open %s in your browser", server, u))
		return nil
	}
	s.logToClient(ctx, wire.MessageInfo, fmt.Sprintf("MCP server %s needs a sign-in; opening %s", server, u))
	var res struct {
		Success bool `json:"success"`
	}
	if err := s.call(ctx, "window/showDocument", map[string]any{"uri": u, "external": true}, &res); err != nil {
		return fmt.Errorf("the editor did not open the sign-in page: %w", err)
	}
	if !res.Success {
		return errors.New("the editor could not open the sign-in page")
	}
	return nil
}

// mcpRootsChanged tells every MCP server the workspace folders, its
// roots, once they changed.
func (s *Server) mcpRootsChanged() {
	s.mcp.mu.Lock()
	all := append([]*mcpbridge.Manager{s.mcp.conn}, s.mcp.sessions...)
	s.mcp.mu.Unlock()
	paths := s.folders.Paths()
	for _, m := range all {
		if m != nil {
			m.SetRoots(paths)
		}
	}
}

// mcpElicitor asks the user an MCP server's questions (elicitation/create)
// through the question channel ask_question uses: first whether to answer
// at all, then one question per field the schema's defaults do not
// settle. A field with choices (an enum, a boolean) is asked with them
// as the options; one of free text only through cline/askQuestion, the
// one way to ask that takes any answer. Where the user cannot be asked
// (the ACP dialect, a client with neither way), the question is
// declined, and the log says so.
type mcpElicitor struct{ s *Server }

func (e mcpElicitor) Elicit(ctx context.Context, server, message string, schema json.RawMessage) (string, map[string]any) {
	s := e.s
	can, viaCline := s.canAskForMCP()
	if !can {
		s.log.Info("mcp: a server's question was declined: the client has no way to ask the user", "server", server)
		return mcpbridge.ElicitDecline, nil
	}
	const answer, decline = "Answer", "Decline"
	a, ok, err := s.askQuestion(ctx, "", fmt.Sprintf("MCP server %s asks: %s", server, message), []string{answer, decline})
	switch {
	case err != nil || !ok:
		return mcpbridge.ElicitCancel, nil
	case a == decline:
		return mcpbridge.ElicitDecline, nil
	}
	content := map[string]any{}
	for _, f := range mcpbridge.ElicitFields(schema) {
		if len(f.Choices) == 0 && (f.Default != nil || !viaCline) {
			if f.Default == nil && f.Required {
				s.log.Info("mcp: a server's question was cancelled: a field needs a typed answer the client cannot take", "server", server, "field", f.Name)
				return mcpbridge.ElicitCancel, nil
			}
			continue // the Manager fills in the default
		}
		q := fmt.Sprintf("MCP server %s: %s", server, f.Prompt)
		if f.Default != nil {
			q += fmt.Sprintf(" (default: %v)", f.Default)
		}
		a, ok, err := s.askQuestion(ctx, "", q, f.Choices)
		if err != nil || !ok {
			return mcpbridge.ElicitCancel, nil
		}
		content[f.Name] = elicitValue(f.Type, a)
	}
	return mcpbridge.ElicitAccept, content
}

// canAskForMCP reports whether the user can be asked what an MCP server
// wants (an elicitation, the model), and whether cline/askQuestion, which
// takes any answer, is the way. The connection's servers have no
// session, so an ACP client, whose questions belong to one, cannot be
// asked.
func (s *Server) canAskForMCP() (can, viaCline bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	viaCline = s.caps.clineQuestions
	return (viaCline || s.caps.showMessageReq) && s.dialect == DialectLSP, viaCline
}

// mcpSamplerIfAllowed is the sampler servers started now get: none
// unless the settings' mcpSampling allows it (a change reaches servers
// started after it).
func (s *Server) mcpSamplerIfAllowed() mcpbridge.Sampler {
	if !s.CurrentSettings().MCPSampling {
		return nil
	}
	return mcpSampler{s: s}
}

// mcpSampler lends MCP servers the model when the settings allow it
// (mcpSampling): each request is shown to the user, who allows or
// denies it, and then goes to the model the settings name, without
// tools, its reply bounded.
type mcpSampler struct{ s *Server }

func (m mcpSampler) Sample(ctx context.Context, server string, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	s := m.s
	if can, _ := s.canAskForMCP(); !can {
		return mcpbridge.SampleResult{}, fmt.Errorf("cline-ls cannot ask its user to lend the model here (no way to ask), so sampling/createMessage is refused")
	}
	last := req.Messages[len(req.Messages)-1].Text
	if r := []rune(last); len(r) > 300 {
		last = string(r[:300]) + "…"
	}
	const allow, deny = "Allow", "Deny"
	q := fmt.Sprintf("MCP server %s asks to use your model (%d messages, a reply of up to %d tokens, on your account). Its last message: %s",
		server, len(req.Messages), req.MaxTokens, last)
	a, ok, err := s.askQuestion(ctx, "", s.redact(q), []string{deny, allow})
	if err != nil || !ok || a != allow {
		return mcpbridge.SampleResult{}, fmt.Errorf("the user did not let the server use the model")
	}
	p, err := s.newProviderWith("")
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("no model to lend: %s", s.redact(err.Error()))
	}
	msgs := make([]provider.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		role := provider.RoleUser
		if m.Role == "assistant" {
			role = provider.RoleAssistant
		}
		msgs = append(msgs, provider.Message{Role: role, Parts: []provider.Part{provider.TextPart(m.Text)}})
	}
	stream, err := p.Stream(ctx, provider.Request{System: req.System, Messages: msgs, MaxTokens: req.MaxTokens})
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("the model: %s", s.redact(err.Error()))
	}
	reply, err := provider.Collect(stream)
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("the model: %s", s.redact(err.Error()))
	}
	stop := "endTurn"
	if reply.Stop == provider.StopMaxTokens {
		stop = "maxTokens"
	}
	return mcpbridge.SampleResult{Text: reply.Text(), Model: p.Model(), StopReason: stop}, nil
}

// elicitValue reads an answer as the field's type; the server checks
// it against its schema, and an answer that is not a number stays text
// for that check to name.
func elicitValue(typ, a string) any {
	switch typ {
	case "boolean":
		return a == "true"
	case "number", "integer":
		if n, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil {
			return n
		}
	}
	return a
}

// closeMCP stops every MCP server.
func (s *Server) closeMCP() {
	s.mcp.mu.Lock()
	all := append([]*mcpbridge.Manager{s.mcp.conn}, s.mcp.sessions...)
	s.mcp.conn, s.mcp.sessions = nil, nil
	s.mcp.mu.Unlock()
	for _, m := range all {
		if m != nil {
			m.Close()
		}
	}
}
