package rpc

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// toolHost is what runs tools for one connection: the registry with every
// built-in wired to this connection's files, and the policy built from the
// settings. Sessions share it; each has its own files view.
type toolHost struct {
	once     sync.Once
	err      error
	registry *tools.Registry
	files    *files // the editor's own calls (cline/callTool without a session)
	policy   *session.Policy
	calls    int
	mu       sync.Mutex
}

// host returns the connection's tool host, built on first use.
func (s *Server) host() (*toolHost, error) {
	h := &s.tools
	h.once.Do(func() {
		h.files = s.newFiles()
		h.registry = tools.NewRegistry()
		if err := h.registry.RegisterBuiltins(builtinImpls(h.files)); err != nil {
			h.err = err
			return
		}
		h.policy, h.err = session.NewPolicy(s.policyConfig())
	})
	return h, h.err
}

// builtinImpls wires the implemented built-in tools to files.
func builtinImpls(f tools.Files) map[string]tools.BuildFunc {
	impls := map[string]tools.BuildFunc{}
	for name, b := range tools.EditTools(f) {
		impls[name] = b
	}
	for name, b := range tools.WorkspaceTools(f) {
		impls[name] = b
	}
	return impls
}

// policyConfig turns the settings into the policy's configuration.
func (s *Server) policyConfig() session.PolicyConfig {
	st := s.CurrentSettings()
	var cfg session.PolicyConfig
	a := st.Approvals
	cfg.Approvals = session.Approvals{
		Read: session.Decision(a["read"]), Edit: session.Decision(a["edit"]),
		Execute: session.Decision(a["execute"]), Fetch: session.Decision(a["fetch"]), MCP: session.Decision(a["mcp"]),
	}
	for _, r := range st.Rules {
		cfg.Rules = append(cfg.Rules, session.Rule{Tool: r.Tool, ArgPattern: r.ArgPattern,
			Decision: session.Decision(r.Decision), Modes: r.Modes, Priority: r.Priority})
	}
	return cfg
}

// toolContext is the tools.Context for a mode.
func (s *Server) toolContext(mode string, f *files) tools.Context {
	st := s.CurrentSettings()
	ctx := tools.Context{Mode: mode, Family: tools.FamilyGeneric, CWD: f.Root(), OS: runtime.GOOS, Shell: tools.ShellFor(""), NativeTools: true}
	if st.Provider != nil {
		ctx.ApplyPatch = tools.TrainedOnApplyPatch(st.Provider.Model)
	}
	return ctx
}

// callTool serves cline/callTool: a tool call from the editor, through the
// same validate → approve → execute path as the model's calls.
func (s *Server) callTool(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	raw := req.Params()
	var p struct {
		SessionID string          `json:"sessionId"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Mode      string          `json:"mode"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("name", p.Name); err != nil {
		return nil, err
	}
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage("{}")
	}
	h, err := s.host()
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "tools unavailable: %v", err)
	}
	mode := p.Mode
	if mode == "" {
		mode = s.CurrentSettings().Mode
	}
	preset, ok := tools.PresetFor(mode)
	if !ok {
		return nil, invalidParams("mode: unknown mode %q", mode)
	}
	// The call waits on the editor (approval, applyEdit): release the read
	// loop so the answers can be read.
	jsonrpc2.Async(ctx)
	ctx, release := s.requestScope(ctx, req.ID())
	defer release()

	f := h.files
	enabled := h.registry.Enabled(preset, s.toolContext(mode, f))
	h.mu.Lock()
	h.calls++
	callID := "editor-" + strconv.Itoa(h.calls)
	h.mu.Unlock()
	sched := session.NewScheduler(session.SchedulerConfig{
		Mode:     mode,
		Tools:    func(name string) (tools.Tool, bool) { return tools.Pick(enabled, name) },
		Exists:   func(name string) bool { _, ok := h.registry.Lookup(name, tools.FamilyGeneric); return ok },
		Policy:   h.policy,
		Approver: s.approvals.approver(p.SessionID),
	})
	res := sched.Run(ctx, []session.Call{{ID: callID, Name: p.Name, Args: p.Arguments}})
	r := res[0]
	if r.Err != nil {
		s.log.Error("tool fault", "tool", p.Name, "err", r.Err)
	}
	s.reportEdits(ctx, p.SessionID, callID, r.Result.Edits)
	return map[string]any{"content": r.Result.Content, "isError": r.Result.IsError}, nil
}

// reportEdits sends cline/diff for each applied edit, or window/logMessage
// to clients without experimental.cline.diffs.
func (s *Server) reportEdits(ctx context.Context, sessionID, callID string, edits []tools.FileEdit) {
	s.mu.Lock()
	viaCline := s.caps.clineDiffs
	s.mu.Unlock()
	if s.dialect == DialectACP {
		return // ACP clients get the diff as tool call content
	}
	for _, e := range edits {
		// Tools report display paths, which resolve back to the file.
		abs := e.Path
		if h, err := s.host(); err == nil {
			if p, err := h.files.Resolve(e.Path); err == nil {
				abs = p
			}
		}
		uri := workspace.PathToURI(abs)
		var version any
		if snap, ok := s.buffers.GetPath(abs); ok {
			uri, version = snap.URI, snap.Version
		}
		if !viaCline {
			s.logToClient(ctx, 3, e.Diff)
			continue
		}
		s.conn.Notify(ctx, methodClineDiff, map[string]any{
			"sessionId": sessionID, "toolCallId": callID, "uri": uri, "version": version,
			"diff": e.Diff, "added": e.Added, "removed": e.Removed,
		})
	}
}

// renderTools serves cline/tools.
func (s *Server) renderTools(raw []byte) (any, error) {
	var p struct {
		Mode   string `json:"mode"`
		Format string `json:"format"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	switch p.Format {
	case tools.FormatAnthropic, tools.FormatOpenAI, tools.FormatGemini, tools.FormatXML:
	default:
		return nil, invalidParams("format: must be anthropic, openai, gemini or xml, got %q", p.Format)
	}
	mode := p.Mode
	if mode == "" {
		mode = s.CurrentSettings().Mode
	}
	preset, ok := tools.PresetFor(mode)
	if !ok {
		return nil, invalidParams("mode: unknown mode %q", mode)
	}
	h, err := s.host()
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "tools unavailable: %v", err)
	}
	tctx := s.toolContext(mode, h.files)
	extra, _ := s.mcpFor(nil)
	mcpTools := extra()
	tctx.HasMCP = len(mcpTools) > 0
	enabled := append(h.registry.Enabled(preset, tctx), preset.Filter(tctx, mcpTools)...)
	out, err := tools.Render(p.Format, enabled, tctx)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "rendering tools: %v", err)
	}
	if p.Format == tools.FormatXML {
		return map[string]any{"format": p.Format, "tools": string(out)}, nil
	}
	return map[string]any{"format": p.Format, "tools": json.RawMessage(out)}, nil
}
