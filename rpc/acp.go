package rpc

import (
	"encoding/json"
	"os"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/approval"
	"github.com/cline-ls/cline-ls/wire"
)

// The ACP dialect (PROTOCOL.md §1–5): newline-delimited JSON, ACP v1
// lifecycle, approvals through session/request_permission, and reads and
// edits through the client's fs/read_text_file and fs/write_text_file when
// it offers them (the client holds the buffers). The session core is the
// same as the LSP dialect's.

const (
	methodAuthenticate     = "authenticate"
	methodWriteTextFile    = "fs/write_text_file"
	methodACPCancelRequest = "$/cancel_request"
	methodSessionClose     = "session/close"
)

// acpCaps is what an ACP client declared.
type acpCaps struct {
	readTextFile  bool
	writeTextFile bool
	terminal      bool // run_commands goes through terminal/* (acp_terminal.go)
}

func (s *Server) acpInitialize(raw []byte) (any, error) {
	var p struct {
		ProtocolVersion    *int `json:"protocolVersion"`
		ClientCapabilities struct {
			FS struct {
				ReadTextFile  bool `json:"readTextFile"`
				WriteTextFile bool `json:"writeTextFile"`
			} `json:"fs"`
			Terminal bool `json:"terminal"`
		} `json:"clientCapabilities"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams("protocolVersion: required")
	}
	s.mu.Lock()
	s.state = stateInitialized
	s.acp = acpCaps{readTextFile: p.ClientCapabilities.FS.ReadTextFile, writeTextFile: p.ClientCapabilities.FS.WriteTextFile,
		terminal: p.ClientCapabilities.Terminal}
	// ACP clients send no initializationOptions: settings come from the
	// environment and the config file.
	s.cfg.reset()
	s.mu.Unlock()
	s.approvals.SetChannels(approval.ChannelsFor(approval.Client{ACP: true}))
	version := s.opts.Version
	if version == "" {
		version = "dev"
	}
	return wire.ACPInitializeResult{
		ProtocolVersion: 1, // the only version this daemon speaks
		AgentCapabilities: wire.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: wire.PromptCapabilities{Image: true, Audio: false, EmbeddedContext: true},
			// Only what this daemon serves: session/list and session/close,
			// and MCP servers over both HTTP transports as well as stdio.
			SessionCapabilities: wire.SessionCapabilities{List: &wire.Empty{}, Close: &wire.Empty{}},
			MCPCapabilities:     wire.MCPCapabilities{HTTP: true, SSE: true},
		},
		AuthMethods: []wire.AuthMethod{},
		AgentInfo:   wire.Implementation{Name: "cline-ls", Version: version},
	}, nil
}

// acpSessionNew serves session/new: the session's cwd becomes a workspace
// folder, since ACP has no other way to name one.
func (s *Server) acpSessionNew(raw []byte) (any, error) {
	var p struct {
		CWD        string            `json:"cwd"`
		Mode       string            `json:"mode"`
		MCPServers []json.RawMessage `json:"mcpServers"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.CWD); err != nil {
		return nil, err
	}
	if err := s.addFolderFor(p.CWD); err != nil {
		return nil, err
	}
	return s.newSession(p.CWD, p.Mode, p.MCPServers)
}

// addFolderFor makes cwd a workspace folder if no folder holds it.
func (s *Server) addFolderFor(cwd string) error {
	fi, err := os.Stat(cwd)
	if err != nil || !fi.IsDir() {
		return invalidParams("cwd: %q is not an existing folder", cwd)
	}
	for _, f := range realFolders(s.folders.Paths()) {
		if within(f, realPath(cwd)) {
			return nil
		}
	}
	f, err := folderFromPath(cwd)
	if err != nil {
		return invalidParams("cwd: %v", err)
	}
	if err := s.checkFolder(f.Path); err != nil {
		return invalidParams("cwd: %v", err)
	}
	s.folders.Add(f)
	s.foldersChanged()
	return nil
}

// cancelRequest serves $/cancel_request (ACP) and $/cancelRequest (LSP):
// it cancels the handler of that request, if it is still running.
func (s *Server) cancelRequest(raw []byte) error {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		ID        json.RawMessage `json:"id"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	idRaw := p.RequestID
	if len(idRaw) == 0 {
		idRaw = p.ID
	}
	var n int64
	var str string
	switch {
	case json.Unmarshal(idRaw, &n) == nil:
		s.cancel(jsonrpc2.NewNumberID(n))
	case json.Unmarshal(idRaw, &str) == nil:
		s.cancel(jsonrpc2.NewStringID(str))
	default:
		return invalidParams("requestId: must be a number or a string")
	}
	return nil
}
