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
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
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
	Subagents   []SubagentSettings `json:"subagents,omitempty"`
	Experiments map[string]any     `json:"experiments,omitempty"`
	Context     *ContextSettings   `json:"context,omitempty"`
}

// ContextSettings tune compaction (PROTOCOL.md §7).
type ContextSettings struct {
	// CompactAt is the share of the context window past which the history
	// is compacted before a request; 0 takes the default.
	CompactAt float64 `json:"compactAt,omitempty"`
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
		default:
			return invalidParams("%sapprovals.%s: unknown category (read, edit, execute, fetch, mcp)", prefix, k)
		}
		if v != "allow" && v != "ask" && v != "deny" {
			return invalidParams("%sapprovals.%s: must be allow, ask or deny, got %q", prefix, k, v)
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
	if c := st.Context; c != nil && (c.CompactAt < 0 || c.CompactAt > 1) {
		return invalidParams("%scontext.compactAt: must be between 0 and 1, got %v", prefix, c.CompactAt)
	}
	if st.MaxTurns < 0 {
		return invalidParams("%smaxTurns: must be 0 (the default) or more, got %d", prefix, st.MaxTurns)
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
// initializationOptions), $XDG_CONFIG_HOME/cline-ls/config.json,
// and the first provider API key variable that is set (PROTOCOL.md §2).
func ResolveSettings(client Settings, getenv func(string) string) Settings {
	st := client.clone()
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

	if file, err := readConfigFile(getenv); err == nil {
		// The file's model settings belong to the file's provider: a
		// client that names another provider takes none of them (its key
		// variable above all).
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
		}
		if st.Context == nil {
			st.Context = file.Context
		}
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
func readConfigFile(getenv func(string) string) (Settings, error) {
	name := configFile(getenv)
	if name == "" {
		return Settings{}, errNoConfigFile
	}
	data, err := os.ReadFile(name)
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
	out.Approvals = maps.Clone(st.Approvals)
	out.Experiments = maps.Clone(st.Experiments)
	out.Rules = slices.Clone(st.Rules)
	for i := range out.Rules {
		out.Rules[i].Modes = slices.Clone(out.Rules[i].Modes)
	}
	out.MCPServers = slices.Clone(st.MCPServers)
	out.Subagents = slices.Clone(st.Subagents)
	return out
}

// settingsStore owns a connection's settings. What the client sent is kept
// as one JSON object that each change is merged into key by key — settings
// arrive in pieces (eglot sends {"settings":{}} right after connecting), a
// key that is absent keeps its value and a key set to null clears it. The
// settings in force are resolved from it afresh on every change and never
// mutated after, so readers share them without copies going stale.
type settingsStore struct {
	getenv func(string) string

	mu      sync.Mutex     // guards client, cur and fileErr
	client  map[string]any // what the client sent, merged
	cur     Settings       // resolved; replaced, never changed in place
	fileErr error          // the config file's problem, if any
}

func newSettingsStore(getenv func(string) string) *settingsStore {
	st := &settingsStore{getenv: getenv}
	st.cur, st.fileErr = resolve(Settings{}, getenv)
	return st
}

// resolve is ResolveSettings that also says what was wrong with the config
// file, if anything.
func resolve(client Settings, getenv func(string) string) (Settings, error) {
	_, err := readConfigFile(getenv)
	if errors.Is(err, errNoConfigFile) {
		err = nil
	}
	return ResolveSettings(client, getenv), err
}

// apply merges a settings object from the client (initializationOptions,
// or a didChangeConfiguration body) into what it sent before and makes the
// result the settings in force. An invalid object changes nothing; its
// error names the field under prefix.
func (st *settingsStore) apply(raw json.RawMessage, prefix string) (Settings, error) {
	var over map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		// Decode into the typed shape first, so that a wrong type is
		// reported with the field's name.
		var typed Settings
		if err := decodeParams(raw, &typed); err != nil {
			return Settings{}, prefixed(err, prefix)
		}
		if err := json.Unmarshal(raw, &over); err != nil {
			return Settings{}, invalidParams("%s: must be an object", strings.TrimSuffix(prefix, "."))
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	merged := mergeJSON(st.client, over)
	body, err := json.Marshal(merged)
	if err != nil {
		return Settings{}, invalidParams("%s: %v", strings.TrimSuffix(prefix, "."), err)
	}
	var client Settings
	if err := decodeParams(body, &client); err != nil {
		return Settings{}, prefixed(err, prefix)
	}
	if err := client.validate(prefix); err != nil {
		return Settings{}, err
	}
	if _, err := mcpbridge.ParseConfig(client.MCPServers); err != nil {
		return Settings{}, invalidParams("%s%v", prefix, err)
	}
	st.client = merged
	st.cur, st.fileErr = resolve(client, st.getenv)
	return st.cur.clone(), nil
}

// reset forgets what the client sent (ACP clients send no settings: the
// environment and the config file decide).
func (st *settingsStore) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.client = nil
	st.cur, st.fileErr = resolve(Settings{}, st.getenv)
}

// current returns the settings in force, as a copy the caller may keep.
func (st *settingsStore) current() Settings {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cur.clone()
}

// fileProblem returns what is wrong with the config file, if anything.
func (st *settingsStore) fileProblem() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.fileErr
}

// mergeJSON overlays over on base, recursing into objects: a null in over
// deletes the key. Neither argument is changed.
func mergeJSON(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		if vo, ok := v.(map[string]any); ok {
			if bo, ok := out[k].(map[string]any); ok {
				out[k] = mergeJSON(bo, vo)
				continue
			}
			out[k] = mergeJSON(nil, vo)
			continue
		}
		out[k] = v
	}
	return out
}

// prefixed puts prefix before the field an invalid-params error names.
func prefixed(err error, prefix string) error {
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		return err
	}
	msg := strings.TrimPrefix(je.Message, "invalid params: ")
	if rest, ok := strings.CutPrefix(msg, "params"); ok {
		return invalidParams("%s%s", strings.TrimSuffix(prefix, "."), rest)
	}
	return invalidParams("%s%s", prefix, msg)
}

// CurrentSettings returns the settings in force.
func (s *Server) CurrentSettings() Settings { return s.cfg.current() }

// reportSettingsFile tells the user when their config file was ignored.
func (s *Server) reportSettingsFile() {
	if err := s.cfg.fileProblem(); err != nil {
		s.log.Warn("config file ignored", "err", err)
		s.showMessage(2, "cline-ls: "+err.Error()+"; its settings are ignored")
	}
}

// settingsChanged brings the settings in force to every live session: the
// approvals and rules reach their policies at once (each keeps the rules
// its user added with "always").
func (s *Server) settingsChanged() {
	s.reportSettingsFile()
	cfg := policyConfig(s.CurrentSettings())
	s.sess.mu.Lock()
	live := make([]*liveSession, 0, len(s.sess.byID)+len(s.sess.editor))
	for _, ls := range s.sess.byID {
		live = append(live, ls)
	}
	for _, ls := range s.sess.editor {
		live = append(live, ls)
	}
	s.sess.mu.Unlock()
	for _, ls := range live {
		if err := ls.policy.SetConfig(cfg); err != nil {
			s.log.Warn("settings not applied to a session", "session", ls.ID(), "err", err)
		}
	}
}
