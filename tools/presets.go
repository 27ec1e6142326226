package tools

import (
	"fmt"
	"slices"
	"strings"
)

// Modes (session/set_mode ids), each with the preset of the same name.
const (
	ModePlan    = "plan"
	ModeAct     = "act"
	ModeSearch  = "search"
	ModeMinimal = "minimal"
	ModeYolo    = "yolo"
)

// Group is a set of tools that a preset switches on or off together.
type Group string

// Tool groups, the columns of the preset table in docs/DESIGN.md §2. The
// first nine are the switches modes mostly differ by; GroupPlan, GroupTodo
// and GroupMCP hold plan mode's answer, the todo list and the MCP pair.
const (
	GroupRead     Group = "read"
	GroupSearch   Group = "search"
	GroupCommands Group = "commands"
	GroupWeb      Group = "web"
	// GroupEditor holds both editing variants; ContextRequirements keep
	// editor and replace_in_file, or apply_patch (Context.ApplyPatch).
	GroupEditor Group = "editor"
	GroupSkills Group = "skills"
	GroupAsk    Group = "ask"
	GroupSubmit Group = "submit"
	GroupSpawn  Group = "spawn"
	// GroupPlan is plan mode's answer tool.
	GroupPlan Group = "plan"
	// GroupTodo is the todo list, for the modes that carry out work.
	GroupTodo Group = "todo"
	// GroupMCP is the generic MCP pair; per-server <uid>__mcp__<tool>
	// tools are allowed wherever it is.
	GroupMCP Group = "mcp"
)

// Tools returns the IDs of the group's tools.
func (g Group) Tools() []string {
	switch g {
	case GroupRead:
		return []string{NameReadFiles, NameListFiles, NameListCodeDefinitions, NameFindReferences, NameGoToDefinition, NameDocumentSymbols}
	case GroupSearch:
		return []string{NameSearchCodebase}
	case GroupCommands:
		return []string{NameRunCommands, NameReadCommandOutput, NameStopCommand}
	case GroupWeb:
		return []string{NameFetchWebContent}
	case GroupEditor:
		return []string{NameEditor, NameReplaceInFile, NameApplyPatch, NameWriteToFile, NameRenameSymbol}
	case GroupSkills:
		return []string{NameUseSkill}
	case GroupAsk:
		return []string{NameAskQuestion}
	case GroupSubmit:
		return []string{NameSubmitAndExit}
	case GroupSpawn:
		return []string{NameSpawnAgent}
	case GroupPlan:
		return []string{NamePlanModeRespond}
	case GroupTodo:
		return []string{NameUpdatePlan}
	case GroupMCP:
		return []string{NameUseMCPTool, NameAccessMCPResource}
	}
	return nil
}

// Preset is the tool set of a mode plus the switches that change how its
// turns run. Registry.Enabled resolves Tools for a context.
type Preset struct {
	Name string
	// Tools are tool IDs, in the order the model is shown them.
	Tools []string
	// ReadOnlyCommands: run_commands may only run commands that change no
	// files (plan mode); the policy enforces it.
	ReadOnlyCommands bool
	// AutoApprove: every call runs without asking (yolo).
	AutoApprove bool
	// RequireSubmit: a reply without tool calls does not end the turn;
	// only a result with EndsTurn does (yolo).
	RequireSubmit bool
}

// NewPreset returns a preset whose tools are those of groups, in order.
func NewPreset(name string, groups ...Group) Preset {
	p := Preset{Name: name}
	for _, g := range groups {
		p.Tools = append(p.Tools, g.Tools()...)
	}
	return p
}

// ModeInfo describes a mode to the user.
type ModeInfo struct {
	ID, Name, Description string
}

// modeInfo is the one list of modes, in the order clients show them.
var modeInfo = []ModeInfo{
	{ModePlan, "Plan", "Explore and propose a plan; no edits"},
	{ModeAct, "Act", "Carry out the task, asking before edits and commands"},
	{ModeSearch, "Search", "Read and search only"},
	{ModeMinimal, "Minimal", "Commands only"},
	{ModeYolo, "Yolo", "Act without asking until the task is submitted"},
}

// AllModes describes every mode, in the order clients show them.
func AllModes() []ModeInfo { return append([]ModeInfo(nil), modeInfo...) }

// Modes lists the mode names, in the order clients show them.
func Modes() []string {
	out := make([]string, len(modeInfo))
	for i, m := range modeInfo {
		out[i] = m.ID
	}
	return out
}

// ShortTitle is text on one line, cut to 60 characters: how a prompt or
// an argument is shown as a title (sessions, progress, tool calls), cut
// between words (cutWords): a word cut in two would leave the start of a
// key that redaction, which scrubs whole values, no longer recognises.
func ShortTitle(text string) string {
	return cutWords(strings.Join(strings.Fields(text), " "), 60)
}

// PresetFor returns the preset of a mode (docs/DESIGN.md §2, presets table).
func PresetFor(mode string) (Preset, bool) {
	switch mode {
	case ModeAct:
		return NewPreset(mode, GroupRead, GroupSearch, GroupCommands, GroupWeb, GroupEditor,
			GroupSkills, GroupAsk, GroupSpawn, GroupTodo, GroupMCP), true
	case ModePlan:
		p := NewPreset(mode, GroupRead, GroupSearch, GroupCommands, GroupWeb,
			GroupSkills, GroupAsk, GroupSpawn, GroupPlan, GroupTodo, GroupMCP)
		p.ReadOnlyCommands = true
		return p, true
	case ModeSearch:
		return NewPreset(mode, GroupRead, GroupSearch, GroupSpawn), true
	case ModeMinimal:
		return NewPreset(mode, GroupCommands, GroupSpawn), true
	case ModeYolo:
		p := NewPreset(mode, GroupRead, GroupCommands, GroupEditor, GroupSubmit, GroupTodo)
		p.AutoApprove = true
		p.RequireSubmit = true
		return p, true
	}
	return Preset{}, false
}

// Allows reports whether the preset includes the named tool, resolving
// legacy aliases. Dynamic tools follow their generic tool: an MCP server
// tool (<uid>__mcp__<tool>) is allowed with use_mcp_tool, a subagent_<name>
// tool with spawn_agent.
func (p Preset) Allows(toolName string) bool {
	switch {
	case strings.Contains(toolName, mcpSeparator):
		toolName = NameUseMCPTool
	case strings.HasPrefix(toolName, subagentPrefix):
		toolName = NameSpawnAgent
	}
	if slices.Contains(p.Tools, toolName) {
		return true
	}
	to, ok := Alias(toolName)
	return ok && slices.Contains(p.Tools, to)
}

// Filter returns the tools among ts that the preset allows and whose
// ContextRequirements hold in ctx, in their order. It is how dynamic tools
// (MCPToolSpecs, SubagentSpecs, built with NewTool) join a mode's tool
// list: append(reg.Enabled(p, ctx), p.Filter(ctx, dynamic)...).
func (p Preset) Filter(ctx Context, ts []Tool) []Tool {
	var out []Tool
	for _, t := range ts {
		s := t.Spec()
		if p.Allows(s.Name) && (s.ContextRequirements == nil || s.ContextRequirements(ctx)) {
			out = append(out, t)
		}
	}
	return out
}

// ModeAllows reports whether a mode's preset includes the named tool. An
// unknown mode allows nothing.
func ModeAllows(mode, toolName string) bool {
	p, ok := PresetFor(mode)
	return ok && p.Allows(toolName)
}

// NotAvailable is the result a call gets when the current mode lacks the
// tool: an error the model can act on, and nothing is executed.
func NotAvailable(toolName, mode string) Result {
	return Result{Content: fmt.Sprintf("tool %s is not available in %s mode", toolName, mode), IsError: true}
}
