package settings

import (
	"encoding/json"
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

// CheckpointLimits returns what the settings say of checkpoints: whether
// they are taken, and the pruning limits (zero for the store's defaults).
func (st Settings) CheckpointLimits() (enabled bool, maxAge time.Duration, maxBytes int64) {
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

// DefaultDiagnosticsSettle is diagnostics.settleMs unset: long enough for
// a language server to check a file after a change, short enough not to
// hold up a turn much when no diagnostics come.
const DefaultDiagnosticsSettle = 2 * time.Second

// DiagnosticsSettle is how long an edit waits for the editor's
// diagnostics: 0 means not at all.
func (st Settings) DiagnosticsSettle() time.Duration {
	if d := st.Diagnostics; d != nil && d.SettleMs != nil {
		return time.Duration(*d.SettleMs) * time.Millisecond
	}
	return DefaultDiagnosticsSettle
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

// Reasoning converts the reasoning settings to the provider's.
func (p *ProviderSettings) Reasoning() provider.Reasoning {
	return provider.Reasoning{Effort: p.ReasoningEffort, Budget: p.ThinkingBudget}
}

// Limits converts the reply bounds to the provider's.
func (p *ProviderSettings) Limits() provider.Limits {
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

// Validate checks values the JSON types cannot; its error, an
// *InvalidError, names the field under prefix.
func (st *Settings) Validate(prefix string) error {
	if st.Mode != "" && !slices.Contains(tools.Modes(), st.Mode) {
		return invalid("%smode: must be one of %s, got %q", prefix, strings.Join(tools.Modes(), ", "), st.Mode)
	}
	for k, v := range st.Approvals {
		switch k {
		case "read", "edit", "execute", "fetch", "mcp":
		case "level":
			if !slices.Contains(session.Levels(), session.Level(v)) {
				return invalid("%sapprovals.level: must be ask, sandbox or yolo, got %q", prefix, v)
			}
			continue
		default:
			return invalid("%sapprovals.%s: unknown category (read, edit, execute, fetch, mcp) or level", prefix, k)
		}
		if k == "execute" && v == string(session.Sandbox) {
			continue
		}
		if v != "allow" && v != "ask" && v != "deny" {
			if k == "execute" {
				return invalid("%sapprovals.execute: must be allow, ask, sandbox or deny, got %q", prefix, v)
			}
			return invalid("%sapprovals.%s: must be allow, ask or deny, got %q", prefix, k, v)
		}
	}
	if sb := st.Sandbox; sb != nil {
		if _, err := sandbox.ParseBackend(sb.Backend); err != nil {
			return invalid("%ssandbox.backend: %v", prefix, err)
		}
		for i, p := range sb.DenyRead {
			if strings.TrimSpace(p) == "" {
				return invalid("%ssandbox.denyRead[%d]: empty", prefix, i)
			}
		}
		for i, p := range sb.AllowWrite {
			if strings.TrimSpace(p) == "" || filepath.Clean(p) == "/" {
				return invalid("%ssandbox.allowWrite[%d]: %q is not a folder the sandbox may open for writing", prefix, i, p)
			}
		}
	}
	for i, r := range st.Rules {
		if r.Tool == "" {
			return invalid("%srules[%d].tool: required", prefix, i)
		}
		if r.Decision != "allow" && r.Decision != "ask" && r.Decision != "deny" {
			return invalid("%srules[%d].decision: must be allow, ask or deny, got %q", prefix, i, r.Decision)
		}
	}
	for i, sa := range st.Subagents {
		if strings.TrimSpace(sa.Name) == "" {
			return invalid("%ssubagents[%d].name: required", prefix, i)
		}
	}
	if st.Provider != nil && st.Provider.ContextWindow < 0 {
		return invalid("%sprovider.contextWindow: must be 0 (the model's own) or more, got %d", prefix, st.Provider.ContextWindow)
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
				return invalid("%sprovider.%s: must be 0 (the default) or more, at most %v, got %v", prefix, f.name, f.max, f.v)
			}
		}
		if p.ReasoningEffort != "" && !slices.Contains(provider.ReasoningEfforts, p.ReasoningEffort) {
			return invalid("%sprovider.reasoningEffort: must be one of %s, got %q", prefix, strings.Join(provider.ReasoningEfforts, ", "), p.ReasoningEffort)
		}
		if a := strings.ToLower(p.API); a != "" && a != "responses" && a != "chat" {
			return invalid("%sprovider.api: must be \"responses\" or \"chat\", got %q", prefix, p.API)
		}
		if p.ThinkingBudget < 0 || p.ThinkingBudget > 1_000_000 {
			return invalid("%sprovider.thinkingBudget: must be 0 (none) or more tokens, at most 1000000, got %d", prefix, p.ThinkingBudget)
		}
	}
	if c := st.Context; c != nil && (c.CompactAt < 0 || c.CompactAt > 1) {
		return invalid("%scontext.compactAt: must be between 0 and 1, got %v", prefix, c.CompactAt)
	}
	if c := st.Checkpoints; c != nil && c.MaxAgeDays < 0 {
		return invalid("%scheckpoints.maxAgeDays: must be 0 (the default) or more, got %v", prefix, c.MaxAgeDays)
	}
	if c := st.Checkpoints; c != nil && c.MaxSizeMB < 0 {
		return invalid("%scheckpoints.maxSizeMB: must be 0 (the default) or more, got %v", prefix, c.MaxSizeMB)
	}
	if d := st.Diagnostics; d != nil && d.SettleMs != nil && (*d.SettleMs < 0 || *d.SettleMs > 60000) {
		return invalid("%sdiagnostics.settleMs: must be between 0 (off) and 60000, got %d", prefix, *d.SettleMs)
	}
	if st.MaxTurns < 0 {
		return invalid("%smaxTurns: must be 0 (the default) or more, got %d", prefix, st.MaxTurns)
	}
	if err := st.Hooks.Validate(prefix + "hooks."); err != nil {
		return invalid("%v", err)
	}
	for i, f := range st.TrustedFolders {
		if !filepath.IsAbs(f) {
			return invalid("%strustedFolders[%d]: must be an absolute path, got %q", prefix, i, f)
		}
	}
	return nil
}
