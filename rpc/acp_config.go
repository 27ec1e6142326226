package rpc

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// ACP's session configuration: the options a client can show as
// selectors (mode, model, approval level) in session/new and session/load
// answers, set with session/set_config_option, and the commands the
// daemon runs itself when a prompt is one of them (/compact, /undo,
// /plan, /act), advertised with available_commands_update.
const (
	methodSetConfigOption = "session/set_config_option"

	configMode      = "mode"
	configModel     = "model"
	configApprovals = "approvals"
)

// ACP's SessionConfigOption shapes, from the one wire package.
type (
	configOption    = wire.ConfigOption
	configValue     = wire.ConfigValue
	setConfigParams = wire.SetConfigOptionParams
)

// approvalLevel is a session's choice over the settings' approvals: the
// rules (deny above all) and the questions for writes under .git/ stay.
type approvalLevel struct {
	id, name, description string
	apply                 func(*session.Approvals)
}

var approvalLevels = []approvalLevel{
	{"configured", "As configured", "Ask as the settings' approvals say", func(*session.Approvals) {}},
	{"edits", "Edit without asking", "Reads and edits run at once; commands, fetches and MCP tools ask", func(a *session.Approvals) {
		a.Read, a.Edit = session.Allow, session.Allow
	}},
	{"sandbox", "Commands in the sandbox", "Commands run in the sandbox without asking (asking instead where there is none); running one outside asks", func(a *session.Approvals) {
		a.ApplyLevel(session.LevelSandbox)
	}},
	{"all", "Run everything", "Every call runs without asking, except what a rule denies or asks", func(a *session.Approvals) {
		a.ApplyLevel(session.LevelYolo)
	}},
}

// approvalLevelAliases are PROTOCOL.md §12's names of the levels, taken
// by session/set_config_option besides the ids above.
var approvalLevelAliases = map[string]string{string(session.LevelAsk): "configured", string(session.LevelYolo): "all"}

// approvalLevelIDs lists the levels' ids for an error message.
func approvalLevelIDs() string {
	ids := make([]string, len(approvalLevels))
	for i, l := range approvalLevels {
		ids[i] = l.id
	}
	return strings.Join(ids, ", ")
}

// acpConfigState is the sessions' choices made through config options.
type acpConfigState struct {
	mu       sync.Mutex
	approval map[string]string // guarded by mu; session id → approval level, when not "configured"
}

// acpCloseConfig serves ACP's session/close and forgets the session's
// choices.
func (s *Server) acpCloseConfig(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	decodeParams(req.Params(), &p)
	res, err := s.closeSession(ctx, req)
	if err == nil {
		s.forgetConfig(p.SessionID)
	}
	return res, err
}

// forgetConfig drops a closed session's choices.
func (s *Server) forgetConfig(id string) {
	s.acpcfg.mu.Lock()
	defer s.acpcfg.mu.Unlock()
	s.models.Forget(id)
	delete(s.acpcfg.approval, id)
}

func (s *Server) approvalLevelOf(id string) string {
	s.acpcfg.mu.Lock()
	defer s.acpcfg.mu.Unlock()
	if l := s.acpcfg.approval[id]; l != "" {
		return l
	}
	return approvalLevels[0].id
}

// sessionPolicy is the policy configuration of session id: the settings'
// with the session's approval level over them, and whether a sandbox can
// confine its commands.
func (s *Server) sessionPolicy(id string, cfg session.PolicyConfig) session.PolicyConfig {
	level := s.approvalLevelOf(id)
	for _, l := range approvalLevels {
		if l.id == level {
			l.apply(&cfg.Approvals)
		}
	}
	// Probed only where commands are to be confined: a daemon that never
	// uses the sandbox never runs bubblewrap.
	if cfg.Approvals.Execute == session.Sandbox {
		cfg.SandboxAvailable = SandboxStatus(s.CurrentSettings()).Backend != sandbox.BackendNone
	}
	return cfg
}

// modelChoices are the models a session can switch to: its own, the
// settings' model and provider.models, the provider's default, and the
// provider's models listing once fetched (cline/models, or in the
// background after session/new).
func (s *Server) modelChoices(current string) []string {
	out := []string{current}
	if p := s.CurrentSettings().Provider; p != nil {
		out = append(out, p.Model)
		out = append(out, p.Models...)
		for _, d := range settings.DefaultModels {
			if d.Provider == p.Name {
				out = append(out, d.Model)
			}
		}
		for _, m := range s.modelLists.Cached(p) {
			out = append(out, m.ID)
		}
	}
	out = slices.DeleteFunc(out, func(m string) bool { return m == "" })
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(m string) bool {
		dup := seen[m]
		seen[m] = true
		return dup
	})
}

// configOptions lists a session's options with their current values.
func (s *Server) configOptions(ls *liveSession) []configOption {
	mode := configOption{ID: configMode, Name: "Mode", Category: "mode", Type: "select", CurrentValue: ls.Mode()}
	for _, m := range tools.AllModes() {
		mode.Options = append(mode.Options, configValue{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	out := []configOption{mode}
	if m := s.models.Of(ls.ID()); m != nil {
		model := configOption{ID: configModel, Name: "Model", Category: "model", Type: "select", CurrentValue: m.Shown()}
		for _, id := range s.modelChoices(m.Shown()) {
			model.Options = append(model.Options, configValue{Value: id, Name: id})
		}
		out = append(out, model)
	}
	approvals := configOption{ID: configApprovals, Name: "Approvals", Description: "What runs without asking",
		Category: "_approvals", Type: "select", CurrentValue: s.approvalLevelOf(ls.ID())}
	for _, l := range approvalLevels {
		d := l.description
		if l.id == string(session.LevelSandbox) {
			// ACP has no message to the user but this: say here that
			// nothing confines commands, so this level asks.
			if st := SandboxStatus(s.CurrentSettings()); st.Backend == sandbox.BackendNone {
				d = "No sandbox is available here (" + st.Detail + "): commands ask"
			}
		}
		approvals.Options = append(approvals.Options, configValue{Value: l.id, Name: l.name, Description: d})
	}
	return append(out, approvals)
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
	opts, _ := json.Marshal(s.configOptions(ls))
	fields["configOptions"] = opts
	s.afterReply(reqID, func(context.Context) {
		s.sendUpdate(id, wire.AvailableCommandsUpdate{AvailableCommands: s.availableCommands(ls)})
		s.offerListedModels(ls)
	})
	return fields, nil
}

// acpSessionNewConfig serves ACP's session/new with the config options.
func (s *Server) acpSessionNewConfig(_ context.Context, req *jsonrpc2.Request) (any, error) {
	res, err := s.acpSessionNew(req.Params())
	if err != nil {
		return nil, err
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	body, _ := json.Marshal(res)
	json.Unmarshal(body, &created)
	return s.withConfig(req.ID(), res, created.SessionID)
}

// acpSessionLoadConfig serves ACP's session/load with the config options.
func (s *Server) acpSessionLoadConfig(_ context.Context, req *jsonrpc2.Request) (any, error) {
	res, err := s.acpSessionLoad(req.Params())
	if err != nil {
		return nil, err
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	decodeParams(req.Params(), &p)
	return s.withConfig(req.ID(), res, p.SessionID)
}

// acpSetMode serves ACP's session/set_mode; clients that show the mode
// as a config option hear of the change too.
func (s *Server) acpSetMode(raw []byte) (any, error) {
	res, err := s.sessionSetMode(raw)
	if err != nil {
		return nil, err
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	decodeParams(raw, &p)
	if ls, err := s.getSession(p.SessionID); err == nil {
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
	case configMode:
		if err := ls.SetMode(value); err != nil {
			return nil, invalidParams("value: %v", err)
		}
	case configModel:
		if err := s.setModel(ls, value); err != nil {
			return nil, err
		}
	case configApprovals:
		if id, ok := approvalLevelAliases[value]; ok {
			value = id
		}
		if !slices.ContainsFunc(approvalLevels, func(l approvalLevel) bool { return l.id == value }) {
			return nil, invalidParams("value: approvals must be one of %s; got %q", approvalLevelIDs(), value)
		}
		s.acpcfg.mu.Lock()
		if s.acpcfg.approval == nil {
			s.acpcfg.approval = make(map[string]string)
		}
		s.acpcfg.approval[ls.ID()] = value
		s.acpcfg.mu.Unlock()
		if err := ls.policy.SetConfig(s.sessionPolicy(ls.ID(), policyConfig(s.CurrentSettings()))); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "approvals: %v", err)
		}
	default:
		return nil, invalidParams("configId: unknown option %q (mode, model, approvals)", p.ConfigID)
	}
	return wire.SetConfigOptionResult{ConfigOptions: s.configOptions(ls)}, nil
}
