package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/toolspec"
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
		if !modeAllows(ModeAct, n) {
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
	out, _ := Render(toolspec.FormatAnthropic, []Tool{tool}, Context{})
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

// manyTools makes n tools named <prefix>0000... with descriptions of
// descBytes bytes.
func manyTools(prefix string, n, descBytes int) []MCPToolDef {
	out := make([]MCPToolDef, n)
	for i := range out {
		out[i] = MCPToolDef{Name: fmt.Sprintf("%s%04d", prefix, i), Description: strings.Repeat("d", descBytes), InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return out
}

// offeredBytes sums what MCPLimits counts of the specs, less the notes
// MCPOffer adds.
func offeredBytes(specs []MCPToolSpec) int {
	n := 0
	for _, sp := range specs {
		desc, _, _ := strings.Cut(sp.Spec.Description, "\n\n(MCP server ")
		n += len(sp.Tool) + len(desc) + len(sp.Spec.Parameters)
	}
	return n
}

// TestMCPOfferLimits: every way a tool list can be too big (one server's
// count, all servers' count, one tool's bytes, all tools' bytes) leaves
// tools out within the limits, names the server, and tells the model.
func TestMCPOfferLimits(t *testing.T) {
	lim := DefaultMCPLimits
	cases := []struct {
		name    string
		servers []MCPServerTools
		offered map[string]int // per server
		says    map[string]string
	}{{
		name: "one server, 1000 tools, 2 MB of descriptions",
		servers: []MCPServerTools{
			{UID: "big", Tools: manyTools("t", 1000, 2000)},
			{UID: "small", Tools: manyTools("s", 3, 10)},
		},
		offered: map[string]int{"small": 3},
		says:    map[string]string{"big": `MCP server "big" lists 1000 tools;`},
	}, {
		name:    "count per server",
		servers: []MCPServerTools{{UID: "wide", Tools: manyTools("t", 500, 10)}},
		offered: map[string]int{"wide": lim.PerServer},
		says:    map[string]string{"wide": fmt.Sprintf("436 past the limit of %d tools per server", lim.PerServer)},
	}, {
		name: "count of all servers, shared out",
		servers: []MCPServerTools{
			{UID: "a", Tools: manyTools("t", 60, 10)}, {UID: "b", Tools: manyTools("t", 60, 10)},
			{UID: "c", Tools: manyTools("t", 60, 10)}, {UID: "d", Tools: manyTools("t", 2, 10)},
		},
		offered: map[string]int{"a": 33, "b": 33, "c": 32, "d": 2},
		says:    map[string]string{"a": fmt.Sprintf("past the limit of %d MCP tools in all", lim.Total), "b": "33 are offered", "c": `MCP server "c" lists 60 tools; 32 are offered`},
	}, {
		name: "one tool too big",
		servers: []MCPServerTools{{UID: "fat", Tools: append(manyTools("ok", 2, 10),
			MCPToolDef{Name: "huge", Description: strings.Repeat("x", lim.ToolBytes)})}},
		offered: map[string]int{"fat": 2},
		says:    map[string]string{"fat": "1 over 16384 bytes of description and schema each): huge."},
	}, {
		name:    "a schema alone too big",
		servers: []MCPServerTools{{UID: "s", Tools: []MCPToolDef{{Name: "q", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", lim.ToolBytes) + `"}`)}}}},
		offered: map[string]int{},
		says:    map[string]string{"s": `MCP server "s" lists 1 tools; 0 are offered`},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logger, logs := logBuffer()
			specs, left := MCPOffer(c.servers, lim, logger)
			if len(specs) > lim.Total {
				t.Errorf("%d tools offered, more than %d", len(specs), lim.Total)
			}
			if n := offeredBytes(specs); n > lim.TotalBytes {
				t.Errorf("%d bytes offered, more than %d", n, lim.TotalBytes)
			}
			per := map[string]int{}
			for _, sp := range specs {
				per[sp.Server]++
			}
			for srv, want := range c.offered {
				if per[srv] != want {
					t.Errorf("server %s: %d tools offered, want %d", srv, per[srv], want)
				}
			}
			for srv, want := range c.says {
				i := slices.IndexFunc(left, func(l MCPLeftOut) bool { return l.Server == srv })
				if i < 0 || !strings.Contains(left[i].Message, want) {
					t.Errorf("left out = %+v, want one for %s saying %q", left, srv, want)
					continue
				}
				if !strings.Contains(logs.String(), "server="+srv) {
					t.Errorf("nothing logged for %s:\n%s", srv, logs.String())
				}
				// The model is told, once, in a tool's description.
				told := 0
				for _, sp := range specs {
					told += strings.Count(sp.Spec.Description, left[i].Message)
				}
				if len(specs) > 0 && told != 1 {
					t.Errorf("the model is told about %s %d times, want once", srv, told)
				}
			}
			for _, l := range left {
				if _, ok := c.says[l.Server]; !ok {
					t.Errorf("unexpected left out: %+v", l)
				}
			}
		})
	}
	// Within the limits nothing is left out or added.
	specs, left := MCPOffer([]MCPServerTools{{UID: "x", Tools: manyTools("t", 20, 100)}}, lim, nil)
	if len(specs) != 20 || len(left) != 0 || strings.Contains(specs[0].Spec.Description, "(MCP server") {
		t.Errorf("a list within the limits: %d specs, left out %+v", len(specs), left)
	}
}
