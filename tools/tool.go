// Package tools holds tool specs, the per-family registry, presets and the
// one list of modes, argument validation, the converters to each
// provider's tool shape, the built-in tools, a session's background
// commands and the specs of MCP servers' tools (the MCP client is
// tools/mcpbridge's). It never imports rpc or session: what a tool
// needs from the editor or the user comes in through interfaces declared
// here.
//
// A session uses it in this order:
//   - at start-up, NewRegistry and RegisterBuiltins (implementations are
//     attached by tool name; Builtin and NewTool do it for one tool);
//   - per mode, PresetFor and Registry.Enabled, plus Preset.Filter for the
//     dynamic tools made from MCPToolSpecs and SubagentSpecs;
//   - per model request, Render in the provider's format (FormatFor);
//   - per call, Pick among the enabled tools (NotAvailable if it fails),
//     Tool.Build, which validates, then the Invocation.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/cline-ls/cline-ls/diff"
)

// Kind classifies a tool call for the client, as ACP's ToolKind does.
type Kind string

// Tool kinds (PROTOCOL.md §3).
const (
	KindRead       Kind = "read"
	KindEdit       Kind = "edit"
	KindDelete     Kind = "delete"
	KindMove       Kind = "move"
	KindSearch     Kind = "search"
	KindExecute    Kind = "execute"
	KindThink      Kind = "think"
	KindFetch      Kind = "fetch"
	KindSwitchMode Kind = "switch_mode"
	KindOther      Kind = "other"
)

// Family is a model family a tool variant is registered for.
type Family string

// Model families (docs/DESIGN.md §2).
const (
	FamilyGeneric Family = "generic"
	FamilyNextGen Family = "next-gen"
	FamilyXS      Family = "xs"
)

// Context is what a tool's requirements, descriptions and templates may
// depend on: the session's mode and environment.
type Context struct {
	Mode        string // plan, act, search, minimal, yolo
	Family      Family
	CWD         string
	OS          string
	Shell       string
	NativeTools bool // the provider takes native tool definitions
	Subagent    bool // running inside a subagent: no subagent tools
	Skills      []string
	HasMCP      bool
	// ApplyPatch selects apply_patch instead of editor and replace_in_file,
	// for models trained on that patch grammar (see TrainedOnApplyPatch).
	ApplyPatch bool
	// Background: the session holds background commands, so the tools
	// that read and stop them are offered (Background.Len).
	Background bool
	// LSP is what the client's editor answers of its language servers
	// (PROTOCOL.md §11: LSPReferences, …); each enables its tools.
	LSP []string
}

// Spec describes a tool to the registry, the converters and the model.
type Spec struct {
	// ID is the stable identifier presets refer to; usually equal to Name.
	ID string
	// Name is what the model sees and calls.
	Name        string
	DisplayName string
	// Description may hold the placeholders Expand fills ({{CWD}},
	// {{OS}}, {{SHELL}}, {{MODE}}, {{SKILLS}}), filled at render time.
	Description string
	// Parameters is the JSON Schema of the arguments (an object schema).
	Parameters json.RawMessage
	// ContextRequirements, when set, must hold for the tool to be enabled.
	ContextRequirements func(Context) bool
	Kind                Kind
	// ReadOnly calls may run in parallel and need no approval by default.
	ReadOnly bool
}

// Tool is a spec plus its implementation.
type Tool interface {
	Spec() Spec
	// Build validates raw arguments and returns an invocation ready to
	// describe and run. Invalid arguments give a *ValidationError, which
	// the model is shown so it can fix its call; nothing runs.
	Build(raw json.RawMessage) (Invocation, error)
}

// Invocation is one validated call of a tool.
type Invocation interface {
	// Describe says what the call will do, for the tool_call update and
	// the approval request. It may read files (to compute a preview diff)
	// but never changes anything.
	Describe(ctx context.Context) Description
	// Execute runs the call. Model-fixable failures are a Result with
	// IsError; a returned error is a fault of the daemon.
	Execute(ctx context.Context, opts ExecOptions) (Result, error)
}

// CommandRunner is an invocation that runs shell commands. Commands
// returns them exactly as they will run, after validation and coercion
// (a bare string or a JSON list inside a string become the list), so that
// the mode's guard and the approval rules judge what runs and never the
// raw arguments.
type CommandRunner interface {
	Commands() []string
}

// Sandboxable is an invocation that can run its commands confined by the
// sandbox (internal/sandbox): WantsSandbox is false when the call asks to
// run outside it (run_commands' sandbox: false), which the policy asks
// the user about at the sandbox level.
type Sandboxable interface {
	WantsSandbox() bool
}

// Fetcher is an invocation that fetches URLs: URLs returns them as they
// will be fetched, for the approval rules and "always" answers, which are
// scoped to the hosts.
type Fetcher interface {
	URLs() []*url.URL
}

// ReadablePreview is the preview for a client that only shows it:
// PreviewText, or a Preview short enough when a tool set only that.
func (d Description) ReadablePreview() string {
	if d.PreviewText != "" || len(d.Preview) > diff.MaxDiffBytes {
		return d.PreviewText
	}
	return d.Preview
}

// Description is an invocation's account of itself.
type Description struct {
	Title     string
	Kind      Kind
	Locations []Location
	// Preview is a unified diff of the change an edit would make, or empty
	// (diff.Preview: exact up to a megabyte, for clients that apply it).
	Preview string
	// PreviewText is the preview for a client that only shows it, at most
	// some tens of KiB (diff.PreviewText); empty when Preview is.
	PreviewText string
	// Changes are the file changes an edit would make, computed from the
	// current texts (for clients that show diffs themselves, like ACP's
	// diff content).
	Changes []Change
	// Command is the shell command a run_commands call would run, or empty.
	Command string
	// Refusal, when set, says why the call cannot succeed on the current
	// texts (an edit whose text is no longer there, a refused path); the
	// call then fails with it before anyone is asked to approve it.
	Refusal string
}

// Paths lists the files the call touches, from its locations and changes
// (a move's destination included), each once.
func (d Description) Paths() []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, l := range d.Locations {
		add(l.Path)
	}
	for _, c := range d.Changes {
		add(c.Path)
		add(c.MoveTo)
	}
	return out
}

// Location is a file (and optionally a 1-based line) a call touches.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// ExecOptions carries what a running call may use besides its context.
type ExecOptions struct {
	// Output receives streamed output while the call runs; may be nil.
	Output func(chunk string)
	// Sandboxed: the policy allowed the call only inside the sandbox
	// (session.Verdict.Sandboxed). A Sandboxable call that cannot confine
	// its commands then fails rather than run them unconfined.
	Sandboxed bool
	// Terminal is told the id of each client terminal the call runs a
	// command in (ClientTerminals), for the call's card to embed; may be
	// nil.
	Terminal func(terminalID string)
}

// Result is what the model is shown for a call.
type Result struct {
	Content string
	IsError bool
	// Edits lists the files an edit call changed, for cline/diff.
	Edits []FileEdit
	// Images are images for the model to see (read_files on a picture),
	// in the order Content names them.
	Images []Image
	// EndsTurn asks the turn loop to stop once this result is recorded:
	// submit_and_exit sets it, and plan_mode_respond unless the model said
	// it needs more exploration. The loop keys on results, not tool names.
	EndsTurn bool
	// Commands are the outcomes of the commands a run_commands call ran,
	// in order, for the session's record of what failed.
	Commands []CommandOutcome
}

// CommandOutcome is how one command of a run_commands call ended.
type CommandOutcome struct {
	Command string
	// Status is the status line the model was shown ("[exit code 2,
	// 0.31s]"), without its brackets.
	Status string
	OK     bool
}

// FileEdit records one applied change to one file.
type FileEdit struct {
	Path    string
	OldText string
	NewText string
	// Diff is the compact line diff (docs/DESIGN.md §4).
	Diff    string
	Added   int
	Removed int
}

// Errorf returns a model-facing error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}
