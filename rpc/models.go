package rpc

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/wire"
)

// modelSwitch is a session's model. The settings in force pick it, and a
// change of them reaches the session from its next turn: a turn running
// meanwhile ends on the model it started with, so one answer never mixes
// two models. A model the session chose itself (ACP's model option) is
// its own from then on: later settings change its key or address, not the
// model it chose.
type modelSwitch struct {
	mu     sync.Mutex
	p      provider.Provider // what requests go to; nil while no model is configured
	err    error             // why p is nil
	next   *modelChoice      // taken when the next turn starts
	chosen string            // the model the session chose itself, if any
	from   ProviderSettings  // the settings the latest choice was built from
	window int               // the settings' contextWindow for p; 0: the model's own
}

// modelChoice is a model built and waiting for the session's next turn.
type modelChoice struct {
	p      provider.Provider
	err    error
	window int
}

// cur is the model requests go to now.
func (m *modelSwitch) cur() provider.Provider {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p
}

// shown is the model the session's next turn will use, for the client
// to show: "" when there will be none.
func (m *modelSwitch) shown() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.p
	if m.next != nil {
		p = m.next.p
	}
	if p == nil {
		return ""
	}
	return p.Model()
}

// offer makes p (or, when it is nil, err) the model of the next turn.
func (m *modelSwitch) offer(p provider.Provider, err error, from ProviderSettings) {
	m.mu.Lock()
	m.next = &modelChoice{p: p, err: err, window: from.ContextWindow}
	m.from = from
	m.mu.Unlock()
}

// BeginTurn takes the model waiting for this turn, and says why there is
// none when none is configured. The session calls it as a turn starts,
// with no other turn of its running.
func (m *modelSwitch) BeginTurn() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next != nil {
		m.p, m.err, m.window, m.next = m.next.p, m.next.err, m.next.window, nil
	}
	if m.p == nil {
		if m.err == nil {
			return errors.New("no model is configured")
		}
		return m.err
	}
	return nil
}

func (m *modelSwitch) Name() string {
	if p := m.cur(); p != nil {
		return p.Name()
	}
	return ""
}

func (m *modelSwitch) Model() string {
	if p := m.cur(); p != nil {
		return p.Model()
	}
	return ""
}

func (m *modelSwitch) NativeTools() bool {
	p := m.cur()
	return p != nil && p.NativeTools()
}

// ContextWindow is the window the settings give the model in use, else
// the one it reports, if it does.
func (m *modelSwitch) ContextWindow() int {
	m.mu.Lock()
	w := m.window
	m.mu.Unlock()
	if w > 0 {
		return w
	}
	if r, ok := m.cur().(provider.WindowReporter); ok {
		return r.ContextWindow()
	}
	return 0
}

func (m *modelSwitch) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	m.mu.Lock()
	p, err := m.p, m.err
	m.mu.Unlock()
	if p == nil {
		if err == nil {
			err = errors.New("no model is configured")
		}
		return nil, err
	}
	return p.Stream(ctx, req)
}

// sameModel is a subagent's view of its parent's model: the same switch,
// without BeginTurn, so a subagent's turn (inside the parent's) never
// takes a model meant for the parent's next turn.
type sameModel struct{ provider.Provider }

// switchableModel makes session id's model one the settings and the
// session's model option can change. p is nil when none is configured,
// and err then says why.
func (s *Server) switchableModel(id string, p provider.Provider, err error) provider.Provider {
	m := &modelSwitch{p: p, err: err}
	if st := s.CurrentSettings().Provider; st != nil {
		m.from, m.window = *st, st.ContextWindow
	}
	s.acpcfg.SetModel(id, m)
	return m
}

// modelOf returns session id's model switch, or nil.
func (s *Server) modelOf(id string) *modelSwitch {
	return s.acpcfg.Model(id)
}

// modelSettingsChanged brings the provider settings in force to every
// live session whose model they pick, from its next turn, and tells the
// client of each the model it will now use. A session that chose its
// own model keeps it, built afresh with the new settings' key and
// address when its provider is still theirs.
func (s *Server) modelSettingsChanged(live []*liveSession) {
	st := s.CurrentSettings()
	var now ProviderSettings
	if st.Provider != nil {
		now = *st.Provider
	}
	for _, ls := range live {
		m := s.modelOf(ls.ID())
		if m == nil {
			continue
		}
		m.mu.Lock()
		same, chosen := reflect.DeepEqual(m.from, now), m.chosen
		m.mu.Unlock()
		if same {
			continue
		}
		p, err := s.newProviderWith(chosen)
		m.offer(p, err, now)
		s.sendConfigUpdate(ls)
	}
}

// setModel makes model the session's own choice, from its next turn,
// built from the provider settings in force.
func (s *Server) setModel(ls *liveSession, model string) error {
	m := s.modelOf(ls.ID())
	if m == nil {
		return invalidParams("configId: the session has no model to change")
	}
	choices := s.acpcfg.modelChoices(m.shown())
	if !slices.Contains(choices, model) {
		return invalidParams("value: model must be one of %s; got %q", strings.Join(choices, ", "), model)
	}
	p, err := s.newProviderWith(model)
	if err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "model: %v", err)
	}
	var from ProviderSettings
	if st := s.CurrentSettings().Provider; st != nil {
		from = *st
	}
	m.offer(p, nil, from)
	m.mu.Lock()
	m.chosen = model
	m.mu.Unlock()
	return nil
}

// sendConfigUpdate tells the client a session's options (its mode, the
// model its next turn uses, its approval level) as they are now; both
// dialects get the same config_option_update.
func (s *Server) sendConfigUpdate(ls *liveSession) {
	s.sendUpdate(ls.ID(), wire.ConfigOptionUpdate{ConfigOptions: s.acpcfg.options(ls)})
}

const (
	methodModels    = "cline/models"
	methodACPModels = "_cline/models"
)

// modelLists caches the providers' models listings, per provider, base
// URL and key variable, for the connection's life: a listing is a round
// trip the model picker must not wait for twice.
type modelLists struct {
	mu    sync.Mutex
	lists map[string][]provider.ModelInfo // guarded by mu
}

func listKey(p ProviderSettings) string {
	return p.Name + "\x00" + p.BaseURL + "\x00" + p.APIKeyEnv
}

// cachedModels is the listing cached for the settings in force, or nil.
func (s *Server) cachedModels() []provider.ModelInfo {
	p := s.CurrentSettings().Provider
	if p == nil {
		return nil
	}
	s.modelLists.mu.Lock()
	defer s.modelLists.mu.Unlock()
	return s.modelLists.lists[listKey(*p)]
}

// providerModels lists the models of the provider in force: its models
// endpoint's answer (cached), else the daemon's table.
func (s *Server) providerModels(ctx context.Context) []provider.ModelInfo {
	p := s.CurrentSettings().Provider
	if p == nil || p.Name == "" {
		return nil
	}
	if l := s.cachedModels(); l != nil {
		return l
	}
	cfg := provider.Config{Name: p.Name, BaseURL: p.BaseURL, HTTPClient: s.opts.HTTPClient}
	if p.APIKeyEnv != "" {
		cfg.APIKey = s.opts.Getenv(p.APIKeyEnv)
	}
	list, err := provider.ListModels(ctx, cfg)
	if err != nil {
		s.log.Debug("models endpoint not used", "provider", p.Name, "err", err)
		return provider.KnownModels(p.Name)
	}
	s.modelLists.mu.Lock()
	if s.modelLists.lists == nil {
		s.modelLists.lists = make(map[string][]provider.ModelInfo)
	}
	s.modelLists.lists[listKey(*p)] = list
	s.modelLists.mu.Unlock()
	return list
}

// modelsResult is cline/models's answer.
type modelsResult struct {
	Current string               `json:"current"`
	Models  []provider.ModelInfo `json:"models"`
}

// listModels serves cline/models {sessionId?}: the model in use (the
// session's next turn's, or the settings') and the models to choose
// from: the provider's, with the settings' own choices (modelChoices)
// first. It waits on the provider's endpoint off the read loop.
func (s *Server) listModels(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	var res modelsResult
	if p.SessionID != "" {
		ls, err := s.getSession(p.SessionID)
		if err != nil {
			return nil, err
		}
		if m := s.modelOf(ls.ID()); m != nil {
			res.Current = m.shown()
		}
	} else if st := s.CurrentSettings().Provider; st != nil {
		res.Current = st.Model
		if res.Current == "" && st.Name != "" {
			// No model named: the one a new session would use, the
			// provider's default (a replay transcript's own), so that a
			// client tells a configured provider from none.
			if p, err := s.newProvider(); err == nil {
				res.Current = p.Model()
			}
		}
	}
	jsonrpc2.Async(ctx)
	listed := s.providerModels(ctx)
	name := ""
	if st := s.CurrentSettings().Provider; st != nil {
		name = st.Name
	}
	seen := map[string]bool{}
	for _, id := range s.acpcfg.modelChoices(res.Current) {
		i := slices.IndexFunc(listed, func(m provider.ModelInfo) bool { return m.ID == id })
		if i >= 0 {
			res.Models = append(res.Models, listed[i])
		} else {
			res.Models = append(res.Models, provider.ModelInfo{ID: id, Name: id, ContextWindow: provider.ContextWindow(name, id), Vision: provider.SeesImages(name, id)})
		}
		seen[id] = true
	}
	for _, m := range listed {
		if !seen[m.ID] {
			res.Models = append(res.Models, m)
			seen[m.ID] = true
		}
	}
	if res.Models == nil {
		res.Models = []provider.ModelInfo{}
	}
	return res, nil
}

// offerListedModels fetches the provider's models listing in the
// background, when it is not cached yet, and sends ls's options again
// with the listed models among the model option's choices.
func (s *Server) offerListedModels(ls *liveSession) {
	if s.cachedModels() != nil || s.modelOf(ls.ID()) == nil {
		return
	}
	s.goBackground(func() {
		before := len(s.acpcfg.modelChoices(s.modelOf(ls.ID()).shown()))
		s.providerModels(s.bgCtx)
		if m := s.modelOf(ls.ID()); m != nil && len(s.acpcfg.modelChoices(m.shown())) != before {
			s.sendConfigUpdate(ls)
		}
	})
}
