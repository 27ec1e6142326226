package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/tools"
)

// Decision is what the policy says about a tool call.
type Decision string

// Decisions, as rules and approval settings spell them (PROTOCOL.md §2, §4).
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
	// Sandbox, a value of approvals.execute only (the sandbox approval
	// level, PROTOCOL.md §12), runs commands confined without asking
	// (internal/sandbox). Explain never returns it: it becomes Allow
	// with Verdict.Sandboxed, or Ask where the call cannot be confined.
	Sandbox Decision = "sandbox"
)

func (d Decision) valid() bool { return d == Allow || d == Ask || d == Deny }

// strength orders decisions for breaking ties between rules of equal
// priority, and the parts of a command line: the more cautious one wins.
// Confined is more cautious than allowed, less than asked.
func (d Decision) strength() int {
	switch d {
	case Deny:
		return 3
	case Ask:
		return 2
	case Sandbox:
		return 1
	}
	return 0
}

// Level is an approval level (PROTOCOL.md §12): the approvals.level
// setting and the ACP approval option.
type Level string

// Levels, from the most cautious: ask keeps the configured approvals;
// sandbox runs commands in the sandbox without asking; yolo runs every
// call without asking. Rules, plan mode's guard and the question before
// a write under .git stay at every level.
const (
	LevelAsk     Level = "ask"
	LevelSandbox Level = "sandbox"
	LevelYolo    Level = "yolo"
)

// Levels lists the levels in order, for settings and messages.
func Levels() []Level { return []Level{LevelAsk, LevelSandbox, LevelYolo} }

// ApplyLevel sets the approvals the level implies over a: the one place
// a level becomes approvals, for the settings and the ACP option alike.
// At sandbox, a configured deny of commands still stands.
func (a *Approvals) ApplyLevel(l Level) {
	switch l {
	case LevelSandbox:
		if a.Execute != Deny {
			a.Execute = Sandbox
		}
	case LevelYolo:
		a.Read, a.Edit, a.Execute, a.Fetch, a.MCP = Allow, Allow, Allow, Allow, Allow
	}
}

// Category groups tools for the approval settings.
type Category string

// Categories. The first five are the keys of the approvals setting;
// CategoryInteract and CategoryOther cannot be set there, only by rules.
const (
	CategoryRead    Category = "read"
	CategoryEdit    Category = "edit"
	CategoryExecute Category = "execute"
	CategoryFetch   Category = "fetch"
	CategoryMCP     Category = "mcp"
	// CategoryInteract holds the tools that only talk to the user or steer
	// the session (ask_question, plan_mode_respond, submit_and_exit,
	// update_plan, subagents): they never need approval by default.
	CategoryInteract Category = "interact"
	// CategoryOther holds tools that change something in a way the other
	// categories do not name; they ask by default.
	CategoryOther Category = "other"
)

// CategoryOf places a tool in its category. MCP tools are recognised by
// name, whatever kind their server gives them; the rest by kind, with
// ReadOnly (which the tools package sets for "needs no approval by
// default") telling reads and interactions from unknown changes.
func CategoryOf(name string, kind tools.Kind, readOnly bool) Category {
	switch {
	case strings.Contains(name, "__mcp__") || name == tools.NameUseMCPTool || name == tools.NameAccessMCPResource:
		return CategoryMCP
	case kind == tools.KindExecute:
		return CategoryExecute
	case kind == tools.KindFetch:
		return CategoryFetch
	case kind == tools.KindEdit || kind == tools.KindDelete || kind == tools.KindMove:
		return CategoryEdit
	case readOnly && (kind == tools.KindRead || kind == tools.KindSearch):
		return CategoryRead
	case readOnly:
		return CategoryInteract
	}
	return CategoryOther
}

// defaultDecision is the default of docs/DESIGN.md §2 (approvals): reads,
// searches, listings and interactions run without asking; edits, commands,
// web and MCP ask.
func defaultDecision(c Category) Decision {
	if c == CategoryRead || c == CategoryInteract {
		return Allow
	}
	return Ask
}

// Approvals is the per-category setting of initializationOptions.approvals.
// An empty field keeps the category's default.
type Approvals struct {
	Read    Decision `json:"read,omitempty"`
	Edit    Decision `json:"edit,omitempty"`
	Execute Decision `json:"execute,omitempty"`
	Fetch   Decision `json:"fetch,omitempty"`
	MCP     Decision `json:"mcp,omitempty"`
}

func (a Approvals) get(c Category) Decision {
	switch c {
	case CategoryRead:
		return a.Read
	case CategoryEdit:
		return a.Edit
	case CategoryExecute:
		return a.Execute
	case CategoryFetch:
		return a.Fetch
	case CategoryMCP:
		return a.MCP
	}
	return ""
}

// Rule is one entry of initializationOptions.rules (PROTOCOL.md §4).
type Rule struct {
	// Tool is the tool name the rule covers, as the model sees it (legacy
	// aliases already resolved). "*" matches any run of characters and
	// "?" any one, so "run_*" or "*__mcp__*"; everything else is literal
	// and the whole name must match.
	Tool string `json:"tool"`
	// ArgPattern, when set, is a regular expression (RE2 syntax, not
	// anchored: use ^ and $ to match whole) the call must also match. For
	// a call that runs commands it is matched against each part of each
	// command line (tools.CommandParts): an allow rule matches a part only
	// when the part is one simple command with literal words, so "allow
	// ^go test" never lets "go test && rm -rf ~" or "go test $(rm -rf ~)"
	// through; an ask or deny rule matches a part as written, its words,
	// what a wrapper in it runs, or the whole line. For other calls it is
	// matched against the checked arguments as canonical JSON (keys
	// sorted, each once, paths as the workspace resolves them:
	// canonicalArgs), e.g. "path":"secrets/; an ask or deny rule also
	// against the arguments as sent.
	ArgPattern string `json:"argPattern,omitempty"`
	// Decision is allow, ask or deny.
	Decision Decision `json:"decision"`
	// Modes limits the rule to these modes; empty means every mode.
	Modes []string `json:"modes,omitempty"`
	// Priority ranks matching rules: the highest wins. Among equal
	// priorities deny beats ask and ask beats allow.
	Priority int `json:"priority"`
}

// SessionRulePriority is the priority of the rules a session adds when
// the user answers "always allow" or "always reject". It is above the
// priority rules get when they leave it out (0), so such an answer is not
// overridden by an ordinary configured rule; a configured rule given a
// higher priority (a deny of 101, say) still wins over it.
const SessionRulePriority = 100

// PolicyConfig is the configured part of a policy, in the shape of
// initializationOptions.approvals and .rules.
type PolicyConfig struct {
	Approvals Approvals `json:"approvals"`
	Rules     []Rule    `json:"rules"`
	// SandboxAvailable says commands can be confined here; without it a
	// sandbox decision asks instead.
	SandboxAvailable bool `json:"-"`
}

// PolicyCall is what the policy needs to know about a call. The
// scheduler makes it from the call's invocation (NewPolicyCall), after
// validation and coercion, so that the guard and the rules judge what
// will run, whatever shape the model's arguments had.
type PolicyCall struct {
	// Tool is the name of the tool called, aliases resolved.
	Tool     string
	Kind     tools.Kind
	ReadOnly bool
	// Args are the call's arguments as the tool runs them: validated and
	// coerced (tools.BuildChecked).
	Args json.RawMessage
	// Commands are the shell commands the call runs, as its invocation
	// reports them (tools.CommandRunner); nil for a call that runs none.
	Commands []string
	// URLs are the pages the call fetches (tools.Fetcher).
	URLs []*url.URL
	// Mode is the session's mode.
	Mode string
	// Paths are the absolute paths the call would change (its
	// description's locations and changes), for the rule on .git and
	// the scope of an "always" answer.
	Paths []string
	// Root is the session's folder, to name paths in labels.
	Root string
	// Hook is what the call's PreToolUse hooks decided: "" (nothing),
	// "allow" or "ask" (a hook's deny refuses before the policy).
	Hook string
	// Confinable: the call can run in the sandbox (tools.Sandboxable);
	// OutsideSandbox: it asks not to (sandbox: false).
	Confinable, OutsideSandbox bool
}

// NewPolicyCall describes a validated call for the policy: args are the
// checked arguments (tools.BuildChecked), desc the invocation's
// description (nil before it has described itself).
func NewPolicyCall(spec tools.Spec, inv tools.Invocation, args json.RawMessage, mode string, desc *tools.Description) PolicyCall {
	c := PolicyCall{Tool: spec.Name, Kind: spec.Kind, ReadOnly: spec.ReadOnly, Args: args, Mode: mode}
	if r, ok := inv.(tools.CommandRunner); ok {
		c.Commands = r.Commands()
		if c.Commands == nil {
			c.Commands = []string{}
		}
	}
	if f, ok := inv.(tools.Fetcher); ok {
		c.URLs = f.URLs()
	}
	if sb, ok := inv.(tools.Sandboxable); ok {
		c.Confinable, c.OutsideSandbox = true, !sb.WantsSandbox()
	}
	if desc != nil {
		c.Paths = desc.Paths()
	}
	return c
}

// ModeRefusal is the mode's guard, the one place where a mode refuses a
// call for what it would do (the policy's ask before an MCP tool in plan
// mode is a question, not a refusal): in a mode that runs only commands changing
// nothing (plan), a call whose commands are not all recognised as such
// (tools.ReadOnlyRefusal), a call that runs something it does not name,
// or one that edits files, is refused before anyone is asked. The
// scheduler asks it for every validated call; Explain denies what it
// refuses, for a caller that asks the policy directly.
func ModeRefusal(c PolicyCall) error {
	preset, _ := tools.PresetFor(c.Mode)
	if !preset.ReadOnlyCommands {
		return nil
	}
	cat := CategoryOf(c.Tool, c.Kind, c.ReadOnly)
	switch {
	case c.Commands != nil:
		if len(c.Commands) == 0 {
			return &tools.ValidationError{Tool: c.Tool, Problems: []tools.Problem{{Path: "commands", Message: "no command to check; " + c.Mode + " mode runs only commands that change no files"}}}
		}
		return tools.ReadOnlyRefusal(c.Commands)
	case cat == CategoryExecute:
		return fmt.Errorf("%s is not available in %s mode: it runs programs the mode cannot check for changes; changing files needs act mode", c.Tool, c.Mode)
	case cat == CategoryEdit:
		return fmt.Errorf("%s is not available in %s mode, which changes no files; changing files needs act mode", c.Tool, c.Mode)
	}
	return nil
}

// Verdict is a decision with the reason for it, for logs and for the
// message a denied call returns to the model.
type Verdict struct {
	Decision Decision
	Reason   string
	// Sandboxed: the call is allowed to run in the sandbox, and only
	// there; the scheduler passes it on (tools.ExecOptions.Sandboxed).
	Sandboxed bool
	// forMode: the deciding rule names the call's mode among its modes.
	forMode bool
	// sandboxAsk: the sandbox step asks (sandboxVerdict), which comes
	// after the hooks, so a hook's allow does not lift it.
	sandboxAsk bool
}

// Policy decides whether a tool call runs, asks the user first, or is
// refused. The order of precedence:
//
//  0. What the mode's guard refuses (ModeRefusal) is denied.
//  1. Rules, configured and session ones together: of those matching the
//     call (tool, mode, argument pattern or the scope of an "always"
//     answer) the highest priority wins, ties going to deny, then ask.
//     Session rules carry SessionRulePriority. A call running commands
//     is decided part by part, and its most cautious part decides.
//  2. Without a matching rule, the approvals setting of the call's
//     category, then the category's default.
//  3. In a mode whose preset approves everything (yolo), ask becomes
//     allow: nobody is there to answer. A deny still stands, so a rule
//     can fence even yolo off from what must never happen.
//
// A Policy is safe for concurrent use.
type Policy struct {
	mu        sync.RWMutex
	approvals Approvals
	sandbox   bool // commands can be confined
	rules     []compiledRule
	session   []compiledRule
}

type compiledRule struct {
	Rule
	index   int // position in the configuration, for reasons; -1 for session rules
	tool    *regexp.Regexp
	pattern *regexp.Regexp
	// scope, on a rule from an "always" answer, is what it covers.
	scope *Scope
}

// NewPolicy returns a policy with the configuration, which is checked:
// unknown decisions and bad patterns are errors naming the field.
func NewPolicy(cfg PolicyConfig) (*Policy, error) {
	p := &Policy{}
	if err := p.SetConfig(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// SetConfig replaces the configured approvals and rules (after
// workspace/didChangeConfiguration, say) and keeps the session's rules.
// On error the policy is left as it was.
func (p *Policy) SetConfig(cfg PolicyConfig) error {
	for _, f := range []struct {
		name string
		d    Decision
	}{{"read", cfg.Approvals.Read}, {"edit", cfg.Approvals.Edit}, {"execute", cfg.Approvals.Execute},
		{"fetch", cfg.Approvals.Fetch}, {"mcp", cfg.Approvals.MCP}} {
		if f.d == Sandbox && f.name == "execute" {
			continue
		}
		if f.d != "" && !f.d.valid() {
			return fmt.Errorf("approvals.%s: %q is not allow, ask or deny", f.name, f.d)
		}
	}
	rules := make([]compiledRule, 0, len(cfg.Rules))
	for i, r := range cfg.Rules {
		cr, err := compileRule(r, i)
		if err != nil {
			return fmt.Errorf("rules[%d]: %w", i, err)
		}
		rules = append(rules, cr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.approvals = cfg.Approvals
	p.sandbox = cfg.SandboxAvailable
	p.rules = rules
	return nil
}

func compileRule(r Rule, index int) (compiledRule, error) {
	if r.Tool == "" {
		return compiledRule{}, fmt.Errorf("tool: empty")
	}
	if !r.Decision.valid() {
		return compiledRule{}, fmt.Errorf("decision: %q is not allow, ask or deny", r.Decision)
	}
	cr := compiledRule{Rule: r, index: index, tool: globRegexp(r.Tool)}
	cr.Modes = slices.Clone(r.Modes)
	if r.ArgPattern != "" {
		re, err := regexp.Compile(r.ArgPattern)
		if err != nil {
			return compiledRule{}, fmt.Errorf("argPattern: %w", err)
		}
		cr.pattern = re
	}
	return cr, nil
}

// globRegexp turns a tool pattern into an anchored regular expression.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()) // every part is quoted or a fixed fragment
}

// AddSessionRule adds a rule for the rest of the session, at
// SessionRulePriority whatever the rule says. An identical rule is not
// added twice.
func (p *Policy) AddSessionRule(r Rule) error {
	r.Priority = SessionRulePriority
	cr, err := compileRule(r, -1)
	if err != nil {
		return err
	}
	return p.addSession(cr)
}

func (p *Policy) addSession(cr compiledRule) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.session {
		if s.Tool == cr.Tool && s.ArgPattern == cr.ArgPattern && s.Decision == cr.Decision &&
			slices.Equal(s.Modes, cr.Modes) && s.scope.equal(cr.scope) {
			return nil
		}
	}
	p.session = append(p.session, cr)
	return nil
}

// Remember records an "always allow" (d = Allow) or "always reject"
// (d = Deny) answer about a call as a session rule covering ScopeFor(c):
// what the user saw, and no more.
func (p *Policy) Remember(c PolicyCall, d Decision) error {
	if !d.valid() {
		return fmt.Errorf("decision: %q is not allow, ask or deny", d)
	}
	sc := ScopeFor(c)
	return p.addSession(compiledRule{
		Rule:  Rule{Tool: c.Tool, Decision: d, Priority: SessionRulePriority},
		index: -1,
		tool:  regexp.MustCompile("^" + regexp.QuoteMeta(c.Tool) + "$"),
		scope: &sc,
	})
}

// SessionRule is a rule the session added, with the scope of the answer
// it came from (empty for one added by AddSessionRule).
type SessionRule struct {
	Rule
	Scope string
}

// SessionRules returns the rules added during the session.
func (p *Policy) SessionRules() []SessionRule {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]SessionRule, len(p.session))
	for i, s := range p.session {
		out[i] = SessionRule{Rule: s.Rule}
		if s.scope != nil {
			out[i].Scope = s.scope.Label
		}
	}
	return out
}

// Decide returns the policy's decision about a call.
func (p *Policy) Decide(c PolicyCall) Decision {
	return p.Explain(c).Decision
}

// Explain returns the policy's decision about a call and why.
func (p *Policy) Explain(c PolicyCall) Verdict {
	cat := CategoryOf(c.Tool, c.Kind, c.ReadOnly)
	if err := ModeRefusal(c); err != nil {
		return Verdict{Decision: Deny, Reason: err.Error()}
	}
	subjects := c.subjects()
	p.mu.RLock()
	// A call is decided part by part (each command a command line runs),
	// and the most cautious part decides: a command line is allowed only
	// if every part is, and asked about or denied if any part is.
	var v Verdict
	for i, sub := range subjects {
		pv, ok := p.bestRule(c, sub)
		if !ok {
			if d := p.approvals.get(cat); d != "" {
				pv = Verdict{Decision: d, Reason: fmt.Sprintf("approvals.%s is %s", cat, d)}
			} else {
				pv = Verdict{Decision: defaultDecision(cat), Reason: fmt.Sprintf("default for %s tools", cat)}
			}
		}
		if len(subjects) > 1 && sub.part != nil {
			pv.Reason = fmt.Sprintf("%s, for %q", pv.Reason, tools.ShortTitle(sub.part.Text))
		}
		if i == 0 || pv.Decision.strength() > v.Decision.strength() {
			v = pv
		}
	}
	sandboxOK := p.sandbox
	p.mu.RUnlock()
	if v.Decision == Sandbox {
		v = sandboxVerdict(c, v, sandboxOK)
	}

	preset, _ := tools.PresetFor(c.Mode)
	// A hook's word comes after the rules and before the mode's own
	// caution: allow skips asking but no deny rule and not the sandbox
	// level's question (a call outside the sandbox is the user's), ask
	// asks about what would run unasked — and where nobody is asked (yolo)
	// refuses it.
	switch {
	case c.Hook == hooks.Allow && v.Decision == Ask && !v.sandboxAsk:
		v = Verdict{Decision: Allow, Reason: v.Reason + "; a hook allows it"}
	case c.Hook == hooks.Ask && v.Decision != Deny && preset.AutoApprove:
		v = Verdict{Decision: Deny, Reason: fmt.Sprintf("a hook asks for the user's approval, and %s mode approves without asking, so it is refused", c.Mode)}
	case c.Hook == hooks.Ask && v.Decision == Allow:
		v = Verdict{Decision: Ask, Reason: "a hook asks for the user's approval", Sandboxed: v.Sandboxed}
	}
	// An MCP tool may change anything, and the mode cannot tell whether
	// it does: where only what changes nothing runs unasked (plan), the
	// user is asked, unless a rule for this very mode allows it.
	if preset.ReadOnlyCommands && v.Decision == Allow && !v.forMode && cat == CategoryMCP && c.Tool != tools.NameAccessMCPResource {
		v = Verdict{Decision: Ask, Reason: fmt.Sprintf("%s; %s mode asks before an MCP tool, which may change files", v.Reason, c.Mode)}
	}
	if preset.AutoApprove && v.Decision == Ask {
		v = Verdict{Decision: Allow, Reason: v.Reason + "; " + c.Mode + " mode approves it"}
	}
	// A write into a repository's .git folder (hooks, config) can run
	// code at the user's next git command: it is always the user's call,
	// and with nobody there to answer (yolo) it is refused.
	if cat == CategoryEdit && v.Decision != Deny {
		if p, ok := gitPath(c.Paths); ok {
			if preset.AutoApprove {
				v = Verdict{Decision: Deny, Reason: fmt.Sprintf("%s is inside a .git folder, and %s mode approves without asking, so writes there are refused", p, c.Mode)}
			} else if v.Decision == Allow {
				v = Verdict{Decision: Ask, Reason: fmt.Sprintf("%s is inside a .git folder; writes there always need the user's approval", p)}
			}
		}
	}
	return v
}

// sandboxVerdict turns a sandbox decision into what runs: the call
// confined without asking, or the question the ask level would put when
// it asks to run outside, cannot be confined, or nothing here confines.
func sandboxVerdict(c PolicyCall, v Verdict, available bool) Verdict {
	switch {
	case c.OutsideSandbox:
		return Verdict{Decision: Ask, sandboxAsk: true, Reason: v.Reason + "; the call asks to run outside the sandbox"}
	case !c.Confinable:
		return Verdict{Decision: Ask, sandboxAsk: true, Reason: v.Reason + "; " + c.Tool + " cannot run in the sandbox"}
	case !available:
		return Verdict{Decision: Ask, sandboxAsk: true, Reason: v.Reason + "; no sandbox is available here, so commands ask"}
	}
	return Verdict{Decision: Allow, Reason: v.Reason + ": runs in the sandbox without asking", Sandboxed: true}
}

// gitPath returns the first of paths that lies in a .git folder.
func gitPath(paths []string) (string, bool) {
	for _, p := range paths {
		for _, name := range strings.Split(filepath.ToSlash(p), "/") {
			if name == ".git" {
				return p, true
			}
		}
	}
	return "", false
}

// subject is one thing rules are matched against: a part of one of the
// call's command lines, or, for a call that runs no commands, the call's
// arguments as canonical JSON.
type subject struct {
	part *tools.CommandPart
	line string // the command line part is of
	// the arguments, for a call that is not a command line; their
	// canonical forms are made only when a rule reads them.
	call *argForms
}

// argForms are a call's arguments as the rules read them, each made on
// first use: decoding and re-encoding the arguments twice costs tens of
// milliseconds for an edit of thousands of lines, which a call no
// argument pattern looks at should not pay.
type argForms struct {
	c           PolicyCall
	argsOnce    sync.Once
	rawOnce     sync.Once
	argsV, rawV string
}

// args is the arguments with their paths as the workspace sees them
// (canonicalArgs).
func (s subject) args() string {
	if s.call == nil {
		return ""
	}
	s.call.argsOnce.Do(func() { s.call.argsV = s.call.c.canonicalArgs() })
	return s.call.argsV
}

// raw is the arguments as sent, in canonical form, which ask and deny
// rules see too.
func (s subject) raw() string {
	if s.call == nil {
		return ""
	}
	s.call.rawOnce.Do(func() { s.call.rawV = canonicalJSON(s.call.c.Args) })
	return s.call.rawV
}

// subjects splits the call into what the rules judge one at a time.
func (c PolicyCall) subjects() []subject {
	if c.Commands == nil {
		return []subject{{call: &argForms{c: c}}}
	}
	var out []subject
	for _, line := range c.Commands {
		parts := tools.CommandParts(line)
		if len(parts) == 0 {
			// Nothing to run (a comment): judged as the line, which no
			// rule pattern can allow.
			parts = []tools.CommandPart{{Text: line}}
		}
		for i := range parts {
			out = append(out, subject{part: &parts[i], line: line})
		}
	}
	if len(out) == 0 {
		out = append(out, subject{part: &tools.CommandPart{}})
	}
	return out
}

// bestRule finds the rule that wins for one subject of the call; the
// caller holds p.mu.
func (p *Policy) bestRule(c PolicyCall, sub subject) (Verdict, bool) {
	var best *compiledRule
	for _, set := range [][]compiledRule{p.rules, p.session} {
		for i := range set {
			r := &set[i]
			if !r.matches(c, sub) {
				continue
			}
			if best == nil || r.Priority > best.Priority ||
				(r.Priority == best.Priority && r.Decision.strength() > best.Decision.strength()) {
				best = r
			}
		}
	}
	if best == nil {
		return Verdict{}, false
	}
	return Verdict{Decision: best.Decision, Reason: best.describe(), forMode: len(best.Modes) > 0}, true
}

func (r *compiledRule) describe() string {
	where := fmt.Sprintf("rules[%d]", r.index)
	if r.index < 0 {
		where = "a session rule"
	}
	s := fmt.Sprintf("%s (%s %q", where, r.Decision, r.Tool)
	if r.ArgPattern != "" {
		s += fmt.Sprintf(" matching %q", r.ArgPattern)
	}
	if r.scope != nil && r.scope.Label != "" {
		s += ": " + r.scope.Label
	}
	return s + ")"
}

// matches reports whether the rule applies to one subject of the call.
// An allow rule's pattern matches a part of a command line only when the
// part is one simple command whose every word is a literal (so the
// pattern sees all it runs) and the pattern matches it; an ask or deny
// rule's pattern matches when it matches the part, its words, what a
// wrapper in it runs, or the whole command line.
func (r *compiledRule) matches(c PolicyCall, sub subject) bool {
	if len(r.Modes) > 0 && !slices.Contains(r.Modes, c.Mode) {
		return false
	}
	if !r.tool.MatchString(c.Tool) {
		return false
	}
	if r.scope != nil {
		return r.scope.covers(c, sub, r.Decision)
	}
	if r.pattern == nil {
		return true
	}
	if sub.part == nil {
		return r.pattern.MatchString(sub.args()) || r.Decision != Allow && r.pattern.MatchString(sub.raw())
	}
	if r.Decision == Allow {
		return sub.part.Simple && r.pattern.MatchString(sub.part.Text)
	}
	return slices.ContainsFunc(sub.part.Subjects(), r.pattern.MatchString) || r.pattern.MatchString(sub.line)
}

// pathKeys are the argument names whose string values name a file, in
// the built-in tools and in the field names hooks add.
var pathKeys = []string{"path", "file_path"}

// canonicalArgs is the call's arguments as rule patterns see them
// (canonicalJSON) with each path (pathKeys, at any depth) written as the
// workspace resolves it: a file: URI as its path, cleaned, relative to the
// session's folder when inside it. A rule on "path":"secrets/ so sees
// ./secrets/x, docs/../secrets/x and the absolute path alike, and an allow
// of "path":"docs/ does not cover docs/../secrets/x.
func (c PolicyCall) canonicalArgs() string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return canonicalJSON(c.Args)
	}
	var clean func(v any) any
	clean = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && slices.Contains(pathKeys, k) {
					x[k] = c.workspacePath(s)
				} else {
					x[k] = clean(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = clean(x[i])
			}
		}
		return v
	}
	b, err := json.Marshal(clean(v))
	if err != nil {
		return canonicalJSON(c.Args)
	}
	return canonicalJSON(b)
}

// workspacePath is a path argument as the workspace resolves it, for the
// rules: a file: URI's path, cleaned, relative to the session's folder
// when it lies inside it (slash-separated), else absolute.
func (c PolicyCall) workspacePath(p string) string {
	if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
		p = u.Path
	}
	if p == "" {
		return p
	}
	if !filepath.IsAbs(p) {
		if c.Root == "" {
			return filepath.ToSlash(filepath.Clean(p))
		}
		p = filepath.Join(c.Root, p)
	}
	return relLabel(c.Root, filepath.Clean(p))
}

// canonicalJSON is the arguments as rule patterns see them: compact, keys
// sorted, each key once (the last, as the tools' decoder takes it), HTML
// characters as they are.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers as written, not as float64
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
