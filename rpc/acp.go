package rpc

import (
	"context"
	"encoding/json"
	"os"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/approval"
	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
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

// acpCaps is what an ACP client declared of its files (delivery reads
// them); its terminal is the ACP peer's.
type acpCaps struct {
	readTextFile  bool
	writeTextFile bool
}

// ACP's incoming params are the SDK's types (generated from the ACP
// schema), with ours beside them where the SDK's cannot say what the
// daemon must (acp_params_test.go shows each against the schema).
type (
	// acpInitParams is initialize's: the SDK's ProtocolVersion is a
	// plain number, so a request without the member the schema
	// requires reads as version 0; versioned tells them apart. Made by
	// decodeACPInit: decoded whole, the SDK's promoted UnmarshalJSON
	// would be all that ran.
	acpInitParams struct {
		acp.InitializeRequest
		versioned bool
	}
	// acpNewParams is session/new's: the SDK's McpServer union answers
	// a malformed server with "invalid variant payload", naming neither
	// the server nor the member, so the servers stay raw until
	// newSession decodes each; mode is our extension (PROTOCOL.md §3).
	acpNewParams struct {
		acp.NewSessionRequest
		McpServers []json.RawMessage `json:"mcpServers"`
		Mode       string            `json:"mode"`
	}
	// acpLoadParams is session/load's, its servers raw as session/new's.
	acpLoadParams struct {
		acp.LoadSessionRequest
		McpServers []json.RawMessage `json:"mcpServers"`
	}
	// setConfigParams is session/set_config_option's, ours: the SDK's
	// SetSessionConfigOptionRequest is a union whose decoder answers a
	// member of the wrong type with "invalid variant payload", so no
	// -32602 could name it.
	setConfigParams = wire.SetConfigOptionParams
	// cancelParams are $/cancel_request's (ACP) and $/cancelRequest's
	// (LSP), served by one handler; the id stays raw, a number or a
	// string as the client spelled it.
	cancelParams struct {
		RequestID json.RawMessage `json:"requestId"`
		ID        json.RawMessage `json:"id"`
	}
	// versionPresence is what of initialize's params tells a missing
	// protocolVersion from version 0.
	versionPresence struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
)

// decodeACPInit decodes initialize's params: the SDK's type, and whether
// protocolVersion was there.
func decodeACPInit(raw []byte) (acpInitParams, error) {
	var p acpInitParams
	if err := decodeParams(raw, &p.InitializeRequest); err != nil {
		return p, err
	}
	var v versionPresence
	json.Unmarshal(raw, &v)
	p.versioned = v.ProtocolVersion != nil
	return p, nil
}

func (s *Server) acpInitialize(raw []byte) (any, error) {
	p, err := decodeACPInit(raw)
	if err != nil {
		return nil, err
	}
	if !p.versioned {
		return nil, invalidParams("protocolVersion: required")
	}
	fs := p.ClientCapabilities.Fs
	caps := acppeer.Caps{ReadTextFile: fs.ReadTextFile, WriteTextFile: fs.WriteTextFile, Terminal: p.ClientCapabilities.Terminal}
	s.mu.Lock()
	s.state = stateInitialized
	s.acp = acpCaps{readTextFile: caps.ReadTextFile, writeTextFile: caps.WriteTextFile}
	// ACP clients send no initializationOptions: settings come from the
	// environment and the config file.
	s.cfg.Reset()
	s.mu.Unlock()
	s.approvals.SetChannels(approval.ChannelsFor(approval.Client{ACP: true}))
	choosePeer(s, DialectACP, lsppeer.Caps{}, caps)
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
// folder, since ACP has no other way to name one. The answer carries the
// config options, and the session's commands follow it (withConfig).
func (s *Server) acpSessionNew(_ context.Context, req *jsonrpc2.Request) (any, error) {
	var p acpNewParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.Cwd); err != nil {
		return nil, err
	}
	if err := s.addFolderFor(p.Cwd); err != nil {
		return nil, err
	}
	res, err := s.sess.newSession(p.Cwd, p.Mode, p.McpServers)
	if err != nil {
		return nil, err
	}
	return s.acpcfg.withConfig(req.ID(), res, res.SessionID)
}

// addFolderFor makes cwd a workspace folder if no folder holds it.
func (s *Server) addFolderFor(cwd string) error {
	fi, err := os.Stat(cwd)
	if err != nil || !fi.IsDir() {
		return invalidParams("cwd: %q is not an existing folder", cwd)
	}
	for _, f := range workspace.RealFolders(s.folders.Paths()) {
		if workspace.Within(f, workspace.RealPath(cwd)) {
			return nil
		}
	}
	f, err := workspace.FolderFromPath(cwd)
	if err != nil {
		return invalidParams("cwd: %v", err)
	}
	if err := s.ws.Check(f.Path); err != nil {
		return invalidParams("cwd: %v", err)
	}
	s.folders.Add(f)
	s.foldersChanged()
	return nil
}

// cancelRequest serves $/cancel_request (ACP) and $/cancelRequest (LSP):
// it cancels the handler of that request, if it is still running.
func (s *Server) cancelRequest(raw []byte) error {
	var p cancelParams
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
