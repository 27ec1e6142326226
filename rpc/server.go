// Package rpc is the daemon's connection to an editor: it detects the wire
// dialect, frames JSON-RPC over stdio, runs the LSP lifecycle, feeds text
// synchronisation into the workspace mirror and routes every method to the
// code that owns it. One Server serves one connection and owns all of its
// state.
package rpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/approval"
	"github.com/cline-ls/cline-ls/checkpoint/keeper"
	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// Options configure a Server.
type Options struct {
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported in serverInfo.
	Version string
	// Getenv reads the environment for settings; nil means no variables.
	Getenv func(string) string
	// ToolNames lists the tools announced in experimental.cline.tools.
	ToolNames func() []string
	// HTTPClient, when set, carries the model providers' requests (tests
	// point it at fake servers).
	HTTPClient *http.Client
	// IdleRelease is how long a session may sit unused before it is
	// released; zero means 30 minutes.
	IdleRelease time.Duration
	// Signals end serving the way the end of input does (turns
	// cancelled, histories flushed, children stopped). They are caught
	// from the first message after initialize on (see catchSignals).
	Signals []os.Signal
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server serves one editor connection.
type Server struct {
	opts Options
	log  *slog.Logger

	conn    jsonrpc2.Conn
	stream  *stream
	dialect Dialect
	peer    atomic.Pointer[peer] // see client
	// inflight holds the cancel functions of requests still running, for
	// $/cancelRequest and $/cancel_request. (jsonrpc2.CancelHandler cannot
	// be used: it derives contexts from pooled request contexts.)
	inflightMu sync.Mutex
	inflight   map[jsonrpc2.ID]context.CancelFunc

	mu       sync.Mutex
	state    lifecycle
	enc      workspace.Encoding
	caps     clientCaps
	acp      acpCaps
	cfg      *settings.Store
	exitCode int
	exited   chan struct{}
	exitOnce sync.Once
	// inputEnded is closed when reading the client's input fails or ends.
	inputEnded chan struct{}
	// ended is endOfConnection's channel, made on first use.
	endOnce   sync.Once
	ended     chan struct{}
	inputOnce sync.Once

	folders    *workspace.Folders
	buffers    *workspace.Buffers
	diags      *workspace.Diagnostics // the editor's, per open buffer (cline/diagnostics)
	ws         *workspace.Live
	text       textSync
	locks      workspace.FileLocks // serialise edits per file across sessions
	sess       *sessions
	turns      *turns
	toolCalls  *toolCalls
	commands   *commandRunner
	approvals  *approval.Broker
	hookTrust  *hooks.Trust
	mcp        *mcpbridge.Pool
	ckpt       *keeper.Keeper
	acpcfg     *sessionConfig
	models     settings.Models // the sessions' own
	modelLists *settings.ModelLists
	delivery   *delivery.Delivery
	bgCtx      context.Context
	bgCancel   context.CancelFunc
	// endServe ends Serve; set before its connection reads anything.
	endServe context.CancelFunc
	sigOnce  sync.Once
	// sandboxWarn: the user was told that the sandbox level is set and
	// nothing here confines commands.
	sandboxWarn sandboxWarning
}

// clientCaps is what the daemon needs to know about the client.
type clientCaps struct {
	clineApprovals   bool
	clineDiffs       bool
	clineQuestions   bool
	clineDiags       bool     // sends cline/diagnostics (PROTOCOL.md §10)
	lsp              []string // answers cline/lspRequest for these (PROTOCOL.md §11)
	applyEdit        bool
	showMessageReq   bool
	showDocument     bool // window/showDocument
	workDoneProgress bool
	docChanges       bool
	checksVersions   bool   // see checksVersions
	name             string // clientInfo.name, for messages that name the client's own settings
}

// NewServer returns a server ready to Serve one connection.
func NewServer(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	s := &Server{
		opts:    opts,
		log:     log,
		enc:     workspace.UTF16,
		exited:  make(chan struct{}),
		folders: &workspace.Folders{},
		buffers: workspace.NewBuffers(),
		diags:   workspace.NewDiagnostics(),
		cfg:     newSettingsStore(opts.Getenv, os.ReadFile),

		inputEnded: make(chan struct{}),
	}
	// Logs are scrubbed of keys like everything the server sends.
	s.log = slog.New(redactingHandler{h: log.Handler(), redact: s.redact})
	s.modelLists = settings.NewModelLists(opts.Getenv, opts.HTTPClient, s.log)
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	s.ws = newLive(s)
	s.text = newTextSync(s)
	s.delivery = newDelivery(s)
	s.approvals = newApprovals(s)
	s.ckpt = newCheckpoints(s)
	s.mcp = newMCPPool(s)
	s.hookTrust = newHookTrust(s)
	s.sess = newSessions(s)
	s.turns = newTurns(s)
	s.acpcfg = newSessionConfig(s)
	s.toolCalls = newToolCalls(s)
	s.commands = newCommands(s)
	return s
}

// Buffers is the server's mirror of the client's open documents.
func (s *Server) Buffers() *workspace.Buffers { return s.buffers }

// Folders is the server's set of workspace folders.
func (s *Server) Folders() *workspace.Folders { return s.folders }

// Encoding is the negotiated position encoding.
func (s *Server) Encoding() workspace.Encoding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enc
}

// Serve reads from r and writes to w until the client sends exit, the input
// ends, or ctx is cancelled. It returns the process exit code LSP asks
// for: 0 after shutdown then exit (or at end of input), 1 for exit without
// shutdown. Errors are transport failures; bad frames are answered and do
// not stop serving.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) (int, error) {
	// The input ending (the editor gone) cancels running turns at once:
	// the connection itself reports done only once every handler has
	// returned, and a turn's handler returns only when the turn ends.
	br := bufio.NewReaderSize(&endSignal{r: r, ended: s.inputEnded, once: &s.inputOnce, last: s.releaseAtInputEnd}, 64<<10)
	d, err := DetectDialect(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		return 1, err
	}
	s.dialect = d
	ctx, s.endServe = context.WithCancel(ctx)
	defer s.endServe()
	s.log.Info("serving", "dialect", d.String())
	var closer io.Closer
	if c, ok := r.(io.Closer); ok {
		closer = c
	}
	st := newStream(d, br, w, closer, func(err error) {
		s.log.Warn("rejected frame", "err", err)
	})
	st.redact = secretKeys(s.cfg.Secrets).redactFrame
	s.stream = st
	s.conn = jsonrpc2.NewConn(st, jsonrpc2.WithCodec(codec{}))
	choosePeer(s, d, lsppeer.Caps{}, acppeer.Caps{})
	s.conn.Go(ctx, s.handle)

	// The input ending cancels running turns at once (runPrompt watches
	// it); the connection is done once the requests already read are
	// answered.
	select {
	case <-s.conn.Done():
	case <-s.exited:
	case <-ctx.Done():
	}
	s.client().ReleaseTerminals(context.Background())
	s.closeConn() // also stops the stream's writer, after a flush
	s.shutdownSessions()
	s.stopWorkspace()
	s.ckpt.Close()
	s.mu.Lock()
	code := s.exitCode
	s.mu.Unlock()
	if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !isClosedErr(err) {
		return code, err
	}
	return code, nil
}

// closeConn tears the connection down, waiting a bounded time: closing
// os.Stdin does not interrupt a read already blocked on it, so the read
// loop may never notice. The process is about to exit in that case, and
// waiting for it would hang the editor's "stop client".
func (s *Server) closeConn() {
	done := make(chan struct{})
	go func() {
		s.conn.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		s.log.Debug("transport did not close in time; returning anyway")
	}
}

func isClosedErr(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, jsonrpc2.ErrClientClosing) ||
		strings.Contains(err.Error(), "closed")
}

// shutdownSessions cancels running turns and flushes their histories when
// the connection ends or shuts down.
func (s *Server) shutdownSessions() { s.sess.Shutdown() }

// handle is the connection's one handler. It runs inline on the read loop,
// so notifications (text synchronisation above all) are applied in the
// order they arrived; requests that wait on the client release the loop
// with jsonrpc2.Async first.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (res any, err error) {
	// req.Method() borrows the read buffer, which the next frame is read
	// into once the handler returns or releases the loop (jsonrpc2.Async):
	// a copy, since method outlives both (a panic after the release, a log
	// record kept by its handler).
	method := strings.Clone(req.Method())
	defer func() {
		// A bug in one handler fails its request, not the daemon.
		if p := recover(); p != nil {
			s.log.Error("handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, p)
			if !req.IsCall() {
				err = nil
			}
		}
	}()
	s.log.Debug("received", "method", method, "call", req.IsCall())

	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	r, known := routes[s.dialect][method]
	switch {
	case state == stateNew && !(known && r.early):
		if req.IsCall() {
			return nil, jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "server not initialized: send initialize before %s", method)
		}
		return nil, nil // LSP: drop notifications before initialize
	case state == stateShutdown && !(known && r.afterShutdown):
		if req.IsCall() {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: the server is shut down; only exit is accepted")
		}
		return nil, nil
	case !known:
		if req.IsCall() {
			return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
		}
		if !strings.HasPrefix(method, "$/") {
			s.log.Debug("ignored notification", "method", method)
		}
		return nil, nil
	}
	if state != stateNew {
		s.catchSignals()
	}
	res, err = r.handle(s, ctx, req)
	if err != nil && !req.IsCall() {
		// A notification cannot be answered, and an error returned from
		// its handler would end the connection: report it instead.
		s.log.Warn("notification failed", "method", method, "err", err)
		s.logToClient(ctx, wire.MessageError, method+": "+err.Error())
		return nil, nil
	}
	return res, err
}

// requestScope gives work inside a handler a context of its own: derived
// from jsonrpc2.DetachContext, since the request's context is pooled and
// must not be the parent of contexts that may outlive the handler (the
// context package's cancel propagation would touch it after recycling),
// yet cancelled when the request is ($/cancelRequest, or the client going
// away) and when the connection ends (endOfConnection). release must be
// called before the handler returns.
func (s *Server) requestScope(ctx context.Context, id jsonrpc2.ID) (work context.Context, release func()) {
	work, cancel := context.WithCancel(jsonrpc2.DetachContext(ctx))
	s.inflightMu.Lock()
	if s.inflight == nil {
		s.inflight = make(map[jsonrpc2.ID]context.CancelFunc)
	}
	s.inflight[id] = cancel
	s.inflightMu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			cancel()
		case <-s.endOfConnection():
			cancel()
		case <-stop:
		}
	}()
	return work, func() {
		s.inflightMu.Lock()
		delete(s.inflight, id)
		s.inflightMu.Unlock()
		close(stop)
		<-done
		cancel()
	}
}

// endOfConnection is closed when the connection ends: the input ended
// (the editor gone), exit, or the connection closed. Work done for the
// editor stops then, at once: the connection reports done only once every
// handler has returned, so a handler that waited on (say) a command's
// timeout would keep the daemon alive that long with nobody to answer.
func (s *Server) endOfConnection() <-chan struct{} {
	s.endOnce.Do(func() {
		s.ended = make(chan struct{})
		go func() {
			select {
			case <-s.exited:
			case <-s.connDone():
			case <-s.inputEnded:
			}
			close(s.ended)
		}()
	})
	return s.ended
}

// cancel cancels a running request by id; unknown ids are ignored (the
// request may have finished).
func (s *Server) cancel(id jsonrpc2.ID) {
	s.inflightMu.Lock()
	cancel := s.inflight[id]
	s.inflightMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// exit ends the connection; the exit code depends on whether shutdown came
// first.
func (s *Server) exit() {
	s.mu.Lock()
	if s.state == stateShutdown {
		s.exitCode = 0
	} else {
		s.exitCode = 1
	}
	s.mu.Unlock()
	s.exitOnce.Do(func() { close(s.exited) })
}

func (s *Server) shutdown(ctx context.Context) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	// Turns may wait on the client to end (an applyEdit in flight):
	// release the read loop while they are cancelled and flushed. With no
	// session there is nothing to wait for, and the answer is written
	// before the next message is read: a client that sends exit and
	// closes its input right behind shutdown still gets it (the
	// connection writes nothing once its input has ended).
	if len(s.sess.All()) > 0 {
		jsonrpc2.Async(ctx)
	}
	s.shutdownSessions()
	return nil, nil
}

// endSignal is a reader that closes ended when its reader fails or ends,
// once last has run: what must still be written then is queued before the
// connection sees the end and closes its output.
type endSignal struct {
	r     io.Reader
	ended chan struct{}
	once  *sync.Once
	last  func()
}

func (e *endSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() {
			if e.last != nil {
				e.last()
			}
			close(e.ended)
		})
	}
	return n, err
}
