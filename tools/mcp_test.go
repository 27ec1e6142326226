package tools

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func mcpNames(specs []MCPToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Spec.Name)
	}
	return out
}

func TestMCPToolNames(t *testing.T) {
	cases := []struct {
		uid, tool, want string
	}{
		{"github", "create_issue", "github__mcp__create_issue"},
		{"fs", "files.read/all", "fs__mcp__files_read_all"},
		{"9srv", "ping", "_9srv__mcp__ping"},
		{"srv", "übersicht", "srv__mcp___bersicht"},
		{"my-srv", "get-it", "my-srv__mcp__get-it"},
	}
	for _, c := range cases {
		logger, buf := logBuffer()
		specs := MCPToolSpecs([]MCPServerTools{{UID: c.uid, Tools: []MCPToolDef{{Name: c.tool}}}}, logger)
		if len(specs) != 1 {
			t.Fatalf("%s/%s: %d specs", c.uid, c.tool, len(specs))
		}
		s := specs[0]
		if s.Spec.Name != c.want || s.Spec.ID != c.want || s.Server != c.uid || s.Tool != c.tool {
			t.Errorf("%s/%s: %+v, want name %s", c.uid, c.tool, s, c.want)
		}
		if s.Spec.DisplayName != c.tool || !strings.Contains(s.Spec.Description, c.tool) || s.Spec.ReadOnly {
			t.Errorf("%s/%s: display %q, description %q, read-only %v", c.uid, c.tool, s.Spec.DisplayName, s.Spec.Description, s.Spec.ReadOnly)
		}
		if buf.Len() != 0 {
			t.Errorf("%s/%s: unexpected log %s", c.uid, c.tool, buf)
		}
	}
}

func TestMCPLongNames(t *testing.T) {
	uid := "company-internal-knowledge-base"
	tools := []MCPToolDef{
		{Name: "search_documents_by_semantic_similarity_with_filters"},
		{Name: "search_documents_by_semantic_similarity_with_facets"},
		{Name: strings.Repeat("x", 200)},
	}
	logger, buf := logBuffer()
	specs := MCPToolSpecs([]MCPServerTools{{UID: uid, Tools: tools}}, logger)
	if len(specs) != len(tools) {
		t.Fatalf("%d specs for %d tools: long names must not be dropped", len(specs), len(tools))
	}
	seen := map[string]bool{}
	for _, s := range specs {
		n := s.Spec.Name
		if len(n) > MaxToolNameLen || !strings.Contains(n, mcpSeparator) || !strings.HasPrefix(n, "company-internal") {
			t.Errorf("shortened name %q (%d characters)", n, len(n))
		}
		if seen[n] {
			t.Errorf("two long names shortened to %q", n)
		}
		seen[n] = true
		if !strings.Contains(buf.String(), "tool="+s.Tool) {
			t.Errorf("no log line for shortening %s", s.Tool)
		}
		if !ModeAllows(ModeAct, n) {
			t.Errorf("act mode does not allow shortened %s", n)
		}
	}
	if strings.Count(buf.String(), "shortened") != len(tools) {
		t.Errorf("log:\n%s", buf)
	}
	// Stable: the same input always gives the same names.
	again := MCPToolSpecs([]MCPServerTools{{UID: uid, Tools: tools}}, logger)
	if !slices.Equal(mcpNames(specs), mcpNames(again)) {
		t.Errorf("names changed between calls: %v, %v", mcpNames(specs), mcpNames(again))
	}
	// A very long UID still leaves room for the tool's name.
	specs = MCPToolSpecs([]MCPServerTools{{UID: strings.Repeat("u", 100), Tools: []MCPToolDef{{Name: "lookup_customer_record"}}}}, logger)
	if n := specs[0].Spec.Name; len(n) > MaxToolNameLen || !strings.Contains(n, "__mcp__lookup_customer_record") {
		t.Errorf("long UID: %q", n)
	}
}

func TestMCPCollisionsAreDeterministic(t *testing.T) {
	servers := []MCPServerTools{
		{UID: "b", Tools: []MCPToolDef{{Name: "x_y"}, {Name: "x.y"}, {Name: "x-y"}}},
		{UID: "a", Tools: []MCPToolDef{{Name: "q"}}},
		{UID: "a.b", Tools: []MCPToolDef{{Name: "t"}}},
		{UID: "a_b", Tools: []MCPToolDef{{Name: "t"}}},
	}
	want := []string{"a__mcp__q", "a_b__mcp__t", "a_b__mcp__t_2", "b__mcp__x-y", "b__mcp__x_y", "b__mcp__x_y_2"}
	wantTools := []string{"q", "t", "t", "x-y", "x.y", "x_y"}

	logger, buf := logBuffer()
	got := MCPToolSpecs(servers, logger)
	if !slices.Equal(mcpNames(got), want) {
		t.Errorf("names %v, want %v", mcpNames(got), want)
	}
	for i, s := range got {
		if s.Tool != wantTools[i] {
			t.Errorf("%s routes to tool %s, want %s", s.Spec.Name, s.Tool, wantTools[i])
		}
	}
	if strings.Count(buf.String(), "renamed") != 2 {
		t.Errorf("want two rename log lines:\n%s", buf)
	}

	// The same servers and tools listed in another order name alike.
	reversed := slices.Clone(servers)
	slices.Reverse(reversed)
	for i := range reversed {
		reversed[i].Tools = slices.Clone(reversed[i].Tools)
		slices.Reverse(reversed[i].Tools)
	}
	if again := MCPToolSpecs(reversed, logger); !slices.Equal(mcpNames(again), want) {
		t.Errorf("reordered input gave %v, want %v", mcpNames(again), want)
	}

	// A suffix on a name already at the length limit keeps it in bounds.
	used := map[string]bool{strings.Repeat("n", 64): true}
	if got := uniqueName(strings.Repeat("n", 64), used); len(got) != 64 || !strings.HasSuffix(got, "_2") {
		t.Errorf("uniqueName at the limit = %q", got)
	}
}

func TestMCPDisabledAndBrokenServers(t *testing.T) {
	logger, buf := logBuffer()
	specs := MCPToolSpecs([]MCPServerTools{
		{UID: "off", Disabled: true, Tools: []MCPToolDef{{Name: "t"}}},
		{UID: "on", Tools: []MCPToolDef{
			{Name: "dup", Description: "first"},
			{Name: "dup", Description: "second"},
			{Name: "array", InputSchema: json.RawMessage(`{"type":"array"}`)},
			{Name: "broken", InputSchema: json.RawMessage(`{"type":`)},
			{Name: "none", InputSchema: json.RawMessage(`null`)},
		}},
	}, logger)
	if got := mcpNames(specs); !slices.Equal(got, []string{"on__mcp__dup", "on__mcp__none"}) {
		t.Errorf("names %v", got)
	}
	if specs[0].Spec.Description != "first" {
		t.Errorf("duplicate kept %q, want the first", specs[0].Spec.Description)
	}
	if string(specs[1].Spec.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("null schema became %s", specs[1].Spec.Parameters)
	}
	log := buf.String()
	for _, want := range []string{"tool=dup", "tool=array", "tool=broken"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "server=off") {
		t.Errorf("disabled server was looked at:\n%s", log)
	}
}

func TestMCPSchemaKeptWhole(t *testing.T) {
	logger, _ := logBuffer()
	specs := MCPToolSpecs([]MCPServerTools{{UID: "github", Tools: []MCPToolDef{{Name: "create_issue", InputSchema: json.RawMessage(issueSchema)}}}}, logger)
	if !bytes.Equal(specs[0].Spec.Parameters, []byte(issueSchema)) {
		t.Errorf("schema changed:\n%s", specs[0].Spec.Parameters)
	}
	tool, err := NewTool(specs[0].Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Render(FormatAnthropic, []Tool{tool}, Context{})
	for _, want := range []string{`"format":"uri"`, `"enum":[1,2,3]`, `"$ref":"#/$defs/user"`, `"$defs":{"user"`,
		`"meta":{"type":"object","properties":{"estimate"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("anthropic rendering lacks %s", want)
		}
	}
	// The server's schema validates calls: enum and nested required.
	_, err = tool.Build(json.RawMessage(`{"title":"t","priority":5,"owner":{}}`))
	if err == nil || !strings.Contains(err.Error(), "owner.login: required") || !strings.Contains(err.Error(), "priority: must be one of 1, 2, 3, got 5") {
		t.Errorf("Build: %v", err)
	}
}
