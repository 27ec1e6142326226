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
	Cline              struct{ Approvals, Diffs, Questions, Diagnostics bool } // capabilities.experimental.cline
	Options            json.RawMessage                                         // initializationOptions
}

// decodeInitializeParams decodes the members initialize reads and no
// others, member by member: an editor's capabilities are large, and this
// runs at every start (an error still names the field at fault).
func decodeInitializeParams(raw []byte) (initializeParams, error) {
	var p initializeParams
	if err := requireParams(raw); err != nil {
		return p, err
	}
	top, err := decodeObject(raw, "")
	if err != nil {
		return p, err
	}
	client, err := top.object("", "clientInfo")
	if err != nil {
		return p, err
	}
	if raw, ok := top["clientInfo"]; ok && string(raw) != "null" {
		name := ""
		if err := client.decode("clientInfo", "name", &name); err != nil {
			return p, err
		}
		p.ClientName = &name
	}
	var processID *int64 // not used, but checked, as a number or null
	if err := top.decode("", "processId", &processID); err != nil {
		return p, err
	}
	if err := top.decode("", "rootUri", &p.RootURI); err != nil {
		return p, err
	}
	if err := top.decode("", "rootPath", &p.RootPath); err != nil {
		return p, err
	}
	var folders []json.RawMessage
	if err := top.decode("", "workspaceFolders", &folders); err != nil {
		return p, err
	}
	for i, raw := range folders {
		at := fieldf("workspaceFolders[%d]", i)
		f, err := decodeObject(raw, at)
		if err != nil {
			return p, err
		}
		var wf workspaceFolder
		if err := f.decode(at, "uri", &wf.URI); err != nil {
			return p, err
		}
		if err := f.decode(at, "name", &wf.Name); err != nil {
			return p, err
		}
		p.WorkspaceFolders = append(p.WorkspaceFolders, wf)
	}
	caps, err := top.object("", "capabilities")
	if err != nil {
		return p, err
	}
	const c = "capabilities"
	general, err := caps.object(c, "general")
	if err != nil {
		return p, err
	}
	if err := general.decode(c+".general", "positionEncodings", &p.PositionEncodings); err != nil {
		return p, err
	}
	ws, err := caps.object(c, "workspace")
	if err != nil {
		return p, err
	}
	if err := ws.decode(c+".workspace", "applyEdit", &p.ApplyEdit); err != nil {
		return p, err
	}
	wsEdit, err := ws.object(c+".workspace", "workspaceEdit")
	if err != nil {
		return p, err
	}
	if err := wsEdit.decode(c+".workspace.workspaceEdit", "documentChanges", &p.DocumentChanges); err != nil {
		return p, err
	}
	window, err := caps.object(c, "window")
	if err != nil {
		return p, err
	}
	if err := window.decode(c+".window", "workDoneProgress", &p.WorkDoneProgress); err != nil {
		return p, err
	}
	_, showMessage := window["showMessage"]
	_, showMessageRequest := window["showMessageRequest"]
	p.ShowMessageRequest = showMessage || showMessageRequest
	exp, err := caps.object(c, "experimental")
	if err != nil {
		return p, err
	}
	cline, err := exp.object(c+".experimental", "cline")
	if err != nil {
		return p, err
	}
	const cl = c + ".experimental.cline"
	for _, m := range []struct {
		name string
		dst  *bool
	}{{"approvals", &p.Cline.Approvals}, {"diffs", &p.Cline.Diffs}, {"questions", &p.Cline.Questions}, {"diagnostics", &p.Cline.Diagnostics}} {
		if err := cline.decode(cl, m.name, m.dst); err != nil {
			return p, err
		}
	}
	p.Options = top["initializationOptions"]
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
	if _, err := s.cfg.apply(p.Options, "initializationOptions."); err != nil {
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
		applyEdit:        p.ApplyEdit,
		docChanges:       p.DocumentChanges,
		workDoneProgress: p.WorkDoneProgress,
		showMessageReq:   p.ShowMessageRequest,
	}
	if p.ClientName != nil {
		caps.checksVersions = checksVersions(*p.ClientName)
		caps.name = *p.ClientName
	}
	// Eglot names itself from version 1.10 on; 1.9 (Debian's) sends no
	// clientInfo, and neither do other small clients, for which a log
	// message while the daemon waits is harmless.
	caps.strandsMessages = p.ClientName == nil || *p.ClientName == "Eglot"

	s.mu.Lock()
	s.state = stateInitialized
	s.enc = enc
	s.caps = caps
	s.mu.Unlock()
	s.reportSettingsFile()
	s.folders.Add(s.admitFolders(context.Background(), folders)...)
	// The watcher and the cleaning of stale temporary files start with
	// the answer, which they would only compete with for the processor.
	s.foldersChangedThen(func(fn func()) { s.afterReply(id, func(context.Context) { fn() }) })
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
