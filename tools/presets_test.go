package tools

import (
	"slices"
	"strings"
	"testing"
)

// TestPresetsPerMode spells out, per mode, the tools the preset table of
// docs/DESIGN.md §2 gives it, including plan_mode_respond in plan,
// update_plan where work is carried out and the MCP pair where MCP
// servers may be used.
func TestPresetsPerMode(t *testing.T) {
	ctx := Context{HasMCP: true, Skills: []string{"s"}}
	cases := []struct {
		mode string
		ctx  Context
		want []string
	}{
		{ModeAct, ctx, []string{"read_files", "list_files", "list_code_definitions", "search_codebase", "run_commands",
			"fetch_web_content", "editor", "replace_in_file", "write_to_file", "use_skill", "ask_question", "spawn_agent",
			"update_plan", "use_mcp_tool", "access_mcp_resource"}},
		{ModePlan, ctx, []string{"read_files", "list_files", "list_code_definitions", "search_codebase", "run_commands",
			"fetch_web_content", "use_skill", "ask_question", "spawn_agent", "plan_mode_respond", "update_plan",
			"use_mcp_tool", "access_mcp_resource"}},
		{ModeSearch, ctx, []string{"read_files", "list_files", "list_code_definitions", "search_codebase", "spawn_agent"}},
		{ModeMinimal, ctx, []string{"run_commands", "spawn_agent"}},
		{ModeYolo, ctx, []string{"read_files", "list_files", "list_code_definitions", "run_commands", "editor",
			"replace_in_file", "write_to_file", "submit_and_exit", "update_plan"}},
		{ModeAct, Context{ApplyPatch: true}, []string{"read_files", "list_files", "list_code_definitions",
			"search_codebase", "run_commands", "fetch_web_content", "apply_patch", "write_to_file", "ask_question",
			"spawn_agent", "update_plan"}},
		{ModeSearch, Context{Subagent: true}, []string{"read_files", "list_files", "list_code_definitions", "search_codebase"}},
		// The tools that reach background commands come with the first one.
		{ModeMinimal, Context{Background: true}, []string{"run_commands", "read_command_output", "stop_command", "spawn_agent"}},
		{ModePlan, Context{Background: true}, []string{"read_files", "list_files", "list_code_definitions", "search_codebase",
			"run_commands", "read_command_output", "stop_command", "fetch_web_content", "ask_question", "spawn_agent",
			"plan_mode_respond", "update_plan"}},
	}
	r := builtinRegistry(t)
	for _, c := range cases {
		p, ok := PresetFor(c.mode)
		if !ok {
			t.Fatalf("PresetFor(%s) missing", c.mode)
		}
		if got := names(r.Enabled(p, c.ctx)); !slices.Equal(got, c.want) {
			t.Errorf("%s %+v:\n got %v\nwant %v", c.mode, c.ctx, got, c.want)
		}
	}
	if _, ok := PresetFor("chat"); ok {
		t.Error("PresetFor accepted an unknown mode")
	}
}

func TestPresetSwitches(t *testing.T) {
	cases := []struct {
		mode                                 string
		readOnlyCmds, autoApprove, needsExit bool
	}{
		{ModeAct, false, false, false},
		{ModePlan, true, false, false},
		{ModeSearch, false, false, false},
		{ModeMinimal, false, false, false},
		{ModeYolo, false, true, true},
	}
	for _, c := range cases {
		p, _ := PresetFor(c.mode)
		if p.Name != c.mode || p.ReadOnlyCommands != c.readOnlyCmds || p.AutoApprove != c.autoApprove || p.RequireSubmit != c.needsExit {
			t.Errorf("%s: %+v", c.mode, p)
		}
	}
	if got := Modes(); !slices.Equal(got, []string{"plan", "act", "search", "minimal", "yolo"}) {
		t.Errorf("Modes() = %v", got)
	}
	for _, m := range Modes() {
		if _, ok := PresetFor(m); !ok {
			t.Errorf("mode %s has no preset", m)
		}
	}
}

func TestPresetsAllow(t *testing.T) {
	cases := []struct {
		mode, tool string
		want       bool
	}{
		{"act", "editor", true},
		{"act", "apply_patch", true},
		{"act", "submit_and_exit", false},
		{"act", "plan_mode_respond", false},
		{"plan", "editor", false},
		{"plan", "write_to_file", false},
		{"plan", "write_file", false}, // alias of a tool plan lacks
		{"plan", "plan_mode_respond", true},
		{"plan", "run_commands", true},
		{"plan", "execute_command", true}, // alias
		{"search", "run_commands", false},
		{"search", "fetch_web_content", false},
		{"search", "spawn_agent", true},
		{"minimal", "read_files", false},
		{"minimal", "run_commands", true},
		{"yolo", "submit_and_exit", true},
		{"yolo", "attempt_completion", true},
		{"yolo", "spawn_agent", false},
		{"yolo", "ask_question", false},
		{"act", "github__mcp__create_issue", true},
		{"plan", "github__mcp__create_issue", true},
		{"search", "github__mcp__create_issue", false},
		{"act", "subagent_reviewer", true},
		{"yolo", "subagent_reviewer", false},
		{"act", "no_such_tool", false},
		{"party", "read_files", false},
	}
	for _, c := range cases {
		if got := modeAllows(c.mode, c.tool); got != c.want {
			t.Errorf("modeAllows(%s, %s) = %v, want %v", c.mode, c.tool, got, c.want)
		}
	}
}

func TestNotAvailable(t *testing.T) {
	r := NotAvailable("editor", "plan")
	if r.Content != "tool editor is not available in plan mode" || !r.IsError {
		t.Errorf("NotAvailable = %+v", r)
	}
}

func TestPresetFilterDynamicTools(t *testing.T) {
	var dynamic []Tool
	for _, s := range MCPToolSpecs([]MCPServerTools{{UID: "db", Tools: []MCPToolDef{{Name: "query"}}}}, nil) {
		dynamic = append(dynamic, stubTool{s.Spec})
	}
	for _, s := range SubagentSpecs([]SubagentConfig{{Name: "scout"}}, Context{}, nil) {
		dynamic = append(dynamic, stubTool{s.Spec})
	}
	dynamic = append(dynamic, stubTool{Spec{Name: "stray"}})
	cases := []struct {
		mode string
		ctx  Context
		want []string
	}{
		{ModeAct, Context{}, []string{"db__mcp__query", "subagent_scout"}},
		{ModeSearch, Context{}, []string{"subagent_scout"}},
		{ModeSearch, Context{Subagent: true}, nil},
		{ModeYolo, Context{}, nil},
	}
	for _, c := range cases {
		p, _ := PresetFor(c.mode)
		if got := names(p.Filter(c.ctx, dynamic)); !slices.Equal(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("%s %+v: %v, want %v", c.mode, c.ctx, got, c.want)
		}
	}
}

// TestShortTitleNeverSplitsAWord: a title is cut between words, so a key
// in the text is either whole (and redaction finds it) or left out; a
// word longer than the title is dropped whole.
func TestShortTitleNeverSplitsAWord(t *testing.T) {
	key := "sk-" + strings.Repeat("k", 40)
	for _, c := range []struct{ in, want string }{
		{"fix   the\n build", "fix the build"},
		{strings.Repeat("a", 60), strings.Repeat("a", 60)},
		{strings.Repeat("a", 61), "…"},
		{"use " + key + " now", "use " + key + " now"},
		{"please set up the deploy script with this key " + key, "please set up the deploy script with this key…"},
		{key + key, "…"},
		{strings.Repeat("ab ", 30), strings.TrimSpace(strings.Repeat("ab ", 20)) + "…"},
		{strings.Repeat("é", 59) + " " + key, strings.Repeat("é", 59) + "…"},
	} {
		if got := ShortTitle(c.in); got != c.want {
			t.Errorf("ShortTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// modeAllows reports whether a mode's preset includes the named tool; an
// unknown mode allows nothing.
func modeAllows(mode, toolName string) bool {
	p, ok := PresetFor(mode)
	return ok && p.Allows(toolName)
}
