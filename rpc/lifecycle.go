package rpc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/workspace"
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
	// AllowBroadWorkspace lets "/" or the home folder itself be a
	// workspace folder; without it such a folder is refused.
	AllowBroadWorkspace bool `json:"allowBroadWorkspace,omitempty"`
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
	if st.Mode != "" && !slices.Contains(Modes, st.Mode) {
		return invalidParams("%smode: must be one of %s, got %q", prefix, strings.Join(Modes, ", "), st.Mode)
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
	if st.MaxTurns < 0 {
		return invalidParams("%smaxTurns: must be positive, got %d", prefix, st.MaxTurns)
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
	st := client
	if st.Provider == nil {
		st.Provider = &ProviderSettings{}
	}
	p := st.Provider
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

	if file, ok := readConfigFile(getenv); ok {
		if file.Provider != nil {
			fill(&p.Name, file.Provider.Name)
			fill(&p.Model, file.Provider.Model)
			fill(&p.BaseURL, file.Provider.BaseURL)
			fill(&p.APIKeyEnv, file.Provider.APIKeyEnv)
			fill(&p.Transcript, file.Provider.Transcript)
			if p.NativeTools == nil {
				p.NativeTools = file.Provider.NativeTools
			}
		}
		fill(&st.Mode, file.Mode)
		fill(&st.StateDir, file.StateDir)
		st.AllowBroadWorkspace = st.AllowBroadWorkspace || file.AllowBroadWorkspace
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

func readConfigFile(getenv func(string) string) (Settings, bool) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return Settings{}, false
		}
		dir = filepath.Join(home, ".config")
	}
	data, err := os.ReadFile(filepath.Join(dir, "cline-ls", "config.json"))
	if err != nil {
		return Settings{}, false
	}
	var st Settings
	if json.Unmarshal(data, &st) != nil || st.validate("") != nil {
		return Settings{}, false
	}
	return st, true
}

type initializeParams struct {
	ProcessID        *int64            `json:"processId"`
	RootURI          *string           `json:"rootUri"`
	RootPath         *string           `json:"rootPath"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges bool `json:"documentChanges"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress   bool            `json:"workDoneProgress"`
			ShowMessage        json.RawMessage `json:"showMessage"`
			ShowMessageRequest json.RawMessage `json:"showMessageRequest"`
		} `json:"window"`
		Experimental struct {
			Cline struct {
				Approvals bool `json:"approvals"`
				Diffs     bool `json:"diffs"`
				Questions bool `json:"questions"`
			} `json:"cline"`
		} `json:"experimental"`
	} `json:"capabilities"`
	InitializationOptions *Settings `json:"initializationOptions"`
}

// initialize answers the initialize request (PROTOCOL.md §2).
func (s *Server) initialize(raw []byte) (any, error) {
	var p initializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	var client Settings
	if p.InitializationOptions != nil {
		client = *p.InitializationOptions
		if err := client.validate("initializationOptions."); err != nil {
			return nil, err
		}
	}
	if _, err := mcpbridge.ParseConfig(client.MCPServers); err != nil {
		return nil, invalidParams("initializationOptions.%v", err)
	}
	var folders []workspace.Folder
	for i, f := range p.WorkspaceFolders {
		wf, err := workspace.NewFolder(f.URI, f.Name)
		if err != nil {
			return nil, invalidParams("workspaceFolders[%d].uri: %v", i, err)
		}
		folders = append(folders, wf)
	}
	if len(folders) == 0 && p.RootURI != nil && *p.RootURI != "" {
		wf, err := workspace.NewFolder(*p.RootURI, "")
		if err != nil {
			return nil, invalidParams("rootUri: %v", err)
		}
		folders = append(folders, wf)
	}
	if len(folders) == 0 && p.RootPath != nil && filepath.IsAbs(*p.RootPath) {
		folders = append(folders, workspace.Folder{URI: workspace.PathToURI(*p.RootPath),
			Name: filepath.Base(*p.RootPath), Path: filepath.Clean(*p.RootPath)})
	}

	enc := workspace.UTF16
	if slices.Contains(p.Capabilities.General.PositionEncodings, string(workspace.UTF8)) {
		enc = workspace.UTF8
	}
	caps := clientCaps{
		clineApprovals:   p.Capabilities.Experimental.Cline.Approvals,
		clineDiffs:       p.Capabilities.Experimental.Cline.Diffs,
		clineQuestions:   p.Capabilities.Experimental.Cline.Questions,
		applyEdit:        p.Capabilities.Workspace.ApplyEdit,
		docChanges:       p.Capabilities.Workspace.WorkspaceEdit.DocumentChanges,
		workDoneProgress: p.Capabilities.Window.WorkDoneProgress,
		// LSP 3.16+ names the capability window.showMessage (Neovim sends
		// that); older clients window.showMessageRequest.
		showMessageReq: len(p.Capabilities.Window.ShowMessage) > 0 || len(p.Capabilities.Window.ShowMessageRequest) > 0,
	}

	s.mu.Lock()
	s.state = stateInitialized
	s.enc = enc
	s.caps = caps
	s.client = client
	s.settings = ResolveSettings(client, s.opts.Getenv)
	s.mu.Unlock()
	s.folders.Add(s.admitFolders(context.Background(), folders)...)
	s.foldersChanged()
	if err := s.connMCP(s.CurrentSettings().MCPServers, "initializationOptions.mcpServers"); err != nil {
		s.log.Warn("MCP servers not started", "err", err)
	}
	s.log.Info("initialized", "encoding", enc, "folders", len(folders))

	var toolNames []string
	if s.opts.ToolNames != nil {
		toolNames = s.opts.ToolNames()
	}
	if toolNames == nil {
		toolNames = []string{}
	}
	version := s.opts.Version
	if version == "" {
		version = "dev"
	}
	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": string(enc),
			"textDocumentSync": map[string]any{
				"openClose": true,
				"change":    2, // incremental
				"save":      map[string]any{"includeText": false},
			},
			"executeCommandProvider": map[string]any{"commands": commands()},
			"workspace": map[string]any{
				"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true},
			},
			"experimental": map[string]any{
				"cline": map[string]any{
					"protocolVersion": ProtocolVersion,
					"modes":           Modes,
					"tools":           toolNames,
				},
			},
		},
		"serverInfo": map[string]any{"name": "cline-ls", "version": version},
	}, nil
}

// didChangeConfiguration takes new settings: {"settings": <Settings>} or,
// for clients that nest them, {"settings": {"cline": <Settings>}}.
func (s *Server) didChangeConfiguration(raw []byte) error {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if len(p.Settings) == 0 || string(p.Settings) == "null" {
		return nil
	}
	var nested struct {
		Cline *json.RawMessage `json:"cline"`
	}
	body := p.Settings
	if json.Unmarshal(body, &nested) == nil && nested.Cline != nil {
		body = *nested.Cline
	}
	var st Settings
	if err := decodeParams(body, &st); err != nil {
		return err
	}
	if err := st.validate("settings."); err != nil {
		return err
	}
	if _, err := mcpbridge.ParseConfig(st.MCPServers); err != nil {
		return invalidParams("settings.%v", err)
	}
	s.mu.Lock()
	// Settings arrive in pieces (eglot sends {"settings":{}} right after
	// connecting): what is given overrides, what is not keeps its value.
	s.client = mergeSettings(s.client, st)
	s.settings = ResolveSettings(s.client, s.opts.Getenv)
	s.mu.Unlock()
	return s.connMCP(s.CurrentSettings().MCPServers, "settings.mcpServers")
}

// mergeSettings overlays the fields set in over on base.
func mergeSettings(base, over Settings) Settings {
	out := base
	if over.Provider != nil {
		p := ProviderSettings{}
		if base.Provider != nil {
			p = *base.Provider
		}
		o := over.Provider
		for _, f := range []struct {
			dst *string
			v   string
		}{
			{&p.Name, o.Name}, {&p.Model, o.Model}, {&p.BaseURL, o.BaseURL}, {&p.APIKeyEnv, o.APIKeyEnv}, {&p.Transcript, o.Transcript},
		} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
		if o.NativeTools != nil {
			p.NativeTools = o.NativeTools
		}
		out.Provider = &p
	}
	if over.Mode != "" {
		out.Mode = over.Mode
	}
	if over.Approvals != nil {
		out.Approvals = over.Approvals
	}
	if over.Rules != nil {
		out.Rules = over.Rules
	}
	if over.MaxTurns != 0 {
		out.MaxTurns = over.MaxTurns
	}
	if over.MCPServers != nil {
		out.MCPServers = over.MCPServers
	}
	if over.StateDir != "" {
		out.StateDir = over.StateDir
	}
	if over.Subagents != nil {
		out.Subagents = over.Subagents
	}
	return out
}

// CurrentSettings returns the settings in force.
func (s *Server) CurrentSettings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}
