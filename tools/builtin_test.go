package tools

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinSpecsMatchDesignTable checks each built-in tool's parameters
// against the inputs docs/DESIGN.md §2 lists for it.
func TestBuiltinSpecsMatchDesignTable(t *testing.T) {
	want := []struct {
		name     string
		props    []string
		required []string
	}{
		{"read_files", []string{"files"}, []string{"files"}},
		{"list_files", []string{"path", "recursive"}, []string{"path"}},
		{"search_codebase", []string{"queries", "path", "file_pattern"}, []string{"queries"}},
		{"list_code_definitions", []string{"path"}, []string{"path"}},
		{"run_commands", []string{"commands", "timeout", "background", "sandbox"}, []string{"commands"}},
		{"read_command_output", []string{"id"}, []string{"id"}},
		{"stop_command", []string{"id"}, []string{"id"}},
		{"editor", []string{"path", "old_text", "new_text", "insert_line"}, []string{"path", "new_text"}},
		{"replace_in_file", []string{"path", "diff"}, []string{"path", "diff"}},
		{"apply_patch", []string{"input"}, []string{"input"}},
		{"write_to_file", []string{"path", "content"}, []string{"path", "content"}},
		{"fetch_web_content", []string{"requests"}, []string{"requests"}},
		{"ask_question", []string{"question", "options"}, []string{"question", "options"}},
		{"submit_and_exit", []string{"summary", "verified"}, []string{"summary", "verified"}},
		{"plan_mode_respond", []string{"response", "needs_more_exploration"}, []string{"response"}},
		{"update_plan", []string{"entries"}, []string{"entries"}},
		{"use_skill", []string{"skill", "args"}, []string{"skill"}},
		{"spawn_agent", []string{"prompt"}, []string{"prompt"}},
		{"use_mcp_tool", []string{"server_name", "tool_name", "arguments"}, []string{"server_name", "tool_name"}},
		{"access_mcp_resource", []string{"server_name", "uri"}, []string{"server_name", "uri"}},
		{"find_references", []string{"path", "symbol", "line", "column"}, []string{"path"}},
		{"go_to_definition", []string{"path", "symbol", "line", "column"}, []string{"path"}},
		{"document_symbols", []string{"path"}, []string{"path"}},
		{"rename_symbol", []string{"path", "symbol", "line", "column", "new_name"}, []string{"path", "new_name"}},
	}
	specs := BuiltinSpecs()
	if len(specs) != len(want) {
		t.Errorf("BuiltinSpecs() has %d tools, want %d", len(specs), len(want))
	}
	for i, w := range want {
		s, ok := BuiltinSpec(w.name)
		if !ok {
			t.Errorf("BuiltinSpec(%q) missing", w.name)
			continue
		}
		if i < len(specs) && specs[i].Name != w.name {
			t.Errorf("BuiltinSpecs()[%d] = %s, want %s (table order)", i, specs[i].Name, w.name)
		}
		tree, err := parseNode(s.Parameters)
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if got := tree.get("type"); got == nil || got.str != "object" {
			t.Errorf("%s: schema type is not object", w.name)
		}
		if got := tree.get("properties").keys; !slices.Equal(got, w.props) {
			t.Errorf("%s: properties %v, want %v", w.name, got, w.props)
		}
		if got := tree.get("required").strings(); !slices.Equal(got, w.required) {
			t.Errorf("%s: required %v, want %v", w.name, got, w.required)
		}
	}
}

// TestBuiltinSpecDetails checks the nested parts of the table's inputs:
// item schemas, enums and bounds.
func TestBuiltinSpecDetails(t *testing.T) {
	cases := []struct {
		tool, pointer, want string
	}{
		{"read_files", "files.items.required", `["path"]`},
		{"read_files", "files.items.properties.start_line", `{"type":"integer","minimum":1}`},
		{"read_files", "files.minItems", `1`},
		{"run_commands", "commands.items", `{"type":"string"}`},
		{"run_commands", "timeout", `{"type":"integer","minimum":1}`},
		{"editor", "insert_line", `{"type":"integer","minimum":1}`},
		{"fetch_web_content", "requests.items.required", `["url","prompt"]`},
		{"ask_question", "options", `{"type":"array","minItems":2,"maxItems":5,"items":{"type":"string"}}`},
		{"submit_and_exit", "verified", `{"type":"boolean"}`},
		{"update_plan", "entries.items.properties.status.enum", `["pending","in_progress","completed"]`},
		{"update_plan", "entries.items.properties.priority.enum", `["high","medium","low"]`},
		{"use_mcp_tool", "arguments", `{"type":"object"}`},
	}
	for _, c := range cases {
		s, _ := BuiltinSpec(c.tool)
		n, _ := parseNode(s.Parameters)
		n = n.get("properties")
		for _, part := range strings.Split(c.pointer, ".") {
			n = n.get(part)
		}
		if n == nil {
			t.Errorf("%s: %s missing", c.tool, c.pointer)
			continue
		}
		if got := string(appendNode(nil, n, nil)); got != c.want {
			t.Errorf("%s: %s = %s, want %s", c.tool, c.pointer, got, c.want)
		}
	}
}

func TestBuiltinSpecsUsable(t *testing.T) {
	placeholder := regexp.MustCompile(`\{\{[A-Z]+\}\}`)
	known := []string{"{{CWD}}", "{{OS}}", "{{SHELL}}", "{{MODE}}", "{{SKILLS}}"}
	for _, s := range BuiltinSpecs() {
		if s.ID != s.Name || s.DisplayName == "" || s.Kind == "" {
			t.Errorf("%s: ID %q, DisplayName %q, Kind %q", s.Name, s.ID, s.DisplayName, s.Kind)
		}
		if s.Description == "" || strings.TrimSpace(s.Description) != s.Description {
			t.Errorf("%s: description empty or not trimmed", s.Name)
		}
		for _, p := range placeholder.FindAllString(s.Description, -1) {
			if !slices.Contains(known, p) {
				t.Errorf("%s: unknown placeholder %s", s.Name, p)
			}
		}
		if !json.Valid(s.Parameters) {
			t.Errorf("%s: parameters are not JSON", s.Name)
		}
		if _, err := NewTool(s, nil); err != nil {
			t.Errorf("NewTool(%s): %v", s.Name, err)
		}
	}
	if _, ok := BuiltinSpec("read_file"); ok {
		t.Error("BuiltinSpec resolved a legacy alias; it should take exact names only")
	}
}

func TestBuiltinKindsAndApprovals(t *testing.T) {
	// docs/DESIGN.md §2: read, search, list, ask, plan and submit run without
	// asking; edits, commands, web and MCP ask.
	cases := map[string]bool{
		"read_files": true, "list_files": true, "search_codebase": true, "list_code_definitions": true,
		"ask_question": true, "update_plan": true, "plan_mode_respond": true, "submit_and_exit": true,
		"editor": false, "replace_in_file": false, "apply_patch": false, "write_to_file": false,
		"run_commands": false, "fetch_web_content": false, "use_mcp_tool": false, "access_mcp_resource": false,
	}
	for name, ro := range cases {
		s, _ := BuiltinSpec(name)
		if s.ReadOnly != ro {
			t.Errorf("%s: ReadOnly = %v, want %v", name, s.ReadOnly, ro)
		}
	}
	kinds := map[string]Kind{"read_files": KindRead, "search_codebase": KindSearch, "run_commands": KindExecute,
		"editor": KindEdit, "apply_patch": KindEdit, "fetch_web_content": KindFetch}
	for name, k := range kinds {
		if s, _ := BuiltinSpec(name); s.Kind != k {
			t.Errorf("%s: Kind = %s, want %s", name, s.Kind, k)
		}
	}
}

func TestBuiltinSpecsAreFresh(t *testing.T) {
	a := BuiltinSpecs()
	a[0].Description = "changed"
	a[0].Parameters[0] = 'x'
	b := BuiltinSpecs()
	if b[0].Description == "changed" || b[0].Parameters[0] == 'x' {
		t.Error("BuiltinSpecs shares state between calls")
	}
}

func TestTrainedOnApplyPatch(t *testing.T) {
	cases := map[string]bool{
		"gpt-5": true, "gpt-5-mini": true, "openai/gpt-5.1-codex": true, "codex-mini-latest": true,
		"GPT-5": true, "gpt-4.1": false, "claude-sonnet-4-5": false, "gemini-2.5-pro": false, "": false,
	}
	for model, want := range cases {
		if got := TrainedOnApplyPatch(model); got != want {
			t.Errorf("TrainedOnApplyPatch(%q) = %v, want %v", model, got, want)
		}
	}
}
