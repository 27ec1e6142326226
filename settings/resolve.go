package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// DefaultModels are used when only an API key variable picks the provider.
var DefaultModels = []struct{ Env, Provider, Model string }{
	{"ANTHROPIC_API_KEY", "anthropic", "claude-sonnet-4-5"},
	{"OPENAI_API_KEY", "openai", "gpt-5"},
	{"GEMINI_API_KEY", "gemini", "gemini-2.5-pro"},
}

// Resolve is the one function that says which settings are in force: it
// fills what the client left unset from, in order, the
// CLINE_LS_* environment variables (CLINE_LS_TRANSCRIPT, beyond
// PROTOCOL.md's list, names a replay transcript for clients without
// initializationOptions, and alone picks the replay provider),
// $XDG_CONFIG_HOME/cline-ls/config.json,
// and the first provider API key variable that is set (PROTOCOL.md §2).
// It reads the config file; a Store reads it once, when it is made.
func Resolve(client Settings, getenv func(string) string) Settings {
	file, _ := readConfigFile(getenv, os.ReadFile)
	return resolve(client, getenv, file)
}

// resolve is Resolve with the config file already read: file is its
// settings, the zero Settings when there is none or it is ignored.
func resolve(client Settings, getenv func(string) string, file Settings) Settings {
	st := client.Clone()
	file = file.Clone() // what the result takes of it is its own
	if st.Provider == nil {
		st.Provider = &ProviderSettings{}
	}
	p := st.Provider
	clientNamed := p.Name != ""
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&p.Name, getenv("CLINE_LS_PROVIDER"))
	fill(&p.Model, getenv("CLINE_LS_MODEL"))
	fill(&p.BaseURL, getenv("CLINE_LS_BASE_URL"))
	fill(&p.APIKeyEnv, getenv("CLINE_LS_API_KEY_ENV"))
	fill(&p.Transcript, getenv("CLINE_LS_TRANSCRIPT"))
	fill(&st.Mode, getenv("CLINE_LS_MODE"))

	// The file's model settings belong to the file's provider: a client
	// that names another provider takes none of them (its key variable
	// above all).
	if file.Provider != nil && (!clientNamed || file.Provider.Name == "" || file.Provider.Name == p.Name) {
		fill(&p.Name, file.Provider.Name)
		fill(&p.Model, file.Provider.Model)
		fill(&p.BaseURL, file.Provider.BaseURL)
		fill(&p.APIKeyEnv, file.Provider.APIKeyEnv)
		fill(&p.Transcript, file.Provider.Transcript)
		if p.NativeTools == nil {
			p.NativeTools = file.Provider.NativeTools
		}
		if p.ContextWindow == 0 {
			p.ContextWindow = file.Provider.ContextWindow
		}
		if p.Models == nil {
			p.Models = file.Provider.Models
		}
		for _, f := range []struct{ dst, src *float64 }{
			{&p.StreamIdleSeconds, &file.Provider.StreamIdleSeconds}, {&p.RequestTimeoutSeconds, &file.Provider.RequestTimeoutSeconds},
			{&p.MaxReplyMB, &file.Provider.MaxReplyMB}, {&p.MaxToolCallMB, &file.Provider.MaxToolCallMB}} {
			if *f.dst == 0 {
				*f.dst = *f.src
			}
		}
		fill(&p.ReasoningEffort, file.Provider.ReasoningEffort)
		fill(&p.API, file.Provider.API)
		if p.ThinkingBudget == 0 {
			p.ThinkingBudget = file.Provider.ThinkingBudget
		}
	}
	if st.Context == nil {
		st.Context = file.Context
	}
	if st.Checkpoints == nil {
		st.Checkpoints = file.Checkpoints
	}
	if st.Sandbox == nil {
		st.Sandbox = file.Sandbox
	}
	if v := getenv("CLINE_LS_SANDBOX"); v != "" {
		if st.Sandbox == nil {
			st.Sandbox = &SandboxSettings{}
		}
		if st.Sandbox.Backend == "" {
			st.Sandbox.Backend = v
		}
	}
	if st.Diagnostics == nil {
		st.Diagnostics = file.Diagnostics
	}
	st.AllowBroadWorkspace = st.AllowBroadWorkspace || file.AllowBroadWorkspace
	st.MCPSampling = st.MCPSampling || file.MCPSampling
	fill(&st.Mode, file.Mode)
	fill(&st.StateDir, file.StateDir)
	if st.Approvals == nil {
		st.Approvals = file.Approvals
	}
	if st.Rules == nil {
		st.Rules = file.Rules
	}
	if st.MaxTurns == 0 {
		st.MaxTurns = file.MaxTurns
	}
	if st.MCPServers == nil {
		st.MCPServers = file.MCPServers
	}
	if st.Subagents == nil {
		st.Subagents = file.Subagents
	}
	// Hooks add up: the file's run first, then the client's.
	st.Hooks = mergeHooks(file.Hooks, st.Hooks)
	st.TrustedFolders = file.TrustedFolders
	if p.Name == "" && p.Transcript != "" {
		p.Name = "replay" // a transcript alone picks the replay model
	}
	if p.Name == "" {
		for _, d := range DefaultModels {
			if getenv(d.Env) != "" {
				p.Name, p.APIKeyEnv = d.Provider, d.Env
				fill(&p.Model, d.Model)
				break
			}
		}
	}
	if p.APIKeyEnv == "" {
		for _, d := range DefaultModels {
			if d.Provider == p.Name {
				p.APIKeyEnv = d.Env
			}
		}
	}
	fill(&st.Mode, "act")
	return st
}

// ConfigKeyEnv is the variable the user's config file names as holding
// the provider's key (provider.apiKeyEnv), or "": the daemon hides it
// from its children at start, before it can tell which settings will be
// in force.
func ConfigKeyEnv(getenv func(string) string) string {
	file, _ := readConfigFile(getenv, os.ReadFile)
	if file.Provider == nil {
		return ""
	}
	return file.Provider.APIKeyEnv
}

// ConfigFile is where the user's own settings live, in the config folder
// every user-level file of the daemon's is in.
func ConfigFile(getenv func(string) string) string {
	dir := tools.ConfigDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "config.json")
}

// errNoConfigFile means there is no config file, which is fine.
var errNoConfigFile = errors.New("no config file")

// readConfigFile reads the user's config file. A file that is missing is
// errNoConfigFile; one that cannot be read or is not valid is an error
// naming the file and the problem, for the user to be told.
func readConfigFile(getenv func(string) string, readFile func(string) ([]byte, error)) (Settings, error) {
	name := ConfigFile(getenv)
	if name == "" {
		return Settings{}, errNoConfigFile
	}
	data, err := readFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, errNoConfigFile
	}
	if err != nil {
		return Settings{}, fmt.Errorf("config file %s: %w", name, err)
	}
	var st Settings
	if err := decode(data, &st); err != nil {
		return Settings{}, fmt.Errorf("config file %s: %v", name, err)
	}
	if err := st.Validate(""); err != nil {
		return Settings{}, fmt.Errorf("config file %s: %v", name, err)
	}
	return st, nil
}

// Clone returns a copy that shares nothing mutable with st.
func (st Settings) Clone() Settings {
	out := st
	if st.Provider != nil {
		p := *st.Provider
		p.Models = slices.Clone(p.Models)
		if p.NativeTools != nil {
			b := *p.NativeTools
			p.NativeTools = &b
		}
		out.Provider = &p
	}
	if st.Context != nil {
		c := *st.Context
		out.Context = &c
	}
	if st.Checkpoints != nil {
		c := *st.Checkpoints
		if c.Enabled != nil {
			b := *c.Enabled
			c.Enabled = &b
		}
		out.Checkpoints = &c
	}
	if st.Sandbox != nil {
		sb := *st.Sandbox
		sb.DenyRead = slices.Clone(sb.DenyRead)
		sb.AllowWrite = slices.Clone(sb.AllowWrite)
		out.Sandbox = &sb
	}
	if st.Diagnostics != nil {
		d := *st.Diagnostics
		if d.SettleMs != nil {
			ms := *d.SettleMs
			d.SettleMs = &ms
		}
		out.Diagnostics = &d
	}
	out.Approvals = maps.Clone(st.Approvals)
	out.Rules = slices.Clone(st.Rules)
	for i := range out.Rules {
		out.Rules[i].Modes = slices.Clone(out.Rules[i].Modes)
	}
	out.MCPServers = slices.Clone(st.MCPServers)
	out.Subagents = slices.Clone(st.Subagents)
	out.Hooks = st.Hooks.Clone()
	out.TrustedFolders = slices.Clone(st.TrustedFolders)
	return out
}

// mergeHooks puts the hooks of over after those of base, event by event.
func mergeHooks(base, over hooks.Config) hooks.Config {
	if len(base) == 0 {
		return over.Clone()
	}
	out := base.Clone()
	for ev, groups := range over.Clone() {
		out[ev] = append(out[ev], groups...)
	}
	return out
}

// ConfigMCPServers returns the MCP servers of the user's config file,
// the ones the daemon starts when an editor's settings name none, checked
// as the daemon checks them, and the file's name.
func ConfigMCPServers(getenv func(string) string) ([]mcpbridge.ServerConfig, string, error) {
	name := ConfigFile(getenv)
	st, err := readConfigFile(getenv, os.ReadFile)
	if errors.Is(err, errNoConfigFile) {
		return nil, name, nil
	}
	if err != nil {
		return nil, name, err
	}
	cfgs, err := mcpbridge.ParseConfig(st.MCPServers)
	if err != nil {
		return nil, name, fmt.Errorf("config file %s: %v", name, err)
	}
	return cfgs, name, nil
}
