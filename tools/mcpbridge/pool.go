package mcpbridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// Caller sends a request to the editor and waits for its answer.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// SignInWay is how the user can be sent to an MCP server's sign-in page.
type SignInWay int

const (
	// SignInTerminal: the client has no way to show a page (ACP); the
	// user signs in with `cline-ls mcp login`, whose tokens are read.
	SignInTerminal SignInWay = iota
	// SignInMessage: a message gives the user the URL to open by hand.
	SignInMessage
	// SignInShowDocument: the editor opens it (window/showDocument).
	SignInShowDocument
)

// PoolConfig is what a Pool takes from the connection: every field is
// asked at the moment it matters, so changed settings, folders and
// capabilities apply to the servers started after the change.
type PoolConfig struct {
	Logger  *slog.Logger
	Version string
	// Ctx bounds the servers' background work; Go runs it (false once
	// the connection is closing).
	Ctx context.Context
	Go  func(func()) bool
	// Children is called before the settings' servers first start: they
	// are child processes to stop on the way out.
	Children func()

	HideEnv  func() []string
	StateDir func() string
	// Roots are the workspace folders; the first is where the settings'
	// stdio servers start.
	Roots func() []string
	// Redact scrubs secrets from what the user or a server is shown.
	Redact func(string) string

	Caller Caller
	SignIn func() SignInWay
	// LogMessage records a message in the editor (window/logMessage);
	// ShowMessage shows one (window/showMessage).
	LogMessage  func(ctx context.Context, typ wire.MessageType, msg string)
	ShowMessage func(typ wire.MessageType, msg string)
	// PromptsChanged is called when a server's prompts, the slash
	// commands, changed.
	PromptsChanged func()

	// CanAsk is whether the user can be asked what a server wants, and
	// whether an answer of free text can be taken; Ask asks, with options.
	CanAsk func() (can, freeText bool)
	Ask    func(ctx context.Context, question string, options []string) (answer string, ok bool, err error)
	// Sampling is whether the settings let servers use the model
	// (mcpSampling); Lend sends an allowed request to it.
	Sampling func() bool
	Lend     func(ctx context.Context, req SampleRequest) (SampleResult, error)
}

// A Pool holds a connection's MCP servers: those of the settings, shared
// by every session that names none of its own, and those each session
// named, which it owns. It is the one place that decides which Manager a
// session calls and how a server's questions, sign-ins and requests for
// the model reach the user.
type Pool struct {
	cfg PoolConfig

	mu       sync.Mutex
	conn     *Manager
	connRaw  string // the settings conn was started from
	sessions []*Manager
}

// NewPool returns a Pool with no servers.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	return &Pool{cfg: cfg}
}

// ConfigError is a configuration of servers that does not parse; Field
// names where it came from, as the client spelled it.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	return e.Field + strings.TrimPrefix(e.Err.Error(), "mcpServers")
}

func (e *ConfigError) Unwrap() error { return e.Err }

// start parses configurations and starts the servers in the background:
// connecting may take seconds, and neither initialize nor session/new
// should wait for it. Their tools appear at the next model request once
// connected.
func (p *Pool) start(raw []json.RawMessage, field, dir string) (*Manager, error) {
	cfgs, err := ParseConfig(raw)
	if err != nil {
		return nil, &ConfigError{Field: field, Err: err}
	}
	// The last note about left-out tools sent per server: reports come
	// one at a time, and the user is told of each new note once.
	noted := map[string]string{}
	// The prompts each server last listed: ACP sessions are told their
	// slash commands again when that changes.
	prompts := map[string]int{}
	c := p.cfg
	opts := Options{
		Logger: c.Logger, Version: c.Version, Dir: dir, Elicit: poolElicitor{p}, Roots: ask(c.Roots),
		HideEnv: ask(c.HideEnv),
		OnStatus: func(st ServerStatus) {
			if st.Prompts != prompts[st.Name] {
				prompts[st.Name] = st.Prompts
				// Not from here: the report may come while the server
				// holds what listing its prompts takes.
				if c.PromptsChanged != nil && c.Go != nil {
					c.Go(c.PromptsChanged)
				}
			}
			c.Logger.Info("mcp server", "name", st.Name, "state", st.State, "tools", st.Tools, "offered", st.Offered, "err", st.Err)
			if st.State == StateFailed || st.State == StateRestarting {
				p.log(context.Background(), wire.MessageWarning, fmt.Sprintf("MCP server %s: %s %s", st.Name, st.State, st.Err))
			}
			if st.Note != noted[st.Name] {
				noted[st.Name] = st.Note
				if st.Note != "" {
					p.log(context.Background(), wire.MessageWarning, st.Note)
				}
			}
		},
	}
	if c.StateDir != nil {
		opts.OAuth = NewOAuth(OAuthConfig{StateDir: c.StateDir(), Logger: c.Logger, SignIn: p.signIn})
	}
	// Servers started now get the model only if the settings allow it
	// now: a change reaches servers started after it.
	if c.Sampling != nil && c.Sampling() {
		opts.Sample = poolSampler{p}
	}
	m, err := New(cfgs, opts)
	if err != nil {
		return nil, fmt.Errorf("MCP: %w", err)
	}
	ctx := cmp.Or(c.Ctx, context.Background())
	if c.Go != nil {
		c.Go(func() { m.Start(ctx) })
	} else {
		go m.Start(ctx)
	}
	return m, nil
}

func ask[T any](f func() T) T {
	var zero T
	if f == nil {
		return zero
	}
	return f()
}

func (p *Pool) log(ctx context.Context, typ wire.MessageType, msg string) {
	if p.cfg.LogMessage != nil {
		p.cfg.LogMessage(ctx, typ, msg)
	}
}

// SetConn (re)starts the settings' servers when raw differs from what
// they were started from; field names raw for an error.
func (p *Pool) SetConn(raw []json.RawMessage, field string) error {
	key := []byte(nil) // none: what a connection starts with, and no encoding to compare at every start
	if len(raw) > 0 {
		key, _ = json.Marshal(raw)
		if p.cfg.Children != nil {
			p.cfg.Children()
		}
	}
	p.mu.Lock()
	same := p.connRaw == string(key)
	p.mu.Unlock()
	if same {
		return nil
	}
	var m *Manager
	if len(raw) > 0 {
		dir := ""
		if r := ask(p.cfg.Roots); len(r) > 0 {
			dir = r[0]
		}
		var err error
		if m, err = p.start(raw, field, dir); err != nil {
			return err
		}
	}
	p.mu.Lock()
	old := p.conn
	p.conn, p.connRaw = m, string(key)
	p.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Start starts the servers a session named (raw, its mcpServers), owned
// by it until Drop; nil when it named none. Stdio servers start in cwd.
func (p *Pool) Start(raw []json.RawMessage, cwd string) (*Manager, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	m, err := p.start(raw, "mcpServers", cwd)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.sessions = append(p.sessions, m)
	p.mu.Unlock()
	return m, nil
}

// For is the servers a session calls: its own, if it named some, else
// the settings'; nil when there are none.
func (p *Pool) For(own *Manager) *Manager {
	if own != nil {
		return own
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn
}

// Tools returns a session's dynamic tools and its MCP built-ins, asked
// at each use: the settings' servers may change under a session.
func (p *Pool) Tools(own *Manager) (func() []tools.Tool, map[string]tools.BuildFunc) {
	extra := func() []tools.Tool {
		if m := p.For(own); m != nil {
			return m.Tools()
		}
		return nil
	}
	builtin := func(name string) tools.BuildFunc {
		return func(raw json.RawMessage) (tools.Invocation, error) {
			m := p.For(own)
			if m == nil {
				return nil, &tools.ValidationError{Tool: name, Problems: []tools.Problem{{Path: "server_name", Message: "no MCP server is configured"}}}
			}
			return m.Builtins()[name](raw)
		}
	}
	return extra, map[string]tools.BuildFunc{
		tools.NameUseMCPTool:        builtin(tools.NameUseMCPTool),
		tools.NameAccessMCPResource: builtin(tools.NameAccessMCPResource),
	}
}

// PromptText is the turn a slash command naming an MCP prompt
// ("/mcp:server:prompt args") stands for: the prompt's messages, fetched
// with its arguments. Its errors are the user's to read.
func (p *Pool) PromptText(ctx context.Context, own *Manager, text string) (string, error) {
	m := p.For(own)
	if m == nil {
		return "", fmt.Errorf("%s names an MCP prompt, and no MCP server is configured", strings.Fields(text)[0])
	}
	out, err := m.RunPromptCommand(ctx, text)
	if err != nil {
		return "", errors.New(p.cfg.Redact(err.Error()))
	}
	return out, nil
}

// Commands are the slash commands of the MCP prompts a session can run.
func (p *Pool) Commands(own *Manager) []wire.AvailableCommand {
	m := p.For(own)
	if m == nil {
		return nil
	}
	var out []wire.AvailableCommand
	for _, pr := range m.Prompts() {
		c := wire.AvailableCommand{Name: pr.Command(), Description: cmp.Or(pr.Description, pr.Title, "MCP prompt "+pr.Name+" of "+pr.Server)}
		if h := pr.Hint(); h != "" {
			c.Input = &wire.CommandInput{Hint: h}
		}
		out = append(out, c)
	}
	return out
}

// Drop stops the servers one session owned.
func (p *Pool) Drop(m *Manager) {
	p.mu.Lock()
	p.sessions = slices.DeleteFunc(p.sessions, func(x *Manager) bool { return x == m })
	p.mu.Unlock()
	if err := m.Close(); err != nil {
		p.cfg.Logger.Warn("stopping a session's MCP servers", "err", err)
	}
}

// SetRoots tells every server the workspace folders, its roots, once
// they changed.
func (p *Pool) SetRoots(paths []string) {
	for _, m := range p.all(false) {
		m.SetRoots(paths)
	}
}

// Close stops every server.
func (p *Pool) Close() {
	for _, m := range p.all(true) {
		m.Close()
	}
}

func (p *Pool) all(forget bool) []*Manager {
	p.mu.Lock()
	all := append([]*Manager{p.conn}, p.sessions...)
	if forget {
		p.conn, p.sessions = nil, nil
	}
	p.mu.Unlock()
	return slices.DeleteFunc(all, func(m *Manager) bool { return m == nil })
}

// showDocumentParams and showDocumentResult are window/showDocument's.
type showDocumentParams struct {
	URI      string `json:"uri"`
	External bool   `json:"external"`
}

type showDocumentResult struct {
	Success bool `json:"success"`
}

// signIn shows the user the URL to sign in to a server at: the editor
// opens it in the browser, or, for an editor that cannot (Neovim 0.7's
// own LSP client), a message gives it to the user to open. An ACP client
// has no such request, and a message would need a session the settings'
// servers do not have: the user is told to sign in from the terminal,
// whose tokens the daemon then reads.
func (p *Pool) signIn(ctx context.Context, server, u string) error {
	way := SignInTerminal
	if p.cfg.SignIn != nil {
		way = p.cfg.SignIn()
	}
	switch way {
	case SignInTerminal:
		return fmt.Errorf("MCP server %s needs a sign-in; run: cline-ls mcp login %s", server, server)
	case SignInMessage:
		// The user opens it by hand; the sign-in waits for the browser.
		if p.cfg.ShowMessage != nil {
			p.cfg.ShowMessage(wire.MessageInfo, fmt.Sprintf("cline-ls: MCP server %s needs a sign-in: open %s in your browser", server, u))
		}
		return nil
	}
	p.log(ctx, wire.MessageInfo, fmt.Sprintf("MCP server %s needs a sign-in; opening %s", server, u))
	var res showDocumentResult
	if err := p.cfg.Caller.Call(ctx, "window/showDocument", showDocumentParams{URI: u, External: true}, &res); err != nil {
		return fmt.Errorf("the editor did not open the sign-in page: %w", err)
	}
	if !res.Success {
		return errors.New("the editor could not open the sign-in page")
	}
	return nil
}

func (p *Pool) canAsk() (can, freeText bool) {
	if p.cfg.CanAsk == nil || p.cfg.Ask == nil {
		return false, false
	}
	return p.cfg.CanAsk()
}

// poolElicitor asks the user a server's questions (elicitation/create)
// through the question channel ask_question uses: first whether to
// answer at all, then one question per field the schema's defaults do not
// settle. A field with choices (an enum, a boolean) is asked with them
// as the options; one of free text only where free text is taken. Where
// the user cannot be asked, the question is declined, and the log says
// so.
type poolElicitor struct{ p *Pool }

func (e poolElicitor) Elicit(ctx context.Context, server, message string, schema json.RawMessage) (string, map[string]any) {
	p := e.p
	can, freeText := p.canAsk()
	if !can {
		p.cfg.Logger.Info("mcp: a server's question was declined: the client has no way to ask the user", "server", server)
		return ElicitDecline, nil
	}
	const answer, decline = "Answer", "Decline"
	a, ok, err := p.cfg.Ask(ctx, fmt.Sprintf("MCP server %s asks: %s", server, message), []string{answer, decline})
	switch {
	case err != nil || !ok:
		return ElicitCancel, nil
	case a == decline:
		return ElicitDecline, nil
	}
	content := map[string]any{}
	for _, f := range ElicitFields(schema) {
		if len(f.Choices) == 0 && (f.Default != nil || !freeText) {
			if f.Default == nil && f.Required {
				p.cfg.Logger.Info("mcp: a server's question was cancelled: a field needs a typed answer the client cannot take", "server", server, "field", f.Name)
				return ElicitCancel, nil
			}
			continue // the Manager fills in the default
		}
		q := fmt.Sprintf("MCP server %s: %s", server, f.Prompt)
		if f.Default != nil {
			q += fmt.Sprintf(" (default: %v)", f.Default)
		}
		a, ok, err := p.cfg.Ask(ctx, q, f.Choices)
		if err != nil || !ok {
			return ElicitCancel, nil
		}
		content[f.Name] = elicitValue(f.Type, a)
	}
	return ElicitAccept, content
}

// elicitValue reads an answer as the field's type; the server checks
// it against its schema, and an answer that is not a number stays text
// for that check to name.
func elicitValue(typ, a string) any {
	switch typ {
	case "boolean":
		return a == "true"
	case "number", "integer":
		if n, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil {
			return n
		}
	}
	return a
}

// poolSampler lends servers the model when the settings allow it: each
// request is shown to the user, who allows or denies it, and only then
// lent.
type poolSampler struct{ p *Pool }

func (s poolSampler) Sample(ctx context.Context, server string, req SampleRequest) (SampleResult, error) {
	p := s.p
	if can, _ := p.canAsk(); !can || p.cfg.Lend == nil {
		return SampleResult{}, fmt.Errorf("cline-ls cannot ask its user to lend the model here (no way to ask), so sampling/createMessage is refused")
	}
	last := ""
	if len(req.Messages) > 0 {
		last = req.Messages[len(req.Messages)-1].Text
	}
	if r := []rune(last); len(r) > 300 {
		last = string(r[:300]) + "…"
	}
	const allow, deny = "Allow", "Deny"
	q := fmt.Sprintf("MCP server %s asks to use your model (%d messages, a reply of up to %d tokens, on your account). Its last message: %s",
		server, len(req.Messages), req.MaxTokens, last)
	a, ok, err := p.cfg.Ask(ctx, p.cfg.Redact(q), []string{deny, allow})
	if err != nil || !ok || a != allow {
		return SampleResult{}, fmt.Errorf("the user did not let the server use the model")
	}
	return p.cfg.Lend(ctx, req)
}
