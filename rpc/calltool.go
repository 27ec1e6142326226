package rpc

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// builtinImpls wires the implemented built-in tools to files; commands
// run without the variables hidden names (the model's key among them),
// background ones in bg (none when nil), whose output is read without
// splitting a key (keyStart), confined by sb's policy when the session's
// approval level is sandbox; foreground commands run in the client's
// terminal term when it is not nil.
func builtinImpls(f tools.Files, hidden []string, bg *tools.Background, keyStart func(string) int, sb func() sandbox.Policy, term tools.ClientTerminal) map[string]tools.BuildFunc {
	impls := map[string]tools.BuildFunc{}
	for name, b := range tools.EditTools(f) {
		impls[name] = b
	}
	opts := []tools.WorkspaceOption{tools.HideEnv(hidden...), tools.KeyStart(keyStart), tools.SandboxPolicy(sb)}
	if bg != nil {
		opts = append(opts, tools.BackgroundCommands(bg))
	}
	if term != nil {
		opts = append(opts, tools.ClientTerminals(term))
	}
	for name, b := range tools.WorkspaceTools(f, opts...) {
		impls[name] = b
	}
	return impls
}

// policyConfig turns the settings into the policy's configuration, with
// approvals.level over the categories (session.ApplyLevel); whether a
// sandbox can confine commands is sessionPolicy's to say, once a
// session's own level is known.
func policyConfig(st settings.Settings) session.PolicyConfig {
	var cfg session.PolicyConfig
	a := st.Approvals
	cfg.Approvals = session.Approvals{
		Read: session.Decision(a["read"]), Edit: session.Decision(a["edit"]),
		Execute: session.Decision(a["execute"]), Fetch: session.Decision(a["fetch"]), MCP: session.Decision(a["mcp"]),
	}
	if l := a["level"]; l != "" {
		cfg.Approvals.ApplyLevel(session.Level(l))
	}
	for _, r := range st.Rules {
		cfg.Rules = append(cfg.Rules, session.Rule{Tool: r.Tool, ArgPattern: r.ArgPattern,
			Decision: session.Decision(r.Decision), Modes: r.Modes, Priority: r.Priority})
	}
	return cfg
}

// callToolParams are cline/callTool's params. Mode is beyond PROTOCOL.md:
// without a session it picks the mode of the editor's own session.
type callToolParams struct {
	SessionID string          `json:"sessionId"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Mode      string          `json:"mode"`
}

// callTool serves cline/callTool: a tool call from the editor. It runs in
// the session it names — that session's mode, rules, tools and files — or,
// without one, in the editor's own session for the mode, and takes the one
// path every call takes (session.Session.CallTool).
func (s *Server) callTool(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p callToolParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("name", p.Name); err != nil {
		return nil, err
	}
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage("{}")
	}
	ls, err := s.toolSession(p.SessionID, p.Mode)
	if err != nil {
		return nil, err
	}
	// The call waits on the editor (approval, applyEdit): release the read
	// loop so the answers can be read.
	jsonrpc2.Async(ctx)
	ctx, release := s.requestScope(ctx, req.ID())
	defer release()
	busy := s.ckpt.ToolCallBusy()
	r := ls.CallTool(ctx, p.Name, p.Arguments)
	busy()
	if r.Err != nil {
		s.log.Error("tool fault", "tool", p.Name, "err", r.Err)
	}
	return wire.CallToolResult{Content: r.Result.Content, IsError: r.Result.IsError || r.State != session.StateSuccess}, nil
}

// toolSession finds the session an editor-driven call runs in: the one
// named, or the editor's own session for mode (made on first use, saved
// nowhere).
func (s *Server) toolSession(id, mode string) (*liveSession, error) {
	if id != "" {
		ls, err := s.getSession(id)
		if err != nil {
			return nil, err
		}
		if mode != "" && mode != ls.Mode() {
			return nil, invalidParams("mode: session %s is in %s mode; switch it with session/set_mode", id, ls.Mode())
		}
		return ls, nil
	}
	if mode == "" {
		mode = s.CurrentSettings().Mode
	}
	if _, ok := tools.PresetFor(mode); !ok {
		return nil, invalidParams("mode: unknown mode %q", mode)
	}
	cwd := ""
	if p := s.folders.Paths(); len(p) > 0 {
		cwd = p[0]
	}
	ls, err := s.sess.Editor(mode, cwd)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "tools unavailable: %v", err)
	}
	return ls, nil
}

// reportEdits sends cline/diff for each applied edit, or window/logMessage
// to clients without experimental.cline.diffs.
func (s *Server) reportEdits(ctx context.Context, sessionID string, f *delivery.Files, callID string, edits []tools.FileEdit) {
	s.mu.Lock()
	viaCline := s.caps.clineDiffs
	s.mu.Unlock()
	if s.dialect == DialectACP {
		return // ACP clients get the diff as tool call content
	}
	for _, e := range edits {
		// Tools report display paths, which resolve back to the file.
		abs := e.Path
		if p, err := f.Resolve(e.Path); err == nil {
			abs = p
		}
		uri := workspace.PathToURI(abs)
		var version *int32
		if snap, ok := s.buffers.GetPath(abs); ok {
			uri, version = snap.URI, &snap.Version
		}
		if !viaCline {
			s.logToClient(ctx, wire.MessageInfo, e.Diff)
			continue
		}
		s.conn.Notify(ctx, methodClineDiff, wire.DiffParams{
			SessionID: sessionID, ToolCallID: callID, URI: uri, Version: version,
			Diff: e.Diff, Added: e.Added, Removed: e.Removed,
		})
	}
}

// renderTools serves cline/tools: the tools a mode enables, rendered as a
// provider receives them, from the session named or the editor's own.
func (s *Server) renderTools(raw []byte) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		Mode      string `json:"mode"`
		Format    string `json:"format"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	switch p.Format {
	case toolspec.FormatAnthropic, toolspec.FormatOpenAI, toolspec.FormatGemini, toolspec.FormatXML:
	default:
		return nil, invalidParams("format: must be anthropic, openai, gemini or xml, got %q", p.Format)
	}
	var ls *liveSession
	var err error
	if p.SessionID != "" {
		ls, err = s.getSession(p.SessionID)
	} else {
		ls, err = s.toolSession("", p.Mode)
	}
	if err != nil {
		return nil, err
	}
	mode := p.Mode
	if mode == "" {
		mode = ls.Mode()
	}
	tctx, enabled, err := ls.EnabledTools(mode)
	if err != nil {
		return nil, invalidParams("mode: %v", err)
	}
	out, err := tools.Render(p.Format, enabled, tctx)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "rendering tools: %v", err)
	}
	if p.Format == toolspec.FormatXML {
		return wire.ToolsResult{Format: p.Format, Tools: string(out)}, nil
	}
	return wire.ToolsResult{Format: p.Format, Tools: json.RawMessage(out)}, nil
}

// hiddenEnv names the variables no child process gets besides those
// internal/proc always keeps out (any *_API_KEY), under the settings in
// force.
func (s *Server) hiddenEnv() []string { return s.cfg.HiddenEnv() }
