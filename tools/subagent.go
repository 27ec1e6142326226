package tools

import (
	"log/slog"
	"strings"
)

// subagentPrefix starts the name of every configured subagent's tool.
const subagentPrefix = "subagent_"

// SubagentConfig is one configured subagent.
type SubagentConfig struct {
	Name        string
	Description string
	// Prompt is the subagent's own instructions, prepended to its system
	// prompt by the session that runs it.
	Prompt string
	// Model, when set, overrides the parent session's model.
	Model string
}

// SubagentSpec is the tool spec of one subagent plus its configuration,
// for the session that runs a call.
type SubagentSpec struct {
	Spec   Spec
	Config SubagentConfig
}

// SubagentSpecs returns a subagent_<name> tool per configured subagent,
// in configuration order, each taking a prompt as spawn_agent does. Names
// are lower-cased and sanitised, shortened past MaxToolNameLen and made
// unique with _2, _3...; a config without a name is left out and logged
// on logger (slog.Default when nil). Inside a subagent run (ctx.Subagent)
// there are none: subagents do not spawn subagents.
func SubagentSpecs(configs []SubagentConfig, ctx Context, logger *slog.Logger) []SubagentSpec {
	if ctx.Subagent {
		return nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	spawn, _ := BuiltinSpec(NameSpawnAgent)
	used := map[string]bool{}
	var out []SubagentSpec
	for _, c := range configs {
		if strings.TrimSpace(c.Name) == "" {
			logger.Warn("subagent without a name left out", "description", c.Description)
			continue
		}
		name, short := shortenName(subagentPrefix + strings.ToLower(strings.TrimLeft(sanitizeName(c.Name), "_")))
		if short {
			logger.Warn("subagent tool name over 64 characters, shortened", "subagent", c.Name, "name", name)
		}
		if unique := uniqueName(name, used); unique != name {
			logger.Warn("subagent tool name taken, renamed", "subagent", c.Name, "name", unique)
			name = unique
		}
		used[name] = true
		desc := strings.TrimSpace(c.Description)
		if desc == "" {
			desc = "Delegate a task to the " + c.Name + " subagent."
		}
		out = append(out, SubagentSpec{
			Spec: Spec{
				ID:          name,
				Name:        name,
				DisplayName: c.Name,
				Description: desc + " It has read and search tools, cannot see this conversation, and returns its final answer; the prompt must say all it needs.",
				Parameters:  spawn.Parameters,
				ContextRequirements: func(c Context) bool {
					return !c.Subagent
				},
				Kind:     spawn.Kind,
				ReadOnly: spawn.ReadOnly,
			},
			Config: c,
		})
	}
	return out
}
