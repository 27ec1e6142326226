package rpc

import (
	"context"
	"encoding/json"
	"log/slog"

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

// toolCalls is the part that runs the editor's own tool calls
// (cline/callTool), lists the tools a mode enables (cline/tools) and
// tells the editor what a tool edited. It holds only what those take from
// the connection.
type toolCalls struct {
	// session is a live session by id (sessions.get).
	session func(id string) (*liveSession, error)
	// editorSession is the editor's own session for a mode, made on
	// first use and saved nowhere.
	editorSession func(mode, cwd string) (*liveSession, error)
	// mode is the settings' mode, for a call that names no session and
	// no mode.
	mode    func() string
	folders *workspace.Folders
	buffers *workspace.Buffers
	// scope is Server.requestScope: a call waits on the editor beyond
	// its pooled request context.
	scope func(ctx context.Context, id jsonrpc2.ID) (context.Context, func())
	// busy marks a tool call under way, for the checkpoints.
	busy func() func()
	// diffs is how the client takes an edit's diff; read per report,
	// since the dialect and the capabilities come after the part.
	diffs  func() diffReport
	client editNotifier
	logMsg func(ctx context.Context, typ wire.MessageType, msg string)
	log    *slog.Logger
}

// editNotifier is what toolCalls sends to the editor: notifications only.
type editNotifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// diffReport is how an applied edit reaches the client.
type diffReport uint8

const (
	diffsInContent diffReport = iota // ACP: the diff is tool call content
	diffsAsCline                     // cline/diff (experimental.cline.diffs)
	diffsAsLog                       // window/logMessage, for the rest
)

// newToolCalls gives the part what it uses of s.
func newToolCalls(s *Server) *toolCalls {
	return &toolCalls{
		session:       s.sess.get,
		editorSession: s.sess.Editor,
		mode:          func() string { return s.CurrentSettings().Mode },
		folders:       s.folders,
		buffers:       s.buffers,
		scope:         s.requestScope,
		busy:          func() func() { return s.ckpt.ToolCallBusy() },
		diffs: func() diffReport {
			s.mu.Lock()
			viaCline := s.caps.clineDiffs
			s.mu.Unlock()
			switch {
			case s.dialect == DialectACP:
				return diffsInContent
			case viaCline:
				return diffsAsCline
			}
			return diffsAsLog
		},
		client: connCaller(s),
		logMsg: s.logToClient,
		log:    s.log,
	}
}

// toolCallsRoute makes a handler of the toolCalls part a route's.
func toolCallsRoute(f func(*toolCalls, context.Context, *jsonrpc2.Request) (any, error)) handler {
	return func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
		return f(s.toolCalls, ctx, req)
	}
}

// serveCallTool serves cline/callTool: a tool call from the editor. It
// runs in the session it names — that session's mode, rules, tools and
// files — or, without one, in the editor's own session for the mode, and
// takes the one path every call takes (session.Session.CallTool).
func (t *toolCalls) serveCallTool(ctx context.Context, req *jsonrpc2.Request) (any, error) {
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
	ls, err := t.toolSession(p.SessionID, p.Mode)
	if err != nil {
		return nil, err
	}
	// The call waits on the editor (approval, applyEdit): release the read
	// loop so the answers can be read.
	jsonrpc2.Async(ctx)
	ctx, release := t.scope(ctx, req.ID())
	defer release()
	busy := t.busy()
	r := ls.CallTool(ctx, p.Name, p.Arguments)
	busy()
	if r.Err != nil {
		t.log.Error("tool fault", "tool", p.Name, "err", r.Err)
	}
	return wire.CallToolResult{Content: r.Result.Content, IsError: r.Result.IsError || r.State != session.StateSuccess}, nil
}

// toolSession finds the session an editor-driven call runs in: the one
// named, or the editor's own session for mode (made on first use, saved
// nowhere).
func (t *toolCalls) toolSession(id, mode string) (*liveSession, error) {
	if id != "" {
		ls, err := t.session(id)
		if err != nil {
			return nil, err
		}
		if mode != "" && mode != ls.Mode() {
			return nil, invalidParams("mode: session %s is in %s mode; switch it with session/set_mode", id, ls.Mode())
		}
		return ls, nil
	}
	if mode == "" {
		mode = t.mode()
	}
	if _, ok := tools.PresetFor(mode); !ok {
		return nil, invalidParams("mode: unknown mode %q", mode)
	}
	cwd := ""
	if p := t.folders.Paths(); len(p) > 0 {
		cwd = p[0]
	}
	ls, err := t.editorSession(mode, cwd)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "tools unavailable: %v", err)
	}
	return ls, nil
}

// reportEdits sends cline/diff for each applied edit, or window/logMessage
// to clients without experimental.cline.diffs.
func (t *toolCalls) reportEdits(ctx context.Context, sessionID string, f *delivery.Files, callID string, edits []tools.FileEdit) {
	how := t.diffs()
	if how == diffsInContent {
		return
	}
	for _, e := range edits {
		// Tools report display paths, which resolve back to the file.
		abs := e.Path
		if p, err := f.Resolve(e.Path); err == nil {
			abs = p
		}
		uri := workspace.PathToURI(abs)
		var version *int32
		if snap, ok := t.buffers.GetPath(abs); ok {
			uri, version = snap.URI, &snap.Version
		}
		if how == diffsAsLog {
			t.logMsg(ctx, wire.MessageInfo, e.Diff)
			continue
		}
		t.client.Notify(ctx, methodClineDiff, wire.DiffParams{
			SessionID: sessionID, ToolCallID: callID, URI: uri, Version: version,
			Diff: e.Diff, Added: e.Added, Removed: e.Removed,
		})
	}
}

// toolsParams are cline/tools' params.
type toolsParams struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
	Format    string `json:"format"`
}

// serveTools serves cline/tools: the tools a mode enables, rendered as a
// provider receives them, from the session named or the editor's own.
func (t *toolCalls) serveTools(_ context.Context, req *jsonrpc2.Request) (any, error) {
	var p toolsParams
	if err := decodeParams(req.Params(), &p); err != nil {
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
		ls, err = t.session(p.SessionID)
	} else {
		ls, err = t.toolSession("", p.Mode)
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
