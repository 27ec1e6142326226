package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// initializeParams is what the daemon reads of initialize's params, all
// of it optional.
type initializeParams struct {
	ClientName        *string // clientInfo.name; nil without clientInfo
	RootURI           *string
	RootPath          *string
	WorkspaceFolders  []workspaceFolder
	PositionEncodings []string // capabilities.general.positionEncodings
	ApplyEdit         bool     // capabilities.workspace.applyEdit
	DocumentChanges   bool     // capabilities.workspace.workspaceEdit.documentChanges
	WorkDoneProgress  bool     // capabilities.window.workDoneProgress
	// ShowMessageRequest: capabilities.window.showMessage (LSP 3.16+,
	// which Neovim sends) or showMessageRequest (older clients) is there.
	ShowMessageRequest bool
	ShowDocument       bool // capabilities.window.showDocument.support
	// Cline is capabilities.experimental.cline; LSP holds the features
	// of PROTOCOL.md §11 the client declared that the daemon knows.
	Cline struct {
		Approvals, Diffs, Questions, Diagnostics bool
		LSP                                      []string
	}
	Options json.RawMessage // initializationOptions
}

// initializeWire is the part of initialize's params the daemon reads, in
// their shape on the wire; members it does not read are skipped by the
// decoder.
type initializeWire struct {
	ClientInfo *struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
	ProcessID        *int64            `json:"processId"` // not used, but checked, as a number or null
	RootURI          *string           `json:"rootUri"`
	RootPath         *string           `json:"rootPath"`
	WorkspaceFolders []json.RawMessage `json:"workspaceFolders"` // one by one, so an error names the index
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
			ShowDocument       struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
		} `json:"window"`
		Experimental struct {
			Cline struct {
				Approvals   bool     `json:"approvals"`
				Diffs       bool     `json:"diffs"`
				Questions   bool     `json:"questions"`
				Diagnostics bool     `json:"diagnostics"`
				LSP         []string `json:"lsp"`
			} `json:"cline"`
		} `json:"experimental"`
	} `json:"capabilities"`
	Options json.RawMessage `json:"initializationOptions"`
}

// decodeInitializeParams decodes initialize's params; an error names the
// field at fault.
func decodeInitializeParams(raw []byte) (initializeParams, error) {
	var p initializeParams
	var w initializeWire
	if err := decodeParams(raw, &w); err != nil {
		return p, err
	}
	if w.ClientInfo != nil {
		p.ClientName = &w.ClientInfo.Name
	}
	p.RootURI, p.RootPath = w.RootURI, w.RootPath
	for i, raw := range w.WorkspaceFolders {
		var wf workspaceFolder
		if err := paramError(json.Unmarshal(raw, &wf), fieldf("workspaceFolders[%d]", i)); err != nil {
			return p, err
		}
		p.WorkspaceFolders = append(p.WorkspaceFolders, wf)
	}
	c := &w.Capabilities
	p.PositionEncodings = c.General.PositionEncodings
	p.ApplyEdit = c.Workspace.ApplyEdit
	p.DocumentChanges = c.Workspace.WorkspaceEdit.DocumentChanges
	p.WorkDoneProgress = c.Window.WorkDoneProgress
	p.ShowMessageRequest = c.Window.ShowMessage != nil || c.Window.ShowMessageRequest != nil
	p.ShowDocument = c.Window.ShowDocument.Support
	p.Cline.Approvals, p.Cline.Diffs, p.Cline.Questions = c.Experimental.Cline.Approvals, c.Experimental.Cline.Diffs, c.Experimental.Cline.Questions
	p.Cline.Diagnostics = c.Experimental.Cline.Diagnostics
	// A feature the daemon does not know (a newer client's) is left
	// out: it enables nothing.
	for _, f := range c.Experimental.Cline.LSP {
		if slices.Contains(tools.LSPFeatures(), f) && !slices.Contains(p.Cline.LSP, f) {
			p.Cline.LSP = append(p.Cline.LSP, f)
		}
	}
	p.Options = w.Options
	return p, nil
}

// initialize answers the initialize request (PROTOCOL.md §2).
func (s *Server) initialize(id jsonrpc2.ID, raw []byte) (any, error) {
	p, err := decodeInitializeParams(raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	again := s.state != stateNew
	s.mu.Unlock()
	if again {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: initialize was already received on this connection")
	}
	if _, err := s.cfg.Apply(p.Options, "initializationOptions."); err != nil {
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
	if slices.Contains(p.PositionEncodings, string(workspace.UTF8)) {
		enc = workspace.UTF8
	}
	caps := clientCaps{
		clineApprovals:   p.Cline.Approvals,
		clineDiffs:       p.Cline.Diffs,
		clineQuestions:   p.Cline.Questions,
		clineDiags:       p.Cline.Diagnostics,
		lsp:              p.Cline.LSP,
		applyEdit:        p.ApplyEdit,
		docChanges:       p.DocumentChanges,
		workDoneProgress: p.WorkDoneProgress,
		showMessageReq:   p.ShowMessageRequest,
		showDocument:     p.ShowDocument,
	}
	if p.ClientName != nil {
		caps.checksVersions = checksVersions(*p.ClientName)
		caps.name = *p.ClientName
	}
	// Eglot names itself from version 1.10 on; 1.9 (Debian's) sends no
	// clientInfo, and neither do other small clients, for which a log
	// message while the daemon waits is harmless.
	strands := p.ClientName == nil || *p.ClientName == "Eglot"

	s.mu.Lock()
	s.state = stateInitialized
	s.enc = enc
	s.caps = caps
	s.mu.Unlock()
	s.approvals.SetChannels(approvalChannels(caps))
	choosePeer(s, DialectLSP, lsppeer.Caps{WorkDoneProgress: caps.workDoneProgress, StrandsMessages: strands}, acppeer.Caps{})
	s.reportSettingsFile()
	s.folders.Add(s.ws.Admit(folders)...)
	// The watcher and the cleaning of stale temporary files start with
	// the answer, which they would only compete with for the processor.
	s.ws.Changed(func(fn func()) { s.afterReply(id, func(context.Context) { fn() }) })
	if err := mcpError(s.mcp.SetConn(s.CurrentSettings().MCPServers, "initializationOptions.mcpServers")); err != nil {
		s.log.Warn("MCP servers not started", "err", err)
	}
	s.log.Info("initialized", "encoding", enc, "folders", len(folders))

	var toolNames []string
	if s.opts.ToolNames != nil {
		toolNames = s.opts.ToolNames()
	}
	// The language-server tools are announced only for what the client
	// declared, as they are offered.
	toolNames = slices.DeleteFunc(slices.Clone(toolNames), func(n string) bool { return !tools.OfferedWith(n, caps.lsp) })
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
	var p didChangeConfigParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if len(p.Settings) == 0 || string(p.Settings) == "null" {
		return nil
	}
	var nested nestedSettings
	body := p.Settings
	if json.Unmarshal(body, &nested) == nil && nested.Cline != nil {
		body = *nested.Cline
	}
	if _, err := s.cfg.Apply(body, "settings."); err != nil {
		return err
	}
	s.settingsChanged()
	return mcpError(s.mcp.SetConn(s.CurrentSettings().MCPServers, "settings.mcpServers"))
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
