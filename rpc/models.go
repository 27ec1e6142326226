package rpc

import (
	"context"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

// sameModel is a subagent's view of its parent's model: the same switch,
// without BeginTurn, so a subagent's turn (inside the parent's) never
// takes a model meant for the parent's next turn.
type sameModel struct{ provider.Provider }

// modelSettingsChanged brings the provider settings in force to every
// live session whose model they pick, from its next turn, and tells the
// client of each the model it will now use. A session that chose its
// own model keeps it, built afresh with the new settings' key and
// address when its provider is still theirs.
func (c *sessionConfig) modelSettingsChanged(live []*liveSession) {
	st := c.settings()
	var now settings.ProviderSettings
	if st.Provider != nil {
		now = *st.Provider
	}
	for _, ls := range live {
		if m := c.models.Of(ls.ID()); m != nil && m.Follow(now, c.newProvider) {
			c.sendConfigUpdate(ls)
		}
	}
}

// setModel makes model the session's own choice, from its next turn,
// built from the provider settings in force.
func (c *sessionConfig) setModel(ls *liveSession, model string) error {
	m := c.models.Of(ls.ID())
	if m == nil {
		return invalidParams("configId: the session has no model to change")
	}
	choices := c.modelChoices(m.Shown())
	if !slices.Contains(choices, model) {
		return invalidParams("value: model must be one of %s; got %q", strings.Join(choices, ", "), model)
	}
	p, err := c.newProvider(model)
	if err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "model: %v", err)
	}
	var from settings.ProviderSettings
	if st := c.settings().Provider; st != nil {
		from = *st
	}
	m.Choose(p, model, from)
	return nil
}

// sendConfigUpdate tells the client a session's options (its mode, the
// model its next turn uses, its approval level) as they are now; both
// dialects get the same config_option_update.
func (c *sessionConfig) sendConfigUpdate(ls *liveSession) {
	c.sendUpdate(ls.ID(), wire.ConfigOptionUpdate{ConfigOptions: c.options(ls)})
}

const (
	methodModels    = "cline/models"
	methodACPModels = "_cline/models"
)

// modelsParams are cline/models's params: the session whose model is
// current, or none for the settings'.
type modelsParams struct {
	SessionID string `json:"sessionId"`
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
func (c *sessionConfig) listModels(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p modelsParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	var res modelsResult
	if p.SessionID != "" {
		ls, err := c.getSession(p.SessionID)
		if err != nil {
			return nil, err
		}
		if m := c.models.Of(ls.ID()); m != nil {
			res.Current = m.Shown()
		}
	} else if st := c.settings().Provider; st != nil {
		res.Current = st.Model
		if res.Current == "" && st.Name != "" {
			// No model named: the one a new session would use, the
			// provider's default (a replay transcript's own), so that a
			// client tells a configured provider from none.
			if p, err := c.newProvider(""); err == nil {
				res.Current = p.Model()
			}
		}
	}
	jsonrpc2.Async(ctx)
	listed := c.lists.List(ctx, c.settings().Provider)
	name := ""
	if st := c.settings().Provider; st != nil {
		name = st.Name
	}
	res.Models = settings.ModelMenu(name, c.modelChoices(res.Current), listed)
	return res, nil
}

// offerListedModels fetches the provider's models listing in the
// background, when it is not cached yet, and sends ls's options again
// with the listed models among the model option's choices.
func (c *sessionConfig) offerListedModels(ls *liveSession) {
	p := c.settings().Provider
	if c.lists.Cached(p) != nil || c.models.Of(ls.ID()) == nil {
		return
	}
	c.goBackground(func() {
		before := len(c.modelChoices(c.models.Of(ls.ID()).Shown()))
		c.lists.List(c.bgCtx, c.settings().Provider)
		if m := c.models.Of(ls.ID()); m != nil && len(c.modelChoices(m.Shown())) != before {
			c.sendConfigUpdate(ls)
		}
	})
}
