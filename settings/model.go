package settings

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sync"

	"github.com/cline-ls/cline-ls/provider"
)

// ModelSwitch is a session's model. The settings in force pick it, and a
// change of them reaches the session from its next turn: a turn running
// meanwhile ends on the model it started with, so one answer never mixes
// two models. A model the session chose itself (ACP's model option) is
// its own from then on: later settings change its key or address, not the
// model it chose.
type ModelSwitch struct {
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

// NewModelSwitch makes a session's model p, built from the provider
// settings from (nil when there are none); p is nil when no model is
// configured, and err then says why.
func NewModelSwitch(p provider.Provider, err error, from *ProviderSettings) *ModelSwitch {
	m := &ModelSwitch{p: p, err: err}
	if from != nil {
		m.from, m.window = *from, from.ContextWindow
	}
	return m
}

// cur is the model requests go to now.
func (m *ModelSwitch) cur() provider.Provider {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p
}

// Shown is the model the session's next turn will use, for the client
// to show: "" when there will be none.
func (m *ModelSwitch) Shown() string {
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

// Offer makes p (or, when it is nil, err) the model of the next turn.
func (m *ModelSwitch) Offer(p provider.Provider, err error, from ProviderSettings) {
	m.mu.Lock()
	m.next = &modelChoice{p: p, err: err, window: from.ContextWindow}
	m.from = from
	m.mu.Unlock()
}

// Choose makes p, the session's own choice of model, the model of its
// next turn and of every turn after, whatever the settings say of models.
func (m *ModelSwitch) Choose(p provider.Provider, model string, from ProviderSettings) {
	m.Offer(p, nil, from)
	m.mu.Lock()
	m.chosen = model
	m.mu.Unlock()
}

// stale reports whether the provider settings now in force are not those
// the latest model was built from, and the model the session chose
// itself ("" when the settings pick it), which a rebuild keeps.
func (m *ModelSwitch) stale(now ProviderSettings) (chosen string, stale bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.chosen, !reflect.DeepEqual(m.from, now)
}

// Follow brings the provider settings now in force to the session from
// its next turn, and reports whether they changed its model: build makes
// the model (the one the session chose itself, or "" for the settings'),
// and a session that chose its own keeps it, built afresh with the new
// settings' key and address.
func (m *ModelSwitch) Follow(now ProviderSettings, build func(model string) (provider.Provider, error)) bool {
	chosen, stale := m.stale(now)
	if !stale {
		return false
	}
	p, err := build(chosen)
	m.Offer(p, err, now)
	return true
}

// BeginTurn takes the model waiting for this turn, and says why there is
// none when none is configured. The session calls it as a turn starts,
// with no other turn of its running.
func (m *ModelSwitch) BeginTurn() error {
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

func (m *ModelSwitch) Name() string {
	if p := m.cur(); p != nil {
		return p.Name()
	}
	return ""
}

func (m *ModelSwitch) Model() string {
	if p := m.cur(); p != nil {
		return p.Model()
	}
	return ""
}

func (m *ModelSwitch) NativeTools() bool {
	p := m.cur()
	return p != nil && p.NativeTools()
}

// ContextWindow is the window the settings give the model in use, else
// the one it reports, if it does.
func (m *ModelSwitch) ContextWindow() int {
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

func (m *ModelSwitch) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
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

// ModelLists caches the providers' models listings, per provider, base
// URL and key variable, for the connection's life: a listing is a round
// trip the model picker must not wait for twice.
type ModelLists struct {
	getenv func(string) string
	client *http.Client
	log    *slog.Logger

	mu    sync.Mutex
	lists map[string][]provider.ModelInfo // guarded by mu
}

// NewModelLists makes an empty cache whose listings read the key
// variable the settings name with getenv and go through client (nil:
// the provider's default).
func NewModelLists(getenv func(string) string, client *http.Client, log *slog.Logger) *ModelLists {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ModelLists{getenv: getenv, client: client, log: log}
}

func listKey(p ProviderSettings) string {
	return p.Name + "\x00" + p.BaseURL + "\x00" + p.APIKeyEnv
}

// Cached is the listing cached for the provider settings p, or nil.
func (l *ModelLists) Cached(p *ProviderSettings) []provider.ModelInfo {
	if p == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists[listKey(*p)]
}

// List lists the models of the provider p names: its models endpoint's
// answer (cached), else the daemon's table.
func (l *ModelLists) List(ctx context.Context, p *ProviderSettings) []provider.ModelInfo {
	if p == nil || p.Name == "" {
		return nil
	}
	if cached := l.Cached(p); cached != nil {
		return cached
	}
	cfg := provider.Config{Name: p.Name, BaseURL: p.BaseURL, HTTPClient: l.client}
	if p.APIKeyEnv != "" {
		cfg.APIKey = l.getenv(p.APIKeyEnv)
	}
	list, err := provider.ListModels(ctx, cfg)
	if err != nil {
		l.log.Debug("models endpoint not used", "provider", p.Name, "err", err)
		return provider.KnownModels(p.Name)
	}
	l.mu.Lock()
	if l.lists == nil {
		l.lists = make(map[string][]provider.ModelInfo)
	}
	l.lists[listKey(*p)] = list
	l.mu.Unlock()
	return list
}

// Models is a connection's sessions' models by session id. The zero
// Models is empty and ready.
type Models struct {
	mu   sync.Mutex
	byID map[string]*ModelSwitch // guarded by mu
}

// Switch makes session id's model one the settings and the session's
// model option can change, and keeps it under id: p, built from the
// provider settings from, is nil when no model is configured, and err
// then says why.
func (ms *Models) Switch(id string, p provider.Provider, err error, from *ProviderSettings) *ModelSwitch {
	m := NewModelSwitch(p, err, from)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.byID == nil {
		ms.byID = make(map[string]*ModelSwitch)
	}
	ms.byID[id] = m
	return m
}

// Of returns session id's model switch, or nil.
func (ms *Models) Of(id string) *ModelSwitch {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.byID[id]
}

// Forget drops a closed session's model.
func (ms *Models) Forget(id string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	delete(ms.byID, id)
}

// ModelMenu is the models a picker offers for the provider name: the
// choices first (the one in use, the settings' own), as listed when the
// listing has them, else as the daemon's table knows them; then the rest
// of the listing. It is never nil, so that the answer holds a list.
func ModelMenu(name string, choices []string, listed []provider.ModelInfo) []provider.ModelInfo {
	out := []provider.ModelInfo{}
	seen := map[string]bool{}
	for _, id := range choices {
		i := slices.IndexFunc(listed, func(m provider.ModelInfo) bool { return m.ID == id })
		if i >= 0 {
			out = append(out, listed[i])
		} else {
			out = append(out, provider.ModelInfo{ID: id, Name: id, ContextWindow: provider.ContextWindow(name, id), Vision: provider.SeesImages(name, id)})
		}
		seen[id] = true
	}
	for _, m := range listed {
		if !seen[m.ID] {
			out = append(out, m)
			seen[m.ID] = true
		}
	}
	return out
}
