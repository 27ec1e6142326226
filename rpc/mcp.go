package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// newMCPPool gives the connection's MCP servers what they take from it:
// the settings, the folders, the editor to call and the user to ask.
func newMCPPool(s *Server) *mcpbridge.Pool {
	return mcpbridge.NewPool(mcpbridge.PoolConfig{
		Logger: s.log, Version: s.opts.Version, Ctx: s.bgCtx, Go: s.ws.Go,
		Children: s.catchSignals, HideEnv: func() []string { return s.cfg.HiddenEnv() }, StateDir: s.stateDir,
		Roots: s.folders.Paths, Redact: s.redact,
		Caller: connCaller(s), LogMessage: s.logToClient, ShowMessage: s.showMessage,
		PromptsChanged: func() { s.acpcfg.sendAvailableCommands() },
		SignIn: func() mcpbridge.SignInWay {
			s.mu.Lock()
			defer s.mu.Unlock()
			switch {
			case s.dialect == DialectACP:
				return mcpbridge.SignInTerminal
			case s.caps.showDocument:
				return mcpbridge.SignInShowDocument
			}
			return mcpbridge.SignInMessage
		},
		// The settings' servers have no session, so an ACP client, whose
		// questions belong to one, cannot be asked.
		CanAsk: func() (can, freeText bool) {
			ch := s.approvals.Channels()
			return ch.CanAsk(), ch.FreeText()
		},
		Ask: func(ctx context.Context, q string, options []string) (string, bool, error) {
			return s.approvals.Question(ctx, "", q, options)
		},
		Sampling: func() bool { return s.CurrentSettings().MCPSampling },
		Lend: func(ctx context.Context, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
			return lendModel(ctx, s.newProviderWith, s.redact, req)
		},
	})
}

// mcpError is what a client is told when its MCP servers could not
// start: a configuration that does not parse is its params' fault.
func mcpError(err error) error {
	var ce *mcpbridge.ConfigError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return invalidParams("%s", ce.Error())
	}
	return jsonrpc2.Errorf(jsonrpc2.InternalError, "%v", err)
}

// lendModel sends an MCP server's request, which the user allowed, to the
// model the settings name, without tools, its reply bounded.
func lendModel(ctx context.Context, newProvider func(string) (provider.Provider, error), redact func(string) string, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	p, err := newProvider("")
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("no model to lend: %s", redact(err.Error()))
	}
	msgs := make([]provider.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		role := provider.RoleUser
		if m.Role == "assistant" {
			role = provider.RoleAssistant
		}
		msgs = append(msgs, provider.Message{Role: role, Parts: []provider.Part{provider.TextPart(m.Text)}})
	}
	stream, err := p.Stream(ctx, provider.Request{System: req.System, Messages: msgs, MaxTokens: req.MaxTokens})
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("the model: %s", redact(err.Error()))
	}
	reply, err := provider.Collect(stream)
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("the model: %s", redact(err.Error()))
	}
	stop := "endTurn"
	if reply.Stop == provider.StopMaxTokens {
		stop = "maxTokens"
	}
	return mcpbridge.SampleResult{Text: reply.Text(), Model: p.Model(), StopReason: stop}, nil
}

// startMCP starts the MCP servers a session/new or session/load named,
// owned by that session (nil when it named none).
func startMCP(p *mcpbridge.Pool, raw []json.RawMessage, cwd string) (*mcpbridge.Manager, error) {
	m, err := p.Start(raw, cwd)
	return m, mcpError(err)
}

// mcpOf is the MCP servers ls named itself; nil for none, or no session.
func mcpOf(ls *liveSession) *mcpbridge.Manager {
	if ls == nil {
		return nil
	}
	return ls.mcp
}
