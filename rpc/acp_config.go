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

// acpCloseConfig serves ACP's session/close and forgets the session's
// choices.
func (s *Server) acpCloseConfig(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p acp.CloseSessionRequest
	decodeParams(req.Params(), &p)
	res, err := s.sess.serveClose(ctx, req)
	if err == nil {
		s.acpcfg.Forget(string(p.SessionId))
		s.models.Forget(string(p.SessionId))
	}
	return res, err
}

// sessionConfig is the part that answers for the sessions'
// configuration: the choices made through config options
// (acppeer.Choices) over the settings in force, and the options shown.
type sessionConfig struct {
	acppeer.Choices
	settings func() settings.Settings
	model    func(id string) *settings.ModelSwitch                 // the session's, nil if it has none
	listed   func(*settings.ProviderSettings) []provider.ModelInfo // the provider's models listing, nil until fetched
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
		for _, m := range c.listed(p) {
			lists = append(lists, []string{m.ID})
		}
	}
	return acppeer.ModelChoices(lists...)
}

// options lists a session's options with their current values.
func (c *sessionConfig) options(ls *liveSession) []wire.ConfigOption {
	cur := acppeer.Current{Mode: ls.Mode(), Level: c.Level(ls.ID())}
	if m := c.model(ls.ID()); m != nil {
		cur.HasModel, cur.Model = true, m.Shown()
		cur.Models = c.modelChoices(cur.Model)
	}
	if st := SandboxStatus(c.settings()); st.Backend == sandbox.BackendNone {
		cur.NoSandbox = st.Detail
	}
	return acppeer.ConfigOptions(cur)
}

// withConfig adds configOptions to a session/new or session/load answer
// for session id, and sends the session's commands once the answer is
// on the wire (a client does not know the session before).
func (s *Server) withConfig(reqID jsonrpc2.ID, res any, id string) (any, error) {
	ls, err := s.getSession(id)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return res, nil
	}
	opts, _ := json.Marshal(s.acpcfg.options(ls))
	fields["configOptions"] = opts
	s.afterReply(reqID, func(context.Context) {
		s.sendUpdate(id, wire.AvailableCommandsUpdate{AvailableCommands: s.availableCommands(ls)})
		s.offerListedModels(ls)
	})
	return fields, nil
}

// acpSessionLoadConfig serves ACP's session/load with the config options.
func (s *Server) acpSessionLoadConfig(_ context.Context, req *jsonrpc2.Request) (any, error) {
	res, err := s.sess.serveACPLoad(req.Params())
	if err != nil {
		return nil, err
	}
	var p acpLoadParams
	decodeParams(req.Params(), &p)
	return s.withConfig(req.ID(), res, string(p.SessionId))
}

// acpSetMode serves ACP's session/set_mode; clients that show the mode
// as a config option hear of the change too.
func (s *Server) acpSetMode(raw []byte) (any, error) {
	res, err := s.sess.serveSetMode(raw)
	if err != nil {
		return nil, err
	}
	var p acp.SetSessionModeRequest
	decodeParams(raw, &p)
	if ls, err := s.getSession(string(p.SessionId)); err == nil {
		s.sendConfigUpdate(ls)
	}
	return res, nil
}

// setConfigOption serves session/set_config_option.
func (s *Server) setConfigOption(raw []byte) (any, error) {
	var p setConfigParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "configId", p.ConfigID); err != nil {
		return nil, err
	}
	ls, err := s.getSession(p.SessionID)
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
		if err := s.setModel(ls, value); err != nil {
			return nil, err
		}
	case acppeer.ConfigApprovals:
		level, ok := acppeer.ResolveLevel(value)
		if !ok {
			return nil, invalidParams("value: approvals must be one of %s; got %q", acppeer.LevelIDs(), value)
		}
		s.acpcfg.SetLevel(ls.ID(), level)
		if err := ls.policy.SetConfig(s.acpcfg.policy(ls.ID(), policyConfig(s.CurrentSettings()))); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "approvals: %v", err)
		}
	default:
		return nil, invalidParams("configId: unknown option %q (mode, model, approvals)", p.ConfigID)
	}
	return wire.SetConfigOptionResult{ConfigOptions: s.acpcfg.options(ls)}, nil
}
