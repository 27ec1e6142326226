package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
)

// TestRequestFollowsModeAndTools: a session reuses its last request's tool
// definitions and system prompt only while what they are made from holds;
// a new mode, a dynamic tool that appears, and a tool whose description
// changes each show in the next request.
func TestRequestFollowsModeAndTools(t *testing.T) {
	m := &scriptModel{reply: func(int, provider.Request) ([]provider.Event, error) { return textEvents("ok"), nil }}
	var mu sync.Mutex
	var extra []tools.Tool
	dynamic := func(desc string) tools.Tool {
		tool, err := tools.NewTool(tools.Spec{ID: "probe__mcp__look", Name: "probe__mcp__look", Description: desc, Kind: tools.KindRead, ReadOnly: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			func(json.RawMessage) (tools.Invocation, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	s, err := New(Config{ID: "s1", Mode: tools.ModeAct, Provider: m, MaxTurns: 5,
		Host: testHost{extra: func() []tools.Tool { mu.Lock(); defer mu.Unlock(); return extra }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompt := func() provider.Request {
		t.Helper()
		if stop, err := s.Prompt(t.Context(), "go"); err != nil || stop != StopEndTurn {
			t.Fatalf("prompt: %v %v", stop, err)
		}
		reqs := m.requests()
		return reqs[len(reqs)-1]
	}
	names := func(r provider.Request) []string {
		var out []string
		for _, d := range r.Tools {
			out = append(out, d.Name)
		}
		return out
	}
	describe := func(r provider.Request, name string) string {
		for _, d := range r.Tools {
			if d.Name == name {
				return d.Description
			}
		}
		return ""
	}

	act := prompt()
	if !slices.Contains(names(act), tools.NameEditor) {
		t.Fatalf("act request lacks %s: %v", tools.NameEditor, names(act))
	}
	if again := prompt(); again.System != act.System || !slices.Equal(names(again), names(act)) {
		t.Errorf("the same session, mode and tools gave another request")
	}

	if err := s.SetMode(tools.ModePlan); err != nil {
		t.Fatal(err)
	}
	plan := prompt()
	if slices.Contains(names(plan), tools.NameEditor) || plan.System == act.System {
		t.Errorf("after switching to plan the request kept act's tools or prompt: %v", names(plan))
	}

	if err := s.SetMode(tools.ModeAct); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	extra = []tools.Tool{dynamic("Probes the first way.")}
	mu.Unlock()
	withMCP := prompt()
	if got := describe(withMCP, "probe__mcp__look"); got != "Probes the first way." {
		t.Fatalf("a dynamic tool that appeared: description %q in %v", got, names(withMCP))
	}

	mu.Lock()
	extra = []tools.Tool{dynamic("Probes another way.")}
	mu.Unlock()
	if got := describe(prompt(), "probe__mcp__look"); got != "Probes another way." {
		t.Errorf("a dynamic tool whose description changed: %q", got)
	}
}

// TestMCPCallToolsNeedAnMCPTool: use_mcp_tool and access_mcp_resource are
// offered only while an MCP server's tool is there; configured subagents,
// the other dynamic tools, do not bring them (a call would find no server).
func TestMCPCallToolsNeedAnMCPTool(t *testing.T) {
	var mu sync.Mutex
	var extra []tools.Tool
	s, err := New(Config{ID: "s1", Mode: tools.ModeAct,
		Subagents: []tools.SubagentConfig{{Name: "reviewer", Description: "Reviews a change.", Prompt: "Review it."}},
		Host:      testHost{extra: func() []tools.Tool { mu.Lock(); defer mu.Unlock(); return extra }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := func() (mcp, subagent bool) {
		t.Helper()
		_, enabled, err := s.EnabledTools(tools.ModeAct)
		if err != nil {
			t.Fatal(err)
		}
		_, mcp = tools.Pick(enabled, tools.NameUseMCPTool)
		_, res := tools.Pick(enabled, tools.NameAccessMCPResource)
		if mcp != res {
			t.Errorf("use_mcp_tool offered %v, access_mcp_resource %v", mcp, res)
		}
		for _, tool := range enabled {
			subagent = subagent || strings.HasPrefix(tool.Spec().Name, "subagent_")
		}
		return mcp, subagent
	}
	if mcp, sub := offered(); mcp || !sub {
		t.Errorf("with a subagent and no MCP server: MCP call tools offered %v (want false), subagent tool %v (want true)", mcp, sub)
	}
	tool, err := tools.NewTool(tools.Spec{ID: "probe__mcp__look", Name: "probe__mcp__look", Description: "Looks.", Kind: tools.KindRead, ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		func(json.RawMessage) (tools.Invocation, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	extra = []tools.Tool{tool}
	mu.Unlock()
	if mcp, _ := offered(); !mcp {
		t.Error("with an MCP server's tool: the MCP call tools are not offered")
	}
}

// TestToolsAloneTooLarge: when the tool definitions alone do not fit the
// window, the turn fails saying so, with no compaction and no request
// sent, and does not blame the conversation; a short conversation with
// a tool list that fits goes through in the same window.
func TestToolsAloneTooLarge(t *testing.T) {
	m := &scriptModel{
		reply:   func(int, provider.Request) ([]provider.Event, error) { return textEvents("ok"), nil },
		summary: func(provider.Request) (string, error) { return "s", nil },
	}
	var mu sync.Mutex
	var extra []tools.Tool
	setTools := func(n, descBytes int) {
		mu.Lock()
		defer mu.Unlock()
		extra = nil
		for i := range n {
			name := fmt.Sprintf("big__mcp__t%d", i)
			tool, err := tools.NewTool(tools.Spec{ID: name, Name: name, Description: strings.Repeat("d", descBytes), Kind: tools.KindOther,
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
				func(json.RawMessage) (tools.Invocation, error) { return nil, nil })
			if err != nil {
				t.Fatal(err)
			}
			extra = append(extra, tool)
		}
	}
	s, err := New(Config{ID: "s1", Mode: tools.ModeAct, Provider: m, MaxTurns: 5, ContextWindow: 32000,
		Host: testHost{extra: func() []tools.Tool { mu.Lock(); defer mu.Unlock(); return extra }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	setTools(100, 2000) // about 200 kB: far over a 32k-token window
	_, err = s.Prompt(t.Context(), "hi")
	if !errors.Is(err, ErrToolsTooLarge) || errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "102 of them MCP tools") {
		t.Fatalf("prompt with too many tools: %v; want ErrToolsTooLarge counting the MCP tools", err)
	}
	if len(m.requests()) != 0 || m.summaries != 0 {
		t.Errorf("%d requests and %d compactions for a prompt that cannot fit", len(m.requests()), m.summaries)
	}
	setTools(3, 100)
	if stop, err := s.Prompt(t.Context(), "hi"); err != nil || stop != StopEndTurn {
		t.Fatalf("prompt with a few tools: %v %v", stop, err)
	}
}

// TestToolsTooLargeForTheLearnedWindow: when the provider refuses a
// request as too long and names a window the tools alone do not fit,
// nothing is compacted and the turn fails blaming the tools.
func TestToolsTooLargeForTheLearnedWindow(t *testing.T) {
	m := &scriptModel{
		reply:   func(int, provider.Request) ([]provider.Event, error) { return nil, errTooLong },
		summary: func(provider.Request) (string, error) { return "s", nil },
	}
	var extra []tools.Tool
	for i := range 60 {
		name := fmt.Sprintf("big__mcp__t%d", i)
		tool, err := tools.NewTool(tools.Spec{ID: name, Name: name, Description: strings.Repeat("d", 2000), Kind: tools.KindOther,
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			func(json.RawMessage) (tools.Invocation, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, tool)
	}
	// The configured window fits about 40k tokens of tools; the
	// provider's 30,000 does not.
	s, err := New(Config{ID: "s1", Mode: tools.ModeAct, Provider: m, MaxTurns: 5, ContextWindow: 200000,
		Host: testHost{extra: func() []tools.Tool { return extra }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	history := []provider.Message{provider.UserText("earlier"), {Role: provider.RoleAssistant, Parts: []provider.Part{{Text: "ok"}}}}
	s.history = history
	_, err = s.Prompt(t.Context(), "hi")
	if !errors.Is(err, ErrToolsTooLarge) {
		t.Fatalf("prompt: %v; want ErrToolsTooLarge", err)
	}
	if m.summaries != 0 {
		t.Errorf("%d compactions of a conversation that is not the problem", m.summaries)
	}
}
