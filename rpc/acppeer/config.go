package acppeer

import (
	"slices"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// ACP's session configuration (PROTOCOL.md §12): the options a client
// can show as selectors (mode, model, approval level) in session/new and
// session/load answers, set with session/set_config_option.
const (
	MethodSetConfigOption = "session/set_config_option"

	ConfigMode      = "mode"
	ConfigModel     = "model"
	ConfigApprovals = "approvals"
)

// level is a session's choice over the settings' approvals: the rules
// (deny above all) and the questions for writes under .git/ stay.
type level struct {
	id, name, description string
	apply                 func(*session.Approvals)
}

var levels = []level{
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

// levelAliases are PROTOCOL.md §12's names of the levels, taken besides
// the ids above.
var levelAliases = map[string]string{string(session.LevelAsk): "configured", string(session.LevelYolo): "all"}

// DefaultLevel is the level of a session that chose none.
const DefaultLevel = "configured"

// LevelIDs lists the levels' ids, for an error message.
func LevelIDs() string {
	ids := make([]string, len(levels))
	for i, l := range levels {
		ids[i] = l.id
	}
	return strings.Join(ids, ", ")
}

// ResolveLevel is the id of the level value names (an id or an alias);
// ok is false when it names none.
func ResolveLevel(value string) (id string, ok bool) {
	if id, ok := levelAliases[value]; ok {
		value = id
	}
	return value, slices.ContainsFunc(levels, func(l level) bool { return l.id == value })
}

// ApplyLevel puts level id's choices over a; an unknown id changes
// nothing.
func ApplyLevel(id string, a *session.Approvals) {
	for _, l := range levels {
		if l.id == id {
			l.apply(a)
		}
	}
}

// Choices are the sessions' approval levels chosen through config
// options, by session id. (A session's model is its model switch's,
// kept by the settings' Models.)
type Choices struct {
	mu       sync.Mutex
	approval map[string]string // guarded by mu; when not DefaultLevel
}

// Level is session id's approval level.
func (c *Choices) Level(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.approval[id]; l != "" {
		return l
	}
	return DefaultLevel
}

// SetLevel makes level (an id, see ResolveLevel) session id's.
func (c *Choices) SetLevel(id, level string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.approval == nil {
		c.approval = make(map[string]string)
	}
	c.approval[id] = level
}

// Forget drops a closed session's choices.
func (c *Choices) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.approval, id)
}

// Current is what a session's options show as they are now.
type Current struct {
	Mode string
	// Model is the model the next turn uses, and Models those it can
	// switch to; HasModel is false for a session with no model switch,
	// which shows no model option.
	Model    string
	Models   []string
	HasModel bool
	Level    string
	// NoSandbox says why nothing here confines commands; "" when a
	// sandbox is available.
	NoSandbox string
}

// ConfigOptions lists a session's options with their current values.
func ConfigOptions(cur Current) []wire.ConfigOption {
	mode := wire.ConfigOption{ID: ConfigMode, Name: "Mode", Category: "mode", Type: "select", CurrentValue: cur.Mode}
	for _, m := range tools.AllModes() {
		mode.Options = append(mode.Options, wire.ConfigValue{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	out := []wire.ConfigOption{mode}
	if cur.HasModel {
		model := wire.ConfigOption{ID: ConfigModel, Name: "Model", Category: "model", Type: "select", CurrentValue: cur.Model}
		for _, id := range cur.Models {
			model.Options = append(model.Options, wire.ConfigValue{Value: id, Name: id})
		}
		out = append(out, model)
	}
	approvals := wire.ConfigOption{ID: ConfigApprovals, Name: "Approvals", Description: "What runs without asking",
		Category: "_approvals", Type: "select", CurrentValue: cur.Level}
	for _, l := range levels {
		d := l.description
		if l.id == string(session.LevelSandbox) && cur.NoSandbox != "" {
			// ACP has no message to the user but this: say here that
			// nothing confines commands, so this level asks.
			d = "No sandbox is available here (" + cur.NoSandbox + "): commands ask"
		}
		approvals.Options = append(approvals.Options, wire.ConfigValue{Value: l.id, Name: l.name, Description: d})
	}
	return append(out, approvals)
}

// ModelChoices are the models of lists, in order, each once, none empty.
func ModelChoices(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, m := range l {
			if m != "" && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}
