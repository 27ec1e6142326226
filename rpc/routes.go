package rpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/wire"
)

// A route is how one method is served: in which dialects, whether it
// waits for initialize, and the handler. Every method the daemon answers
// is in routes; the dispatcher (Server.handle) applies the lifecycle rules
// once for all of them.
type route struct {
	dialects dialectSet
	// early routes are served before initialize (initialize itself, exit).
	early bool
	// afterShutdown routes are served after shutdown (only exit).
	afterShutdown bool
	handle        handler
}

// handler serves one request or notification. Notifications return a nil
// result; an error of theirs is reported, never answered.
type handler func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error)

type dialectSet uint8

const (
	inLSP dialectSet = 1 << iota
	inACP
	inBoth = inLSP | inACP
)

func (d dialectSet) has(x Dialect) bool {
	switch x {
	case DialectLSP:
		return d&inLSP != 0
	case DialectACP:
		return d&inACP != 0
	}
	return false
}

// Adapters from the handlers' own signatures: most decode their params
// and neither wait nor need the request.
func params(f func(*Server, []byte) (any, error)) handler {
	return func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) { return f(s, req.Params()) }
}

func notice(f func(*Server, []byte) error) handler {
	return func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) { return nil, f(s, req.Params()) }
}

func nothing(*Server, context.Context, *jsonrpc2.Request) (any, error) { return nil, nil }

// routes is every method served, by dialect: a method both dialects carry
// with different semantics (initialize, session/new) has one entry each.
// Sized for the routes below, so that building the table at start-up
// does not grow it as it goes.
var routes = map[Dialect]map[string]route{DialectLSP: make(map[string]route, 40), DialectACP: make(map[string]route, 24)}

func serve(method string, d dialectSet, h handler, opts ...func(*route)) {
	r := route{dialects: d, handle: h}
	for _, o := range opts {
		o(&r)
	}
	for _, x := range []Dialect{DialectLSP, DialectACP} {
		if d.has(x) {
			if _, dup := routes[x][method]; dup {
				panic("rpc: two routes for " + method)
			}
			routes[x][method] = r
		}
	}
}

func early(r *route)         { r.early = true }
func afterShutdown(r *route) { r.afterShutdown = true }

func init() {
	// Lifecycle.
	serve(methodInitialize, inLSP, func(s *Server, _ context.Context, req *jsonrpc2.Request) (any, error) {
		return s.initialize(req.ID(), req.Params())
	}, early)
	serve(methodInitialize, inACP, params((*Server).acpInitialize), early)
	serve(methodExit, inLSP, func(s *Server, _ context.Context, _ *jsonrpc2.Request) (any, error) { s.exit(); return nil, nil }, early, afterShutdown)
	serve(methodShutdown, inLSP, func(s *Server, ctx context.Context, _ *jsonrpc2.Request) (any, error) { return s.shutdown(ctx) })
	serve(methodInitialized, inLSP, nothing)
	serve(methodSetTrace, inLSP, nothing)
	serve(methodAuthenticate, inACP, func(*Server, context.Context, *jsonrpc2.Request) (any, error) { return wire.Empty{}, nil })
	serve(methodCancel, inBoth, notice((*Server).cancelRequest))
	serve(methodACPCancelRequest, inACP, notice((*Server).cancelRequest))
	serve(methodProgressCancel, inLSP, notice(progressCancel))

	// Text synchronisation and workspace.
	serve(methodDidOpen, inLSP, syncNotice((*textSync).didOpen))
	serve(methodDidChange, inLSP, syncNotice((*textSync).didChange))
	serve(methodDidClose, inLSP, syncNotice((*textSync).didClose))
	serve(methodDidSave, inLSP, syncNotice((*textSync).didSave))
	serve(methodDiagnostics, inLSP, syncNotice((*textSync).didDiagnostics))
	serve(methodWillSave, inLSP, nothing)
	serve(methodDidChangeWF, inLSP, syncNotice((*textSync).didChangeFolders))
	serve(methodDidChangeCfg, inLSP, notice((*Server).didChangeConfiguration))
	serve(methodExecCommand, inLSP, commandsRoute((*commandRunner).serveExecuteCommand))
	serve(methodCodeAction, inLSP, syncCall((*textSync).codeActions))

	// Tools and approvals.
	serve(methodCallTool, inLSP, toolCallsRoute((*toolCalls).serveCallTool))
	serve(methodTools, inLSP, toolCallsRoute((*toolCalls).serveTools))
	serve(methodApprovalResponse, inLSP, params(approvalResponse))

	// Sessions.
	serve(methodSessionNew, inLSP, params(sessionsCall((*sessions).serveNew)))
	serve(methodSessionNew, inACP, (*Server).acpSessionNew)
	serve(methodSessionLoad, inLSP, params(sessionsCall((*sessions).serveLoad)))
	serve(methodSessionLoad, inACP, configCall((*sessionConfig).acpSessionLoadConfig))
	serve(methodSessionPrompt, inBoth, func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
		return s.turns.servePrompt(ctx, req)
	})
	serve(methodSessionCancel, inBoth, notice(func(s *Server, raw []byte) error { return s.sess.serveCancel(raw) }))
	serve(methodSessionSetMode, inLSP, params(sessionsCall((*sessions).serveSetMode)))
	serve(methodSessionSetMode, inACP, configParams((*sessionConfig).acpSetMode))
	serve(methodSetConfigOption, inACP, configParams((*sessionConfig).setConfigOption))
	serve(methodSessionList, inBoth, params(sessionsCall((*sessions).serveList)))
	serve(methodCloseSession, inLSP, func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
		return s.sess.serveClose(ctx, req)
	})
	serve(methodForkSession, inLSP, params(sessionsCall((*sessions).serveFork)))
	serve(methodACPSessionFork, inACP, func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
		return s.sess.serveACPFork(ctx, req)
	})
	serve(methodSessionClose, inACP, configCall((*sessionConfig).acpCloseConfig))
	serve(methodInstructions, inLSP, params(sessionsCall((*sessions).serveInstructions)))
	serve(methodACPInstructions, inACP, params(sessionsCall((*sessions).serveInstructions)))
	serve(methodModels, inLSP, configCall((*sessionConfig).listModels))
	serve(methodACPModels, inACP, configCall((*sessionConfig).listModels))
	serve(methodCheckpoints, inLSP, params(listCheckpoints))
	serve(methodACPCheckpoints, inACP, params(listCheckpoints))
	serve(methodCheckpointDiff, inLSP, checkpointDiff)
	serve(methodACPCheckpointDiff, inACP, checkpointDiff)
	serve(methodRestore, inLSP, restore)
	serve(methodACPRestore, inACP, restore)
	serve(methodCompact, inLSP, compact)
	serve(methodACPCompact, inACP, compact)
}

func compact(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
	return s.turns.serveCompact(ctx, req, req.Params())
}
