package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/cline-ls/cline-ls/tools"
)

// State is where a server is in its life.
type State string

// Server states. A server that was running and died is restarting until a
// new connection succeeds (running again) or the attempts run out
// (failed); one that cannot be started at all fails at once, since
// retrying a wrong command only delays the error the user must fix.
const (
	StateStarting   State = "starting"
	StateRunning    State = "running"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
	StateDisabled   State = "disabled"
	// StateStopped is every enabled server's state once Close has begun.
	StateStopped State = "stopped"
)

// ServerStatus is one server's state, as Status and Options.OnStatus give
// it. Tools, Resources, Templates and Prompts count what the server last
// listed; Err says why a server failed or is restarting.
type ServerStatus struct {
	Name      string `json:"name"`
	State     State  `json:"state"`
	Tools     int    `json:"tools"`
	Resources int    `json:"resources"`
	Templates int    `json:"resourceTemplates,omitempty"`
	Prompts   int    `json:"prompts,omitempty"`
	Err       string `json:"error,omitempty"`
	// Offered counts the tools offered to the model, and Note says why
	// the others were left out (tools.MCPLimits); empty when none were.
	Offered int    `json:"offered"`
	Note    string `json:"note,omitempty"`
}

// Defaults of Options.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultMaxRestarts    = 3
	DefaultRestartDelay   = time.Second
	// DefaultCallTimeout is Cline's own default for an MCP request, what
	// its users expect: long enough for a search or a build a server
	// runs, short enough that a hung server is noticed within the turn.
	DefaultCallTimeout = 60 * time.Second
)

// maxRestartDelay caps the doubling backoff between restart attempts.
const maxRestartDelay = 30 * time.Second

// stableAfter is how long a restarted server must stay up before its
// failures are forgiven. Without it a server that starts and then dies on
// its own would be restarted for ever, each start counting as a success.
const stableAfter = time.Minute

// Options configures a Manager. The zero value is usable.
type Options struct {
	// Logger receives what the user should be able to find out later:
	// servers failing, restarting, names shortened, stderr lines (at
	// debug level). Nil means slog.Default().
	Logger *slog.Logger
	// OnStatus, when set, is called on every change of a server's state
	// or tool count, one call at a time, in the order the changes
	// happened; the argument is the server's status at the time of the
	// call. It runs on the Manager's goroutines, so it must return
	// quickly and must not call Close. It is never called once Close has
	// begun. A daemon forwards it to the client and, when Tools changed,
	// refreshes the tools of the sessions using this Manager.
	OnStatus func(ServerStatus)
	// Dir is the working directory of stdio servers; empty means the
	// daemon's. Pass the session's workspace folder.
	Dir string
	// BaseEnv is the environment ("KEY=value") every stdio server starts
	// from, before its configured env is added. Nil means a few harmless
	// variables of the daemon's own (PATH, HOME, locale...): not all of
	// them, because the daemon's environment holds API keys that a third
	// party's server has no business reading.
	BaseEnv []string
	// HideEnv names variables kept out of BaseEnv besides those named
	// *_API_KEY: the configured provider key's variable.
	HideEnv []string
	// ConnectTimeout bounds starting a server: launching it, the MCP
	// handshake and listing its tools. Zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// CallTimeout bounds each request to a server whose configuration
	// sets no timeoutSeconds: the handshake, each page of a listing, a
	// tool call, a resource read. Zero means DefaultCallTimeout. A
	// request that times out is cancelled on the server
	// (notifications/cancelled) and fails naming the server and the
	// limit.
	CallTimeout time.Duration
	// MaxRestarts is how many attempts are made to bring back a server
	// that died before it is marked failed. Zero means
	// DefaultMaxRestarts; negative disables restarts.
	MaxRestarts int
	// RestartDelay is the wait before the first restart attempt, doubled
	// for each further one (up to 30 s). Zero means DefaultRestartDelay.
	RestartDelay time.Duration
	// Version is the version cline-ls reports to servers as clientInfo.
	Version string
	// Limits bounds the tools offered to the model; the zero value means
	// tools.DefaultMCPLimits.
	Limits tools.MCPLimits
	// Elicit asks the user what a server wants to know
	// (elicitation/create); nil declines every such request.
	Elicit Elicitor
	// Sample, when set, lends servers the model: sampling is advertised
	// and each sampling/createMessage goes to it. Unset, sampling is not
	// advertised and a request for it is refused, saying why.
	Sample Sampler
	// Roots are the workspace folders (absolute paths) servers are told
	// of as their roots; SetRoots changes them.
	Roots []string
	// OAuth, when set, gives the OAuth handler of a Streamable HTTP
	// server (nil for none): the SDK's transport asks it for tokens and
	// calls its Authorize on a 401 or 403. It is called once per server,
	// so that its tokens last across restarts.
	OAuth func(ServerConfig) auth.OAuthHandler
}

// Manager runs the MCP servers of one configuration. Its methods are safe
// for concurrent use.
type Manager struct {
	opts    Options
	logger  *slog.Logger
	servers []*server // in configuration order
	byName  map[string]*server

	// ctx ends at Close: it stops supervisors, connections and restarts.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	lifeMu  sync.Mutex
	started bool

	// notifyMu keeps OnStatus calls one at a time and in order.
	notifyMu sync.Mutex

	// gen counts changes of any server's tool list; Tools rebuilds its
	// cache when it moved, so specs are made (and shortened names logged)
	// once per change, not once per call.
	gen      atomic.Uint64
	rootsMu  sync.Mutex // guards roots and each session's roots
	roots    []string
	toolsMu  sync.Mutex
	toolsGen uint64
	built    []builtTool
}

// builtTool is a dynamic tool and where its calls go.
type builtTool struct {
	server string // configured name
	name   string // the tool's own name on its server
	tool   tools.Tool
}

// New returns a Manager for the given servers, which it checks as
// ParseConfig does. Nothing starts before Start.
func New(servers []ServerConfig, opts Options) (*Manager, error) {
	if err := validate(servers); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxRestarts == 0 {
		opts.MaxRestarts = DefaultMaxRestarts
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = DefaultRestartDelay
	}
	if opts.Limits == (tools.MCPLimits{}) {
		opts.Limits = tools.DefaultMCPLimits
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	opts.BaseEnv = slices.Clone(opts.BaseEnv) // nil stays nil: "use the safe subset"
	opts.Roots = slices.Clone(opts.Roots)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:   opts,
		logger: opts.Logger,
		byName: make(map[string]*server, len(servers)),
		ctx:    ctx,
		cancel: cancel,
		roots:  opts.Roots,
	}
	for _, c := range servers {
		c.Args = slices.Clone(c.Args)
		c.Env = slices.Clone(c.Env)
		c.Headers = slices.Clone(c.Headers)
		if c.TimeoutSeconds != nil {
			t := *c.TimeoutSeconds
			c.TimeoutSeconds = &t
		}
		s := newServer(m, c)
		m.servers = append(m.servers, s)
		m.byName[c.Name] = s
	}
	return m, nil
}

// Start launches every enabled server at once and returns when each has
// been started or has failed (each within Options.ConnectTimeout), or
// when ctx ends, whichever comes first; servers still starting then go on
// in the background. A server that fails is reported through its status,
// never as an error of Start. Start does something only the first time,
// and nothing after Close.
func (m *Manager) Start(ctx context.Context) {
	m.lifeMu.Lock()
	if m.started || m.ctx.Err() != nil {
		m.lifeMu.Unlock()
		return
	}
	m.started = true
	ready := make(chan struct{}, len(m.servers))
	n := 0
	for _, s := range m.servers {
		if s.cfg.Disabled {
			continue
		}
		n++
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			s.run(func() { ready <- struct{}{} })
		}()
	}
	m.lifeMu.Unlock()

	for _, s := range m.servers {
		if s.cfg.Disabled {
			m.emit(s)
		}
	}
	for range n {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
	}
}

// Close stops every server and waits until their processes have exited
// and the Manager's goroutines have ended. Calls still running fail with
// an error result. Close is idempotent.
func (m *Manager) Close() error {
	m.lifeMu.Lock()
	// Under notifyMu, so that a report being made finishes first and
	// none is made after.
	m.notifyMu.Lock()
	m.cancel()
	m.notifyMu.Unlock()
	m.lifeMu.Unlock()
	m.wg.Wait()
	for _, s := range m.servers {
		s.stop()
	}
	return nil
}

// SetRoots makes paths (absolute) the roots every server is told of,
// and tells those running that their roots changed.
func (m *Manager) SetRoots(paths []string) {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	m.roots = slices.Clone(paths)
	for _, s := range m.servers {
		s.mu.Lock()
		live := s.live
		s.mu.Unlock()
		if live != nil {
			live.sess.syncRoots(m.roots)
		}
	}
}

// syncRoots brings a session's roots up to the Manager's; a session
// that started while they changed catches up here.
func (m *Manager) syncRoots(sess *session) {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	sess.syncRoots(m.roots)
}

// currentRoots returns the roots a new session starts with.
func (m *Manager) currentRoots() []string {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	return slices.Clone(m.roots)
}

// ServerTools returns the tools a server last listed, all of them
// (before tools.MCPOffer's caps), and whether the server is configured.
func (m *Manager) ServerTools(name string) ([]tools.MCPToolDef, bool) {
	s, ok := m.byName[name]
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools), true
}

// Status returns every configured server's status, in configuration
// order.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.status()
	}
	return out
}

// Tools returns one tool per tool of every running or restarting server,
// named <server>__mcp__<tool> by tools.MCPToolSpecs (which sanitises and
// shortens names and logs what it changed) with the server's input
// schema kept whole, kind other and not read-only, so calls ask for
// approval by default. A restarting server keeps its tools so that the
// model's tool set stays put through a crash; calls answer that it is
// restarting. The result is sorted by server, then tool; the daemon
// should ask again after OnStatus reports a change.
func (m *Manager) Tools() []tools.Tool {
	built := m.toolList()
	out := make([]tools.Tool, len(built))
	for i, b := range built {
		out[i] = b.tool
	}
	return out
}

// toolList returns the cached dynamic tools, rebuilt if a server's tool
// list changed since.
func (m *Manager) toolList() []builtTool {
	m.toolsMu.Lock()
	defer m.toolsMu.Unlock()
	gen := m.gen.Load()
	if m.built != nil && gen == m.toolsGen {
		return m.built
	}
	var in []tools.MCPServerTools
	for _, s := range m.servers {
		in = append(in, s.listed())
	}
	specs, left := tools.MCPOffer(in, m.opts.Limits, m.logger)
	for _, s := range m.servers {
		note := ""
		if i := slices.IndexFunc(left, func(l tools.MCPLeftOut) bool { return l.Server == s.cfg.Name }); i >= 0 {
			note = left[i].Message
		}
		offered := 0
		for _, sp := range specs {
			if sp.Server == s.cfg.Name {
				offered++
			}
		}
		s.setOffer(offered, note)
	}
	built := make([]builtTool, 0, len(specs))
	for _, sp := range specs {
		s := m.byName[sp.Server]
		name := sp.Tool
		t, err := tools.NewTool(sp.Spec, func(args json.RawMessage) (tools.Invocation, error) {
			return &callInvocation{s: s, tool: name, args: args}, nil
		})
		if err != nil {
			// MCPToolSpecs already left out schemas it cannot use; this
			// is a schema the converters cannot parse.
			m.logger.Warn("mcp: tool left out", "server", sp.Server, "tool", sp.Tool, "err", err)
			continue
		}
		built = append(built, builtTool{server: sp.Server, name: name, tool: t})
	}
	m.built, m.toolsGen = built, gen
	return built
}

// toolsChanged rebuilds the tool list after a server's list changed and
// reports s and every other server whose share of the list moved: the
// totals are shared, so one server's tools can push out another's.
func (m *Manager) toolsChanged(s *server) {
	m.gen.Add(1)
	before := make([]ServerStatus, len(m.servers))
	for i, o := range m.servers {
		before[i] = o.status()
	}
	m.toolList()
	for i, o := range m.servers {
		if o == s {
			m.emit(o)
			continue
		}
		if now := o.status(); now.Offered != before[i].Offered || now.Note != before[i].Note {
			m.emit(o)
		}
	}
}

// toolFor finds the dynamic tool for a server's tool.
func (m *Manager) toolFor(server, tool string) (tools.Tool, bool) {
	for _, b := range m.toolList() {
		if b.server == server && b.name == tool {
			return b.tool, true
		}
	}
	return nil, false
}

// emit reports s's current status. Taking the status under notifyMu
// means the last report always matches the current state, even when two
// goroutines change s at once.
func (m *Manager) emit(s *server) {
	if m.opts.OnStatus == nil {
		return
	}
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	if m.ctx.Err() != nil {
		return
	}
	m.opts.OnStatus(s.status())
}

// errClosed is why a server stopped when the Manager closed it.
var errClosed = errors.New("the MCP bridge was shut down")
