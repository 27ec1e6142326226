package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// The ACP dialect (PROTOCOL.md §1–5): newline-delimited JSON, ACP v1
// lifecycle, approvals through session/request_permission, and reads and
// edits through the client's fs/read_text_file and fs/write_text_file when
// it offers them (the client holds the buffers). The session core is the
// same as the LSP dialect's.

const (
	methodAuthenticate      = "authenticate"
	methodRequestPermission = "session/request_permission"
	methodReadTextFile      = "fs/read_text_file"
	methodWriteTextFile     = "fs/write_text_file"
	methodACPCancelRequest  = "$/cancel_request"
	methodSessionClose      = "session/close"
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
	s.cfg.Reset()
	s.mu.Unlock()
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

// askACP asks through session/request_permission.
func (a *approvals) askACP(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	d := req.Description
	toolCall := wire.PermissionToolCall{
		ToolCallID: req.CallID,
		Title:      d.Title,
		Kind:       wire.ToolKind(d.Kind),
		Status:     wire.StatusPending,
		Locations:  a.s.absLocations(session.Locations(d.Locations)),
		RawInput:   session.ClientInput(req.Args),
	}
	var files []session.DiffFile
	for _, c := range d.Changes {
		if c.NewText != nil && c.MoveTo == "" {
			files = append(files, session.DiffFile{Path: c.Path, OldText: c.OldText, NewText: *c.NewText, Existed: c.Existed})
		}
	}
	toolCall.Content = append(toolCall.Content, session.DiffContent(files)...)
	if pv := d.ReadablePreview(); len(toolCall.Content) == 0 && pv != "" {
		toolCall.Content = append(toolCall.Content, wire.Text(pv))
	}
	if d.Command != "" {
		toolCall.Content = append(toolCall.Content, wire.Text("$ "+d.Command))
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	err := a.s.call(ctx, methodRequestPermission, wire.RequestPermissionParams{
		SessionID: sessionID, ToolCall: toolCall, Options: approvalOptions(req),
	}, &res)
	if err != nil {
		if ctx.Err() != nil {
			return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
		}
		return session.ApprovalOutcome{}, fmt.Errorf("asking for permission: %w", err)
	}
	if res.Outcome.Outcome != "selected" {
		return session.ApprovalOutcome{Choice: session.ApprovalCancelled}, nil
	}
	switch c := session.ApprovalChoice(res.Outcome.OptionID); c {
	case session.AllowOnce, session.AllowAlways, session.RejectOnce, session.RejectAlways:
		return session.ApprovalOutcome{Choice: c}, nil
	}
	return session.ApprovalOutcome{Choice: session.RejectOnce, Feedback: "unknown option " + res.Outcome.OptionID}, nil
}

// acpRead reads a file through the client, which answers with its buffer
// when it has one open. A file that is not on disk is treated as missing
// without asking (the client has no buffer for a file that never existed).
// The text is marked Open only when edits go back through the client too:
// a client that reads but does not write has its files edited on disk.
// The text read is kept for the next edit's planning (acpPlanRead).
func (f *files) acpRead(ctx context.Context, abs string) (tools.FileText, bool, error) {
	f.s.mu.Lock()
	can := f.s.acp.readTextFile && f.s.dialect == DialectACP
	f.s.mu.Unlock()
	if !can || f.sessionID == "" {
		return tools.FileText{}, false, nil
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return tools.FileText{}, true, nil
	}
	if err == nil && fi.IsDir() {
		return tools.FileText{}, true, fmt.Errorf("%s is a directory, not a file", f.Display(abs))
	}
	var res struct {
		Content string `json:"content"`
	}
	if err := f.s.call(ctx, methodReadTextFile, wire.ReadTextFileParams{SessionID: f.sessionID, Path: abs}, &res); err != nil {
		return tools.FileText{}, true, fmt.Errorf("the editor could not read %s: %s", f.Display(abs), clientError(err))
	}
	ft := tools.FileText{Text: res.Content, Exists: true, Open: f.acpWrites()}
	if fi != nil {
		ft.Mode = fi.Mode().Perm()
	}
	if ft.Open { // only edits through the client plan on these (acpPlanRead)
		f.mu.Lock()
		f.acpReads[abs] = ft
		f.mu.Unlock()
	}
	return ft, true, nil
}

// acpPlanRead is the reader an edit plans against in the ACP dialect: the
// text the client gave for the path since the last edit, which is what the
// call's description (and so the permission request) showed, or a fresh
// read. Each edit consumes the texts and forgets the others (acpForget),
// so one read and one edit cost two fs/read_text_file calls, not three.
func (f *files) acpPlanRead(ctx context.Context, abs string) (tools.FileText, error) {
	f.mu.Lock()
	ft, ok := f.acpReads[abs]
	delete(f.acpReads, abs)
	f.mu.Unlock()
	if ok {
		return ft, nil
	}
	return f.Read(ctx, abs)
}

// acpForget drops the texts kept by acpRead, once an edit is done with
// them: the next edit reads again.
func (f *files) acpForget() {
	f.mu.Lock()
	clear(f.acpReads)
	f.mu.Unlock()
}

// clientError is the message of an error answer from the client. SDKs
// wrap a handler's failure as "Internal error" and put its own message in
// data (the TypeScript SDK under "details", the Go SDK under "error"), so
// that is where the reason a user can act on is.
func clientError(err error) string {
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		return err.Error()
	}
	var detail string
	if len(je.Data) > 0 {
		var str string
		var obj map[string]any
		switch {
		case json.Unmarshal(je.Data, &str) == nil:
			detail = str
		case json.Unmarshal(je.Data, &obj) == nil:
			for _, k := range []string{"message", "details", "error"} {
				if v, ok := obj[k].(string); ok && v != "" {
					detail = v
					break
				}
			}
		}
	}
	switch {
	case detail == "":
		return je.Message
	case je.Message == "" || je.Message == "Internal error":
		return detail
	}
	return je.Message + ": " + detail
}

// acpWrite delivers whole-file writes through fs/write_text_file, all or
// nothing: if one write fails, those already made are written back.
func (f *files) acpWrite(ctx context.Context, writes []tools.Change) error {
	var done []tools.Change
	for _, c := range writes {
		err := f.s.call(ctx, methodWriteTextFile, wire.WriteTextFileParams{SessionID: f.sessionID, Path: c.Path, Content: *c.NewText}, nil)
		if err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				if done[i].Existed {
					f.s.call(context.WithoutCancel(ctx), methodWriteTextFile, wire.WriteTextFileParams{SessionID: f.sessionID, Path: done[i].Path, Content: done[i].OldText}, nil)
				} else {
					os.Remove(done[i].Path)
				}
			}
			return &tools.DeliveryError{Path: f.Display(c.Path), Reason: "the editor did not write it: " + clientError(err)}
		}
		done = append(done, c)
	}
	return nil
}

// acpWrites reports whether edits go through fs/write_text_file.
func (f *files) acpWrites() bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.s.dialect == DialectACP && f.s.acp.writeTextFile && f.sessionID != ""
}
