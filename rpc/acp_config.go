package rpc

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

// ACP's session configuration is the ACP peer's (acppeer): the
// options a client can show as selectors (mode, model, approval level)
// in session/new and session/load answers, set with
// session/set_config_option, and the commands the daemon runs itself
// when a prompt is one of them, advertised with available_commands_update.
const methodSetConfigOption = acppeer.MethodSetConfigOption

// sessionConfig is the part that answers for the sessions'
// configuration: the choices made through config options
// (acppeer.Choices) over the settings in force, the options shown, the
// sessions' models and the commands a prompt can be. What it needs of
// the rest of the server are the functions below, given by
// newSessionConfig.
type sessionConfig struct {
	acppeer.Choices
	settings func() settings.Settings
	models   *settings.Models     // the sessions' own
	lists    *settings.ModelLists // the providers' models listings
	// newProvider builds a model client from the settings in force,
	// with model in place of theirs unless empty.
	newProvider func(model string) (provider.Provider, error)
	getSession  func(id string) (*liveSession, error)
	sessions    func() []*liveSession
	sendUpdate  func(id string, u wire.SessionUpdate)
	afterReply  func(reqID jsonrpc2.ID, fn func(context.Context))
	// goBackground runs fn off the read loop until the connection ends;
	// bgCtx ends with it.
	goBackground func(fn func()) bool
	bgCtx        context.Context
	// commands are the client's peer's slash commands, nil for a client
	// that takes none; mcpCommands a session's MCP servers' prompts.
	commands    func() []wire.AvailableCommand
	mcpCommands func(ls *liveSession) []wire.AvailableCommand
	undo        func(ctx context.Context, ls *liveSession) (string, error)
	redact      func(string) string

	// The sessions part's handlers this part answers around.
	serveClose   func(ctx context.Context, req *jsonrpc2.Request) (any, error)
	serveACPLoad func(raw []byte) (any, error)
	serveSetMode func(raw []byte) (any, error)
}

// newSessionConfig makes the connection's configuration part from the
// server's parts; the sessions part must be made already.
func newSessionConfig(s *Server) *sessionConfig {
	return &sessionConfig{settings: s.CurrentSettings, models: &s.models, lists: s.modelLists,
		newProvider: s.newProviderWith, getSession: s.sess.get, sessions: s.sess.Sessions,
		sendUpdate: s.sendUpdate, afterReply: s.afterReply, goBackground: s.ws.Go, bgCtx: s.bgCtx,
		commands:    func() []wire.AvailableCommand { return s.client().Commands() },
		mcpCommands: func(ls *liveSession) []wire.AvailableCommand { return s.mcp.Commands(mcpOf(ls)) },
		undo:        func(ctx context.Context, ls *liveSession) (string, error) { return undoLastTurn(ctx, s.ckpt, ls) },
		redact:      s.redact,
		serveClose:  s.sess.serveClose, serveACPLoad: s.sess.serveACPLoad, serveSetMode: s.sess.serveSetMode}
}

// withConfigOf is the configuration part's withConfig for the sessions
// part, which is made first: bound when called, not when given.
func withConfigOf(s *Server) func(reqID jsonrpc2.ID, res any, id string) (any, error) {
	return func(reqID jsonrpc2.ID, res any, id string) (any, error) { return s.acpcfg.withConfig(reqID, res, id) }
}

// configCall makes a handler of the configuration part a route's.
func configCall(f func(*sessionConfig, context.Context, *jsonrpc2.Request) (any, error)) handler {
	return func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) { return f(s.acpcfg, ctx, req) }
}

// configParams is configCall for a handler that takes only the params.
func configParams(f func(*sessionConfig, []byte) (any, error)) handler {
	return func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) {
		return f(s.acpcfg, req.Params())
	}
}

// acpCloseConfig serves ACP's session/close and forgets the session's
// choices.
func (c *sessionConfig) acpCloseConfig(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p acp.CloseSessionRequest
	decodeParams(req.Params(), &p)
	res, err := c.serveClose(ctx, req)
	if err == nil {
		c.Forget(string(p.SessionId))
		c.models.Forget(string(p.SessionId))
	}
	return res, err
}

// policy is the policy configuration of session id: the settings' with
// the session's approval level over them, and whether a sandbox can
// confine its commands.
func (c *sessionConfig) policy(id string, cfg session.PolicyConfig) session.PolicyConfig {
	acppeer.ApplyLevel(c.Level(id), &cfg.Approvals)
	// Probed only where commands are to be confined: a daemon that never
	// uses the sandbox never runs bubblewrap.
	if cfg.Approvals.Execute == session.Sandbox {
		cfg.SandboxAvailable = SandboxStatus(c.settings()).Backend != sandbox.BackendNone
	}
	return cfg
}

// modelChoices are the models a session can switch to: its own, the
// settings' model and provider.models, the provider's default, and the
// provider's models listing once fetched (cline/models, or in the
// background after session/new).
func (c *sessionConfig) modelChoices(current string) []string {
	lists := [][]string{{current}}
	if p := c.settings().Provider; p != nil {
		lists = append(lists, []string{p.Model}, p.Models)
		for _, d := range settings.DefaultModels {
			if d.Provider == p.Name {
				lists = append(lists, []string{d.Model})
			}
		}
		for _, m := range c.lists.Cached(p) {
			lists = append(lists, []string{m.ID})
		}
	}
	return acppeer.ModelChoices(lists...)
}

// options lists a session's options with their current values.
func (c *sessionConfig) options(ls *liveSession) []wire.ConfigOption {
	cur := acppeer.Current{Mode: ls.Mode(), Level: c.Level(ls.ID())}
	if m := c.models.Of(ls.ID()); m != nil {
		cur.HasModel, cur.Model = true, m.Shown()
		cur.Models = c.modelChoices(cur.Model)
	}
	if st := SandboxStatus(c.settings()); st.Backend == sandbox.BackendNone {
		cur.NoSandbox = st.Detail
	}
	return acppeer.ConfigOptions(cur)
}

// configuredResult is an ACP session/new, session/load or session/fork
// answer with the session's options beside the sessions part's members,
// in the order the members had when they were merged as JSON objects.
type configuredResult struct {
	ConfigOptions []wire.ConfigOption `json:"configOptions"`
	Modes         wire.SessionModes   `json:"modes"`
	SessionID     string              `json:"sessionId,omitempty"` // not in session/load's
}

// withConfig adds configOptions to a session/new or session/load answer
// for session id (a wire.NewSessionResult or a wire.ModesResult), and
// sends the session's commands once the answer is on the wire (a client
// does not know the session before).
func (c *sessionConfig) withConfig(reqID jsonrpc2.ID, res any, id string) (any, error) {
	ls, err := c.getSession(id)
	if err != nil {
		return nil, err
	}
	var out configuredResult
	switch r := res.(type) {
	case wire.NewSessionResult:
		out.Modes, out.SessionID = r.Modes, r.SessionID
	case wire.ModesResult:
		out.Modes = r.Modes
	default:
		return res, nil
	}
	out.ConfigOptions = c.options(ls)
	c.afterReply(reqID, func(context.Context) {
		c.sendUpdate(id, wire.AvailableCommandsUpdate{AvailableCommands: c.availableCommands(ls)})
		c.offerListedModels(ls)
	})
	return out, nil
}

// acpSessionLoadConfig serves ACP's session/load with the config options.
func (c *sessionConfig) acpSessionLoadConfig(_ context.Context, req *jsonrpc2.Request) (any, error) {
	res, err := c.serveACPLoad(req.Params())
	if err != nil {
		return nil, err
	}
	var p acpLoadParams
	decodeParams(req.Params(), &p)
	return c.withConfig(req.ID(), res, string(p.SessionId))
}

// acpSetMode serves ACP's session/set_mode; clients that show the mode
// as a config option hear of the change too.
func (c *sessionConfig) acpSetMode(raw []byte) (any, error) {
	res, err := c.serveSetMode(raw)
	if err != nil {
		return nil, err
	}
	var p acp.SetSessionModeRequest
	decodeParams(raw, &p)
	if ls, err := c.getSession(string(p.SessionId)); err == nil {
		c.sendConfigUpdate(ls)
	}
	return res, nil
}

// setConfigOption serves session/set_config_option.
func (c *sessionConfig) setConfigOption(raw []byte) (any, error) {
	var p setConfigParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "configId", p.ConfigID); err != nil {
		return nil, err
	}
	ls, err := c.getSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if p.Type == "boolean" || json.Unmarshal(p.Value, &value) != nil {
		return nil, invalidParams("value: %s takes one of its options' values, a string", p.ConfigID)
	}
	switch p.ConfigID {
	case acppeer.ConfigMode:
		if err := ls.SetMode(value); err != nil {
			return nil, invalidParams("value: %v", err)
		}
	case acppeer.ConfigModel:
		if err := c.setModel(ls, value); err != nil {
			return nil, err
		}
	case acppeer.ConfigApprovals:
		level, ok := acppeer.ResolveLevel(value)
		if !ok {
			return nil, invalidParams("value: approvals must be one of %s; got %q", acppeer.LevelIDs(), value)
		}
		c.SetLevel(ls.ID(), level)
		if err := ls.policy.SetConfig(c.policy(ls.ID(), policyConfig(c.settings()))); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "approvals: %v", err)
		}
	default:
		return nil, invalidParams("configId: unknown option %q (mode, model, approvals)", p.ConfigID)
	}
	return wire.SetConfigOptionResult{ConfigOptions: c.options(ls)}, nil
}
