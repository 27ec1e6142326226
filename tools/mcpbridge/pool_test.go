package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// askLog answers the questions it is asked in order and records them.
type askLog struct {
	answers []string
	asked   []string
}

func (a *askLog) ask(_ context.Context, q string, _ []string) (string, bool, error) {
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		return "", false, nil
	}
	x := a.answers[0]
	a.answers = a.answers[1:]
	return x, true, nil
}

func TestPoolElicitAsksPerField(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"Your name"},
		"age":{"type":"integer"},
		"ok":{"type":"boolean"}},"required":["name"]}`)
	for _, tc := range []struct {
		name        string
		can, free   bool
		answers     []string
		wantAction  string
		wantContent map[string]any
	}{
		{"no way to ask", false, false, nil, ElicitDecline, nil},
		{"dismissed", true, true, nil, ElicitCancel, nil},
		{"declined", true, true, []string{"Decline"}, ElicitDecline, nil},
		{"answered", true, true, []string{"Answer", "ann", "42", "true"}, ElicitAccept, map[string]any{"name": "ann", "age": 42.0, "ok": true}},
		{"required text the client cannot take", true, false, []string{"Answer"}, ElicitCancel, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &askLog{answers: tc.answers}
			p := NewPool(PoolConfig{CanAsk: func() (bool, bool) { return tc.can, tc.free }, Ask: a.ask})
			action, content := poolElicitor{p}.Elicit(context.Background(), "srv", "who?", schema)
			if action != tc.wantAction || tc.wantContent != nil && !reflect.DeepEqual(content, tc.wantContent) {
				t.Fatalf("Elicit = %s %v, want %s %v (asked %q)", action, content, tc.wantAction, tc.wantContent, a.asked)
			}
			if tc.can && len(a.asked) > 0 && a.asked[0] != "MCP server srv asks: who?" {
				t.Errorf("first question %q", a.asked[0])
			}
		})
	}
}

func TestElicitValue(t *testing.T) {
	for _, tc := range []struct {
		typ, in string
		want    any
	}{
		{"boolean", "true", true}, {"boolean", "no", false},
		{"number", " 2.5 ", 2.5}, {"integer", "x", "x"}, {"string", "7", "7"},
	} {
		if got := elicitValue(tc.typ, tc.in); got != tc.want {
			t.Errorf("elicitValue(%s, %q) = %v, want %v", tc.typ, tc.in, got, tc.want)
		}
	}
}

func TestPoolSamplerAsksBeforeLending(t *testing.T) {
	req := SampleRequest{Messages: []SampleMessage{{Role: "user", Text: "hi sk-secret"}}, MaxTokens: 10}
	lent := 0
	lend := func(context.Context, SampleRequest) (SampleResult, error) {
		lent++
		return SampleResult{Text: "hello"}, nil
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[key]") }

	p := NewPool(PoolConfig{CanAsk: func() (bool, bool) { return false, false }, Ask: (&askLog{}).ask, Lend: lend})
	if _, err := (poolSampler{p}).Sample(context.Background(), "srv", req); err == nil || !strings.Contains(err.Error(), "no way to ask") {
		t.Errorf("without a way to ask: %v", err)
	}
	deny := &askLog{answers: []string{"Deny"}}
	p = NewPool(PoolConfig{CanAsk: func() (bool, bool) { return true, false }, Ask: deny.ask, Lend: lend, Redact: redact})
	if _, err := (poolSampler{p}).Sample(context.Background(), "srv", req); err == nil {
		t.Error("denied, and lent")
	}
	if len(deny.asked) != 1 || strings.Contains(deny.asked[0], "sk-secret") || !strings.Contains(deny.asked[0], "[key]") {
		t.Errorf("asked %q: want one question, redacted", deny.asked)
	}
	allow := &askLog{answers: []string{"Allow"}}
	p = NewPool(PoolConfig{CanAsk: func() (bool, bool) { return true, false }, Ask: allow.ask, Lend: lend})
	if res, err := (poolSampler{p}).Sample(context.Background(), "srv", req); err != nil || res.Text != "hello" || lent != 1 {
		t.Errorf("allowed: %+v %v, lent %d times", res, err, lent)
	}
}

type fakeCaller struct {
	method string
	params any
	ok     bool
	err    error
}

func (c *fakeCaller) Call(_ context.Context, method string, params, result any) error {
	c.method, c.params = method, params
	if c.err != nil {
		return c.err
	}
	result.(*showDocumentResult).Success = c.ok
	return nil
}

func TestPoolSignInWays(t *testing.T) {
	var shown, logged []string
	cfg := func(way SignInWay, c Caller) PoolConfig {
		return PoolConfig{
			SignIn: func() SignInWay { return way }, Caller: c,
			ShowMessage: func(_ wire.MessageType, m string) { shown = append(shown, m) },
			LogMessage:  func(_ context.Context, _ wire.MessageType, m string) { logged = append(logged, m) },
		}
	}
	ctx := context.Background()
	if err := NewPool(cfg(SignInTerminal, nil)).signIn(ctx, "gh", "https://x/auth"); err == nil || !strings.Contains(err.Error(), "cline-ls mcp login gh") {
		t.Errorf("terminal: %v", err)
	}
	if err := NewPool(cfg(SignInMessage, nil)).signIn(ctx, "gh", "https://x/auth"); err != nil || len(shown) != 1 || !strings.Contains(shown[0], "open https://x/auth") {
		t.Errorf("message: %v, shown %q", err, shown)
	}
	c := &fakeCaller{ok: true}
	if err := NewPool(cfg(SignInShowDocument, c)).signIn(ctx, "gh", "https://x/auth"); err != nil {
		t.Errorf("showDocument: %v", err)
	}
	if c.method != "window/showDocument" || c.params != (showDocumentParams{URI: "https://x/auth", External: true}) || len(logged) != 1 {
		t.Errorf("sent %s %+v, logged %q", c.method, c.params, logged)
	}
	if err := NewPool(cfg(SignInShowDocument, &fakeCaller{})).signIn(ctx, "gh", "u"); err == nil {
		t.Error("an editor that could not open the page: no error")
	}
	if err := NewPool(cfg(SignInShowDocument, &fakeCaller{err: errors.New("gone")})).signIn(ctx, "gh", "u"); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a failed request: %v", err)
	}
}

func TestPoolWithoutServers(t *testing.T) {
	p := NewPool(PoolConfig{})
	if p.For(nil) != nil || p.Commands(nil) != nil {
		t.Fatal("servers in an empty pool")
	}
	extra, builtins := p.Tools(nil)
	if extra() != nil {
		t.Error("tools in an empty pool")
	}
	var ve *tools.ValidationError
	if _, err := builtins[tools.NameUseMCPTool](json.RawMessage(`{}`)); !errors.As(err, &ve) || ve.Problems[0].Message != "no MCP server is configured" {
		t.Errorf("use_mcp_tool: %v", err)
	}
	if _, err := p.PromptText(context.Background(), nil, "/mcp:a:b x"); err == nil || !strings.Contains(err.Error(), "/mcp:a:b names an MCP prompt") {
		t.Errorf("PromptText: %v", err)
	}
	if m, err := p.Start(nil, ""); m != nil || err != nil {
		t.Errorf("Start of none: %v %v", m, err)
	}
	if err := p.SetConn(nil, "settings.mcpServers"); err != nil {
		t.Errorf("SetConn of none: %v", err)
	}
	p.SetRoots([]string{"/w"})
	p.Close()
}

func TestPoolConfigErrorNamesTheField(t *testing.T) {
	children := 0
	p := NewPool(PoolConfig{Children: func() { children++ }})
	err := p.SetConn([]json.RawMessage{json.RawMessage(`{"name":"x"}`)}, "settings.mcpServers")
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "settings.mcpServers") {
		t.Fatalf("SetConn of a bad config: %v", err)
	}
	if children != 1 {
		t.Errorf("Children called %d times before starting, want 1", children)
	}
	if _, err := p.Start([]json.RawMessage{json.RawMessage(`7`)}, "/w"); !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "mcpServers") {
		t.Errorf("Start of a bad config: %v", err)
	}
}

func TestPoolSharesAndDropsManagers(t *testing.T) {
	p := NewPool(PoolConfig{})
	conn := &Manager{}
	own := &Manager{}
	p.conn = conn
	p.sessions = []*Manager{own}
	if p.For(nil) != conn || p.For(own) != own {
		t.Fatal("For picks the wrong servers")
	}
	if got := p.all(false); len(got) != 2 {
		t.Fatalf("all = %d managers, want 2", len(got))
	}
}
