package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

type initializeParams struct {
	ClientInfo *struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
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
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}

// initialize answers the initialize request (PROTOCOL.md §2).
func (s *Server) initialize(raw []byte) (any, error) {
	var p initializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	again := s.state != stateNew
	s.mu.Unlock()
	if again {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: initialize was already received on this connection")
	}
	if _, err := s.cfg.apply(p.InitializationOptions, "initializationOptions."); err != nil {
		return nil, err
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
	if p.ClientInfo != nil {
		caps.checksVersions = checksVersions(p.ClientInfo.Name)
		caps.name = p.ClientInfo.Name
	}
	// Eglot names itself from version 1.10 on; 1.9 (Debian's) sends no
	// clientInfo, and neither do other small clients, for which a log
	// message while the daemon waits is harmless.
	caps.strandsMessages = p.ClientInfo == nil || p.ClientInfo.Name == "Eglot"

	s.mu.Lock()
	s.state = stateInitialized
	s.enc = enc
	s.caps = caps
	s.mu.Unlock()
	s.reportSettingsFile()
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
	return wire.InitializeResult{
		Capabilities: wire.ServerCapabilities{
			PositionEncoding:       string(enc),
			TextDocumentSync:       wire.TextDocumentSyncOptions{OpenClose: true, Change: 2 /* incremental */},
			ExecuteCommandProvider: wire.ExecuteCommandOptions{Commands: commands()},
			CodeActionProvider:     wire.CodeActionOptions{CodeActionKinds: []string{"quickfix", "refactor"}},
			Workspace: wire.WorkspaceCapabilities{
				WorkspaceFolders: wire.WorkspaceFoldersCapabilities{Supported: true, ChangeNotifications: true},
			},
			Experimental: wire.Experimental{Cline: wire.ClineCapabilities{
				ProtocolVersion: ProtocolVersion, Modes: tools.Modes(), Tools: toolNames,
			}},
		},
		ServerInfo: wire.Implementation{Name: "cline-ls", Version: version},
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
	if _, err := s.cfg.apply(body, "settings."); err != nil {
		return err
	}
	s.settingsChanged()
	return s.connMCP(s.CurrentSettings().MCPServers, "settings.mcpServers")
}

// checksVersions reports whether a client, by the name it gives, refuses a
// versioned edit for a version its buffer has moved past (eglot, VS Code):
// its applied: true then means the edit is in the buffer, even before its
// didChange arrives. Neovim is not one: it answers true and skips the
// edit, so for other clients the mirror must show the edit.
func checksVersions(client string) bool {
	switch client {
	case "Eglot", "Visual Studio Code", "Visual Studio Code - Insiders", "code-server", "VSCodium":
		return true
	}
	return false
}
