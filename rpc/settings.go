package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
)

// Settings is the shape of initializationOptions, of
// workspace/didChangeConfiguration's settings and of the config file
// (PROTOCOL.md §2). Every field is optional.
type Settings struct {
	Provider   *ProviderSettings `json:"provider,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	Approvals  map[string]string `json:"approvals,omitempty"`
	Rules      []Rule            `json:"rules,omitempty"`
	MaxTurns   int               `json:"maxTurns,omitempty"`
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
	StateDir   string            `json:"stateDir,omitempty"`
	// Subagents become subagent_<name> tools (beyond PROTOCOL.md's list).
	Subagents   []SubagentSettings   `json:"subagents,omitempty"`
	Context     *ContextSettings     `json:"context,omitempty"`
	Checkpoints *CheckpointSettings  `json:"checkpoints,omitempty"`
	Diagnostics *DiagnosticsSettings `json:"diagnostics,omitempty"`
	// MCPSampling lets MCP servers ask the model (sampling/createMessage),
	// each request shown to the user to allow or deny; off, such a
	// request is refused.
	MCPSampling bool `json:"mcpSampling,omitempty"`
	// AllowBroadWorkspace lets "/" or the home folder itself be a
	// workspace folder; without it such a folder is refused.
	AllowBroadWorkspace bool `json:"allowBroadWorkspace,omitempty"`
	// Hooks are commands run at the session's moments, configured as
	// Claude Code configures them (package hooks). The config file's and
	// the client's both run; a project's .cline/settings.json adds its
	// own in a trusted folder only.
	Hooks hooks.Config `json:"hooks,omitempty"`
	// TrustedFolders are folders whose project hooks run without asking.
	// Only the config file's count: a client's settings may come from a
	// workspace's own files.
	TrustedFolders []string `json:"trustedFolders,omitempty"`
	// Sandbox tunes what commands may do at the sandbox approval level.
	Sandbox *SandboxSettings `json:"sandbox,omitempty"`
}

// SandboxSettings are what a command confined by the sandbox may do
// besides writing the workspace folders and its private temporary folder
// (README.md): Network lets it reach the network; DenyRead lists more
// files and folders it cannot read, AllowWrite more folders it may
// change (absolute, "~/" for the home folder, or relative to the first
// workspace folder); Hooks confines the hooks as well. Backend forces "bwrap" or "landlock" (default
// "auto"; the CLINE_LS_SANDBOX variable does the same).
type SandboxSettings struct {
	Network    bool     `json:"network,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
	AllowWrite []string `json:"allowWrite,omitempty"`
	Backend    string   `json:"backend,omitempty"`
	// Hooks runs the hooks confined too, at any approval level: a hook
	// that cannot be confined (no sandbox here) is not run, and says so.
	Hooks bool `json:"hooks,omitempty"`
}

// ContextSettings tune compaction (PROTOCOL.md §7).
type ContextSettings struct {
	// CompactAt is the share of the context window past which the history
	// is compacted before a request; 0 takes the default.
	CompactAt float64 `json:"compactAt,omitempty"`
}

// CheckpointSettings tune the workspace's undo points (PROTOCOL.md §8).
type CheckpointSettings struct {
	// Enabled false stops new checkpoints; those stored stay listed and
	// restorable. Unset means on.
	Enabled *bool `json:"enabled,omitempty"`
	// MaxAgeDays: older checkpoints are pruned (the newest stays); 0
	// takes the default of 7.
	MaxAgeDays float64 `json:"maxAgeDays,omitempty"`
	// MaxSizeMB caps the bytes the workspace's checkpoints keep, the
	// oldest going first (the newest stays); 0 takes the default of 500.
	MaxSizeMB float64 `json:"maxSizeMB,omitempty"`
}

// checkpointLimits returns what the settings say of checkpoints: whether
// they are taken, and the pruning limits (zero for the store's defaults).
func (st Settings) checkpointLimits() (enabled bool, maxAge time.Duration, maxBytes int64) {
	c := st.Checkpoints
	if c == nil {
		return true, 0, 0
	}
	return c.Enabled == nil || *c.Enabled,
		time.Duration(c.MaxAgeDays * float64(24*time.Hour)),
		int64(c.MaxSizeMB * (1 << 20))
}

// DiagnosticsSettings tune the editor's diagnostics after an edit
// (PROTOCOL.md §10).
type DiagnosticsSettings struct {
	// SettleMs is how long an edit's result waits for the editor's
	// diagnostics of the edited text; 0 turns the wait off, unset takes
	// the default of 2000.
	SettleMs *int `json:"settleMs,omitempty"`
}

// defaultDiagnosticsSettle is diagnostics.settleMs unset: long enough for
// a language server to check a file after a change, short enough not to
// hold up a turn much when no diagnostics come.
const defaultDiagnosticsSettle = 2 * time.Second

// diagnosticsSettle is how long an edit waits for the editor's
// diagnostics: 0 means not at all.
func (st Settings) diagnosticsSettle() time.Duration {
	if d := st.Diagnostics; d != nil && d.SettleMs != nil {
		return time.Duration(*d.SettleMs) * time.Millisecond
	}
	return defaultDiagnosticsSettle
}

// ProviderSettings names the model. The key itself is never sent: APIKeyEnv
// names the environment variable that holds it.
type ProviderSettings struct {
	Name        string `json:"name,omitempty"`
	Model       string `json:"model,omitempty"`
	BaseURL     string `json:"baseUrl,omitempty"`
	APIKeyEnv   string `json:"apiKeyEnv,omitempty"`
	NativeTools *bool  `json:"nativeTools,omitempty"`
	// Transcript is the replay provider's recorded transcript file.
	Transcript string `json:"transcript,omitempty"`
	// ContextWindow overrides the model's context window, in tokens.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Models are offered, besides Model, by the ACP model choice.
	Models []string `json:"models,omitempty"`
	// The bounds of one reply (provider.Limits); 0 takes the default.
	StreamIdleSeconds     float64 `json:"streamIdleSeconds,omitempty"`
	RequestTimeoutSeconds float64 `json:"requestTimeoutSeconds,omitempty"`
	MaxReplyMB            float64 `json:"maxReplyMB,omitempty"`
	MaxToolCallMB         float64 `json:"maxToolCallMB,omitempty"`
	// ReasoningEffort ("low", "medium", "high") and ThinkingBudget
	// (tokens) ask the model to think (provider.Reasoning).
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	ThinkingBudget  int    `json:"thinkingBudget,omitempty"`
	// API is OpenAI's API for the openai provider and compatible
	// servers: "responses" or "chat"; empty picks per model
	// (provider.Config.API).
	API string `json:"api,omitempty"`
}

// reasoning converts the reasoning settings to the provider's.
func (p *ProviderSettings) reasoning() provider.Reasoning {
	return provider.Reasoning{Effort: p.ReasoningEffort, Budget: p.ThinkingBudget}
}

// limits converts the reply bounds to the provider's.
func (p *ProviderSettings) limits() provider.Limits {
	return provider.Limits{
		StreamIdle:       time.Duration(p.StreamIdleSeconds * float64(time.Second)),
		RequestTimeout:   time.Duration(p.RequestTimeoutSeconds * float64(time.Second)),
		MaxReplyBytes:    int(p.MaxReplyMB * (1 << 20)),
		MaxToolCallBytes: int(p.MaxToolCallMB * (1 << 20)),
	}
}

// SubagentSettings configures one subagent tool.
type SubagentSettings struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt,omitempty"`
}

// Rule is an approval rule (PROTOCOL.md §4).
type Rule struct {
	Tool       string   `json:"tool"`
	ArgPattern string   `json:"argPattern,omitempty"`
	Decision   string   `json:"decision"`
	Modes      []string `json:"modes,omitempty"`
	Priority   int      `json:"priority,omitempty"`
}

// validate checks values the JSON types cannot, naming the field.
func (st *Settings) validate(prefix string) error {
	if st.Mode != "" && !slices.Contains(tools.Modes(), st.Mode) {
		return invalidParams("%smode: must be one of %s, got %q", prefix, strings.Join(tools.Modes(), ", "), st.Mode)
	}
	for k, v := range st.Approvals {
		switch k {
		case "read", "edit", "execute", "fetch", "mcp":
		case "level":
			if !slices.Contains(session.Levels(), session.Level(v)) {
				return invalidParams("%sapprovals.level: must be ask, sandbox or yolo, got %q", prefix, v)
			}
			continue
		default:
			return invalidParams("%sapprovals.%s: unknown category (read, edit, execute, fetch, mcp) or level", prefix, k)
		}
		if k == "execute" && v == string(session.Sandbox) {
			continue
		}
		if v != "allow" && v != "ask" && v != "deny" {
			if k == "execute" {
				return invalidParams("%sapprovals.execute: must be allow, ask, sandbox or deny, got %q", prefix, v)
			}
			return invalidParams("%sapprovals.%s: must be allow, ask or deny, got %q", prefix, k, v)
		}
	}
	if sb := st.Sandbox; sb != nil {
		if _, err := sandbox.ParseBackend(sb.Backend); err != nil {
			return invalidParams("%ssandbox.backend: %v", prefix, err)
		}
		for i, p := range sb.DenyRead {
			if strings.TrimSpace(p) == "" {
				return invalidParams("%ssandbox.denyRead[%d]: empty", prefix, i)
			}
		}
		for i, p := range sb.AllowWrite {
			if strings.TrimSpace(p) == "" || filepath.Clean(p) == "/" {
				return invalidParams("%ssandbox.allowWrite[%d]: %q is not a folder the sandbox may open for writing", prefix, i, p)
			}
		}
	}
	for i, r := range st.Rules {
		if r.Tool == "" {
			return invalidParams("%srules[%d].tool: required", prefix, i)
		}
		if r.Decision != "allow" && r.Decision != "ask" && r.Decision != "deny" {
			return invalidParams("%srules[%d].decision: must be allow, ask or deny, got %q", prefix, i, r.Decision)
		}
	}
	for i, sa := range st.Subagents {
		if strings.TrimSpace(sa.Name) == "" {
			return invalidParams("%ssubagents[%d].name: required", prefix, i)
		}
	}
	if st.Provider != nil && st.Provider.ContextWindow < 0 {
		return invalidParams("%sprovider.contextWindow: must be 0 (the model's own) or more, got %d", prefix, st.Provider.ContextWindow)
	}
	if p := st.Provider; p != nil {
		for _, f := range []struct {
			name   string
			v, max float64
		}{{"streamIdleSeconds", p.StreamIdleSeconds, 86400}, {"requestTimeoutSeconds", p.RequestTimeoutSeconds, 86400},
			{"maxReplyMB", p.MaxReplyMB, 1024}, {"maxToolCallMB", p.MaxToolCallMB, 1024}} {
			// A day, or a gigabyte, is past anything meant; the cap keeps
			// the conversions from overflowing.
			if !(f.v >= 0 && f.v <= f.max) {
				return invalidParams("%sprovider.%s: must be 0 (the default) or more, at most %v, got %v", prefix, f.name, f.max, f.v)
			}
		}
		if p.ReasoningEffort != "" && !slices.Contains(provider.ReasoningEfforts, p.ReasoningEffort) {
			return invalidParams("%sprovider.reasoningEffort: must be one of %s, got %q", prefix, strings.Join(provider.ReasoningEfforts, ", "), p.ReasoningEffort)
		}
		if a := strings.ToLower(p.API); a != "" && a != "responses" && a != "chat" {
			return invalidParams("%sprovider.api: must be \"responses\" or \"chat\", got %q", prefix, p.API)
		}
		if p.ThinkingBudget < 0 || p.ThinkingBudget > 1_000_000 {
			return invalidParams("%sprovider.thinkingBudget: must be 0 (none) or more tokens, at most 1000000, got %d", prefix, p.ThinkingBudget)
		}
	}
	if c := st.Context; c != nil && (c.CompactAt < 0 || c.CompactAt > 1) {
		return invalidParams("%scontext.compactAt: must be between 0 and 1, got %v", prefix, c.CompactAt)
	}
	if c := st.Checkpoints; c != nil && c.MaxAgeDays < 0 {
		return invalidParams("%scheckpoints.maxAgeDays: must be 0 (the default) or more, got %v", prefix, c.MaxAgeDays)
	}
	if c := st.Checkpoints; c != nil && c.MaxSizeMB < 0 {
		return invalidParams("%scheckpoints.maxSizeMB: must be 0 (the default) or more, got %v", prefix, c.MaxSizeMB)
	}
	if d := st.Diagnostics; d != nil && d.SettleMs != nil && (*d.SettleMs < 0 || *d.SettleMs > 60000) {
		return invalidParams("%sdiagnostics.settleMs: must be between 0 (off) and 60000, got %d", prefix, *d.SettleMs)
	}
	if st.MaxTurns < 0 {
		return invalidParams("%smaxTurns: must be 0 (the default) or more, got %d", prefix, st.MaxTurns)
	}
	if err := st.Hooks.Validate(prefix + "hooks."); err != nil {
		return invalidParams("%v", err)
	}
	for i, f := range st.TrustedFolders {
		if !filepath.IsAbs(f) {
			return invalidParams("%strustedFolders[%d]: must be an absolute path, got %q", prefix, i, f)
		}
	}
	return nil
}

// defaultModels are used when only an API key variable picks the provider.
var defaultModels = []struct{ env, provider, model string }{
	{"ANTHROPIC_API_KEY", "anthropic", "claude-sonnet-4-5"},
	{"OPENAI_API_KEY", "openai", "gpt-5"},
	{"GEMINI_API_KEY", "gemini", "gemini-2.5-pro"},
}

// ResolveSettings fills what the client left unset from, in order, the
// CLINE_LS_* environment variables (CLINE_LS_TRANSCRIPT, beyond
// PROTOCOL.md's list, names a replay transcript for clients without
// initializationOptions, and alone picks the replay provider),
// $XDG_CONFIG_HOME/cline-ls/config.json,
// and the first provider API key variable that is set (PROTOCOL.md §2).
// It reads the config file; a Server reads it once, when it is made.
func ResolveSettings(client Settings, getenv func(string) string) Settings {
	file, _ := readConfigFile(getenv, os.ReadFile)
	return resolveSettings(client, getenv, file)
}

// resolveSettings is ResolveSettings with the config file already read:
// file is its settings, the zero Settings when there is none or it is
// ignored.
func resolveSettings(client Settings, getenv func(string) string, file Settings) Settings {
	st := client.clone()
	file = file.clone() // what the result takes of it is its own
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
		for _, d := range defaultModels {
			if getenv(d.env) != "" {
				p.Name, p.APIKeyEnv = d.provider, d.env
				fill(&p.Model, d.model)
				break
			}
		}
	}
	if p.APIKeyEnv == "" {
		for _, d := range defaultModels {
			if d.provider == p.Name {
				p.APIKeyEnv = d.env
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

// configFile is where the user's own settings live, in the config folder
// every user-level file of the daemon's is in.
func configFile(getenv func(string) string) string {
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
	name := configFile(getenv)
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
	if err := decodeParams(data, &st); err != nil {
		return Settings{}, fmt.Errorf("config file %s: %v", name, err)
	}
	if err := st.validate(""); err != nil {
		return Settings{}, fmt.Errorf("config file %s: %v", name, err)
	}
	return st, nil
}

// clone returns a copy that shares nothing mutable with st.
func (st Settings) clone() Settings {
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
