package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/tools"
)

// server is one configured MCP server. Its supervisor goroutine (run) is
// the only one that connects and closes sessions; calls only read the
// current session under mu.
type server struct {
	m      *Manager
	cfg    ServerConfig
	logger *slog.Logger
	// relist is poked by the server's list_changed notifications; the
	// supervisor then lists again. One pending poke is enough.
	relist chan struct{}
	oauth  auth.OAuthHandler // Streamable HTTP only; may be nil

	mu        sync.Mutex
	state     State
	err       string
	live      *conn // the current session; nil unless running
	tools     []tools.MCPToolDef
	resources []string // URIs, for hints when a read fails
	templates []string // resource URI templates, for the same hints
	prompts   []PromptDef
	// What the tool list last offered of the server's tools, and why the
	// rest were left out; set by Manager.toolList.
	offered int
	note    string
}

// conn is one session with a server and what must be released with it.
type conn struct {
	sess    *session
	link    link            // once opened
	cmd     *exec.Cmd       // stdio only
	group   *proc.Group     // stdio only, once started
	stderr  *stderrTail     // stdio only
	http    *http.Transport // http and sse only
	started time.Time

	// What the server listed, filled by list.
	tools     []tools.MCPToolDef
	resources []string
	templates []string
	prompts   []PromptDef
}

func newServer(m *Manager, c ServerConfig) *server {
	s := &server{
		m:      m,
		cfg:    c,
		logger: m.logger.With("mcp_server", c.Name),
		relist: make(chan struct{}, 1),
		state:  StateStarting,
	}
	if c.Disabled {
		s.state = StateDisabled
	}
	if m.opts.OAuth != nil && c.Transport() == TransportHTTP {
		s.oauth = m.opts.OAuth(c)
	}
	return s
}

// timeout bounds each request to the server: its configured
// timeoutSeconds, else the Manager's CallTimeout.
func (s *server) timeout() time.Duration {
	if t := s.cfg.Timeout(); t > 0 {
		return t
	}
	return s.m.opts.CallTimeout
}

// status returns the server's status now.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ServerStatus{Name: s.cfg.Name, State: s.state, Tools: len(s.tools), Resources: len(s.resources), Templates: len(s.templates), Prompts: len(s.prompts), Err: s.err, Offered: s.offered, Note: s.note}
}

// setOffer records what the tool list offers of the server's tools.
func (s *server) setOffer(offered int, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offered, s.note = offered, note
}

// lists reports whether the server last listed a tool of that name.
func (s *server) lists(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.tools, func(d tools.MCPToolDef) bool { return d.Name == tool })
}

// listed returns what the server contributes to the tool list: its tools
// while running or restarting, nothing otherwise.
func (s *server) listed() tools.MCPServerTools {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := tools.MCPServerTools{UID: s.cfg.Name, Disabled: s.cfg.Disabled}
	if s.state == StateRunning || s.state == StateRestarting {
		out.Tools = s.tools
	}
	return out
}

// session returns the session to send a call on, or why there is none,
// phrased for the model.
func (s *server) session() (*session, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := s.cfg.Name
	switch {
	case s.state == StateRunning && s.live != nil:
		return s.live.sess, ""
	case s.state == StateStarting:
		return nil, fmt.Sprintf("MCP server %q is still starting; try again shortly.", name)
	case s.state == StateRestarting:
		return nil, fmt.Sprintf("MCP server %q stopped (%s) and is being restarted; try again shortly.", name, s.err)
	case s.state == StateDisabled:
		return nil, fmt.Sprintf("MCP server %q is disabled in the configuration.", name)
	case s.state == StateFailed:
		return nil, fmt.Sprintf("MCP server %q is not running: %s", name, s.err)
	default:
		return nil, fmt.Sprintf("MCP server %q is not running: %s.", name, errClosed)
	}
}

// toolNames lists the tools the server last listed, for hints.
func (s *server) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return names
}

// knownResources lists the resource URIs the server last listed.
func (s *server) knownResources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resources)
}

// knownTemplates lists the resource URI templates the server last listed.
func (s *server) knownTemplates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.templates)
}

// knownPrompts lists the prompts the server last listed.
func (s *server) knownPrompts() []PromptDef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.prompts)
}

// run supervises the server until the Manager closes: it starts it, waits
// for its session to end, and restarts it with a doubling delay. ready is
// called once, after the first attempt.
func (s *server) run(ready func()) {
	s.m.emit(s)
	c, err := s.connect()
	if err != nil {
		s.fail(err)
		ready()
		return
	}
	s.setRunning(c)
	ready()
	failures := 0
	for {
		reason := s.serve(c)
		if reason == nil {
			return
		}
		if time.Since(c.started) >= stableAfter {
			failures = 0
		}
		s.logger.Warn("mcp: server stopped", "err", reason)
		if s.m.opts.MaxRestarts < 0 {
			s.fail(reason)
			return
		}
		for {
			failures++
			if failures > s.m.opts.MaxRestarts {
				s.fail(fmt.Errorf("%w; gave up after %d restart attempts", reason, s.m.opts.MaxRestarts))
				return
			}
			s.setRestarting(reason)
			if !s.sleep(s.backoff(failures)) {
				return
			}
			c, err = s.connect()
			if err == nil {
				break
			}
			if s.m.ctx.Err() != nil {
				return
			}
			s.logger.Warn("mcp: restart failed", "attempt", failures, "err", err)
			reason = err
		}
		s.logger.Info("mcp: server restarted", "tools", len(c.tools))
		s.setRunning(c)
	}
}

// serve waits for c's session to end, listing again when the server says
// its lists changed. It returns why the session ended, or nil when the
// Manager closed it.
func (s *server) serve(c *conn) error {
	for {
		select {
		case <-c.sess.done():
			c.close()
			return s.stopReason(c, c.sess.endErr())
		case <-s.m.ctx.Done():
			c.close()
			return nil
		case <-s.relist:
			s.refresh(c)
		}
	}
}

// refresh lists c's tools and resources again and publishes them.
func (s *server) refresh(c *conn) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	if err := c.list(ctx, s.logger); err != nil {
		s.logger.Warn("mcp: listing again after a change failed", "err", s.redactErr(err))
		return
	}
	s.setRunning(c)
}

// backoff is the wait before restart attempt n (1-based).
func (s *server) backoff(n int) time.Duration {
	d := s.m.opts.RestartDelay
	for i := 1; i < n && d < maxRestartDelay; i++ {
		d *= 2
	}
	return min(d, maxRestartDelay)
}

// sleep waits d, or less if the Manager closes; it reports whether the
// Manager is still open.
func (s *server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.m.ctx.Done():
		return false
	}
}

// setRunning publishes c as the current session, with its lists.
func (s *server) setRunning(c *conn) {
	s.m.syncRoots(c.sess)
	s.mu.Lock()
	s.live, s.state, s.err = c, StateRunning, ""
	s.tools, s.resources, s.templates, s.prompts = c.tools, c.resources, c.templates, c.prompts
	s.mu.Unlock()
	s.m.toolsChanged(s)
}

// setRestarting keeps the server's tools listed: the model's tool set
// should not change because a server blinked.
func (s *server) setRestarting(reason error) {
	s.mu.Lock()
	s.live, s.state, s.err = nil, StateRestarting, reason.Error()
	s.mu.Unlock()
	s.m.emit(s)
}

// fail marks the server failed; its tools go, since every call would
// fail too.
func (s *server) fail(err error) {
	if s.m.ctx.Err() != nil {
		return // closing, not failing
	}
	s.logger.Error("mcp: server failed", "err", err)
	s.mu.Lock()
	s.live, s.state, s.err = nil, StateFailed, err.Error()
	s.tools, s.resources, s.templates, s.prompts = nil, nil, nil, nil
	s.mu.Unlock()
	s.m.toolsChanged(s)
}

// stop marks the server stopped once the Manager has closed it.
func (s *server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = nil
	if s.state != StateDisabled {
		s.state = StateStopped
	}
}

// errNoAnswer is the cause set when a server misses the connect timeout.
var errNoAnswer = errors.New("no answer")

// connect starts the server (or opens its HTTP session), does the MCP
// handshake and lists its tools and resources, all within
// ConnectTimeout, or the server's own timeout when that is longer (a
// server given minutes per request may need them to start); each request
// within that by the server's request timeout.
func (s *server) connect() (*conn, error) {
	timeout := max(s.m.opts.ConnectTimeout, s.cfg.Timeout())
	handshake := s.timeout()
	if s.oauth != nil {
		// The handshake may wait for the user to sign in.
		timeout += SignInWait
		handshake += SignInWait
	}
	ctx, cancel := context.WithTimeoutCause(s.m.ctx, timeout, errNoAnswer)
	defer cancel()
	c := &conn{}
	poke := func() {
		select {
		case s.relist <- struct{}{}:
		default:
		}
	}
	l, err := s.open(c)
	if err == nil {
		c.link = l
		c.sess, err = connectSession(ctx, l, handshake, s.timeout(), s.m.opts.Version, handlers{server: s.cfg.Name, changed: poke, logger: s.logger, elicit: s.m.opts.Elicit, sample: s.m.opts.Sample, roots: s.m.currentRoots()})
	}
	if err == nil {
		err = c.list(ctx, s.logger)
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), errNoAnswer) {
			err = fmt.Errorf("no answer within %v", timeout)
		}
		c.close()
		return nil, s.explain(c, err)
	}
	c.started = time.Now()
	return c, nil
}

// open makes the link the server's configuration names (a stdio server
// is started here) and records in c what must be released with it.
func (s *server) open(c *conn) (link, error) {
	switch s.cfg.Transport() {
	case TransportHTTP, TransportSSE:
		// A transport of its own, so that closing the server closes its
		// idle connections and no keep-alive goroutine outlives it.
		c.http = http.DefaultTransport.(*http.Transport).Clone()
		bounded := &boundedBodies{base: c.http, headers: s.cfg.Headers}
		client := &http.Client{Transport: bounded}
		l := link{wait: func() {}, failed: bounded.failed, refusal: bounded.refusal}
		if s.cfg.Transport() == TransportSSE {
			t := &lastingSSE{sse: &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxEventSize: maxMessage}, life: s.m.ctx}
			l.transport, l.wait = t, t.end
		} else {
			// The SDK resumes a broken stream from its last event id
			// (Last-Event-ID) and keeps the listening GET open.
			l.transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxEventSize: maxMessage, MaxRetries: 3, OAuthHandler: s.oauth}
		}
		return l, nil
	default:
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.m.opts.Dir
		cmd.Env = s.env()
		c.stderr = &stderrTail{logger: s.logger}
		cmd.Stderr = c.stderr
		// A grandchild holding stderr open must not keep Wait, and so
		// Close, waiting for ever.
		cmd.WaitDelay = 2 * time.Second
		c.cmd = cmd
		return stdioLink(cmd, c, s.logger)
	}
}

// env is a stdio server's environment: the base without API keys, then
// its configured variables, which win over the base (exec keeps the last
// of duplicates) and are passed even when named like a key.
func (s *server) env() []string {
	base := s.m.opts.BaseEnv
	if base == nil {
		base = safeEnv(os.Environ())
	}
	set := make([]string, 0, len(s.cfg.Env))
	for _, e := range s.cfg.Env {
		set = append(set, e.Name+"="+e.Value)
	}
	return proc.Env(base, s.m.opts.HideEnv, set)
}

// safeEnv keeps the variables a program needs to find its tools, home,
// locale and temporary folder, the same set MCP's reference clients pass.
func safeEnv(environ []string) []string {
	keep := []string{
		"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
		// Windows needs these to start most programs at all.
		"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT", "PROCESSOR_ARCHITECTURE",
		"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC",
	}
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && slices.ContainsFunc(keep, func(n string) bool { return strings.EqualFold(n, k) }) {
			out = append(out, kv)
		}
	}
	return out
}

// explain adds to a start failure what the user needs to fix it: how the
// process ended and the end of its stderr.
func (s *server) explain(c *conn, err error) error {
	if c.cmd != nil {
		err = fmt.Errorf("starting %q: %w", s.cfg.Command, err)
		if ps := c.cmd.ProcessState; ps != nil {
			err = fmt.Errorf("%w (the server exited: %s)", err, ps)
		}
	} else {
		err = fmt.Errorf("connecting to %s: %w", DisplayURL(s.cfg.URL), s.redactErr(err))
	}
	if c.stderr != nil {
		if t := c.stderr.String(); t != "" {
			err = fmt.Errorf("%w; its stderr ends with: %s", err, t)
		}
	}
	return err
}

// redact takes out of text what of the server's URL may be a secret
// (user information, the query): the SDK's errors quote the URL whole,
// and they reach the log, the editor and the model.
func (s *server) redact(text string) string {
	if s.cfg.URL == "" {
		return text
	}
	shown := DisplayURL(s.cfg.URL)
	u, err := url.Parse(s.cfg.URL)
	if err != nil {
		return strings.ReplaceAll(text, s.cfg.URL, shown)
	}
	for _, form := range []string{s.cfg.URL, u.String(), u.Redacted()} {
		text = strings.ReplaceAll(text, form, shown)
	}
	// Wherever else they show up on their own.
	secrets := []string{u.RawQuery, u.Fragment}
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p)
	}
	for _, sec := range secrets {
		if len(sec) >= 4 {
			text = strings.ReplaceAll(text, sec, "…")
		}
	}
	return text
}

// redactErr is err with its text redacted, for a status and the log.
func (s *server) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if t := s.redact(err.Error()); t != err.Error() {
		return errors.New(t)
	}
	return err
}

// DisplayURL shows a server's URL without what may be a secret: user
// information and the query (where some servers take their API key).
func DisplayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the configured URL"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// stopReason says why a running session ended. It is called after
// c.close, which has waited for a stdio server's process, so
// ProcessState is set.
func (s *server) stopReason(c *conn, waitErr error) error {
	var err error
	switch {
	case c.cmd != nil && c.cmd.ProcessState != nil && waitErr != nil:
		// We closed the connection (a message too long), then it exited.
		err = fmt.Errorf("the connection closed: %w (the server exited: %s)", waitErr, c.cmd.ProcessState)
	case c.cmd != nil && c.cmd.ProcessState != nil:
		err = fmt.Errorf("the server exited: %s", c.cmd.ProcessState)
	case waitErr != nil:
		err = fmt.Errorf("the connection closed: %w", s.redactErr(waitErr))
	default:
		err = errors.New("the connection closed")
	}
	if c.stderr != nil {
		if t := c.stderr.String(); t != "" {
			err = fmt.Errorf("%w; its stderr ends with: %s", err, t)
		}
	}
	return err
}

// list fetches the server's tools and, when it offers them, its
// resources, resource templates and prompts. A failure to list any but
// the tools is logged, not fatal: tools are what the model needs.
func (c *conn) list(ctx context.Context, logger *slog.Logger) error {
	caps := c.sess.init.Capabilities
	var defs []tools.MCPToolDef
	if caps == nil || caps.Tools != nil {
		listed, err := c.sess.listTools(ctx)
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		for _, t := range listed {
			defs = append(defs, toolDef(t))
		}
	}
	var uris []string
	if caps != nil && caps.Resources != nil {
		listed, err := c.sess.listResources(ctx)
		if err != nil {
			logger.Warn("mcp: listing resources failed", "err", err)
		}
		uris = listed
		if c.templates, err = c.sess.listTemplates(ctx); err != nil {
			logger.Warn("mcp: listing resource templates failed", "err", err)
		}
	}
	if caps != nil && caps.Prompts != nil {
		listed, err := c.sess.listPrompts(ctx)
		if err != nil {
			logger.Warn("mcp: listing prompts failed", "err", err)
		}
		c.prompts = listed
	}
	c.tools, c.resources = defs, uris
	return nil
}

// toolDef converts a listed tool. Its input schema is kept as the server
// sent it, every keyword (enum, format, nested objects) with it;
// MCPToolSpecs leaves out a tool whose schema it cannot use.
func toolDef(t *mcp.Tool) tools.MCPToolDef {
	d := tools.MCPToolDef{Name: t.Name, Title: t.Title, Description: t.Description}
	if d.Title == "" && t.Annotations != nil {
		d.Title = t.Annotations.Title
	}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && offers(b) {
			d.InputSchema = b
		}
	}
	return d
}

// close ends the session (for stdio: stdin closed, then SIGTERM, then
// kill, and the process waited for) and releases what came with it.
func (c *conn) close() {
	if c.sess != nil {
		c.sess.close() // waits for a stdio server's process
	} else if c.link.wait != nil {
		c.link.wait() // the SDK closed a connection that failed to start
	}
	if c.group != nil && c.cmd.ProcessState != nil {
		c.group.Cleanup() // what the server left running
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// stderrTail keeps the end of a server's stderr for error messages and
// logs each line at debug level.
type stderrTail struct {
	logger *slog.Logger

	mu      sync.Mutex
	tail    []byte
	partial []byte
}

// stderrKeep is how much of a server's stderr is kept for messages.
const stderrKeep = 2048

// Write records p; it never fails, so the server is never blocked or
// broken by its stderr.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > stderrKeep {
		t.tail = slices.Clone(t.tail[len(t.tail)-stderrKeep:])
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(t.partial[:i])); line != "" {
			t.logger.Debug("mcp: server stderr", "line", line)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > stderrKeep {
		t.partial = nil // a line that long is not worth logging whole
	}
	return len(p), nil
}

// String returns the last few lines of stderr, on one line.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.tail), "?")), "\n")
	lines = lines[max(0, len(lines)-5):]
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	out := strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " | ")
	if len(out) > 500 {
		cut := len(out) - 500
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = "…" + out[cut:]
	}
	return out
}
