package acppeer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// fakeCaller answers the terminal requests from answers (by method, as
// JSON) and records what it was sent.
type fakeCaller struct {
	mu      sync.Mutex
	answers map[string]string
	fail    map[string]error
	sent    []string // method and params
}

func (f *fakeCaller) Call(_ context.Context, method string, params, result any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(params)
	f.sent = append(f.sent, method+" "+string(b))
	if err := f.fail[method]; err != nil {
		return err
	}
	if a, ok := f.answers[method]; ok && result != nil {
		return json.Unmarshal([]byte(a), result)
	}
	return nil
}

func TestTerminalRoundTrip(t *testing.T) {
	c := &fakeCaller{answers: map[string]string{
		MethodTerminalCreate: `{"terminalId":"t1"}`,
		MethodTerminalWait:   `{"exitCode":2}`,
		MethodTerminalOutput: `{"output":"hi","truncated":true,"exitStatus":{"signal":"SIGTERM"}}`,
	}}
	p := New(c, Caps{Terminal: true}, Options{})
	term := p.Terminal("s1")
	if term == nil {
		t.Fatal("no terminal for a client that offers one")
	}
	ctx := context.Background()
	id, err := term.Create(ctx, tools.TerminalSpec{Command: "make", Args: []string{"test"}, CWD: "/w", Env: []string{"A=b=c"}, OutputByteLimit: 10})
	if err != nil || id != "t1" {
		t.Fatalf("Create = %q, %v", id, err)
	}
	if want := `terminal/create {"sessionId":"s1","command":"make","args":["test"],"env":[{"name":"A","value":"b=c"}],"cwd":"/w","outputByteLimit":10}`; c.sent[0] != want {
		t.Errorf("create sent\n%s\nwant\n%s", c.sent[0], want)
	}
	x, err := term.WaitForExit(ctx, id)
	if err != nil || x.ExitCode == nil || *x.ExitCode != 2 {
		t.Errorf("WaitForExit = %+v, %v", x, err)
	}
	out, err := term.Output(ctx, id)
	if err != nil || out.Output != "hi" || !out.Truncated || out.Exit == nil || out.Exit.Signal != "SIGTERM" {
		t.Errorf("Output = %+v, %v", out, err)
	}
	if err := term.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := term.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range c.sent {
		if strings.HasPrefix(s, MethodTerminalRelease) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("released %d times, want once: %v", n, c.sent)
	}
}

func TestTerminalsStillOpenAreReleased(t *testing.T) {
	c := &fakeCaller{answers: map[string]string{MethodTerminalCreate: `{"terminalId":"t1"}`}}
	p := New(c, Caps{Terminal: true}, Options{})
	ctx := context.Background()
	if _, err := p.Terminal("s").Create(ctx, tools.TerminalSpec{Command: "sleep"}); err != nil {
		t.Fatal(err)
	}
	var written []string
	p.AbandonTerminals(func(method string, params any) error {
		b, _ := json.Marshal(params)
		written = append(written, method+" "+string(b))
		return nil
	})
	if len(written) != 1 || written[0] != `terminal/release {"sessionId":"s","terminalId":"t1"}` {
		t.Fatalf("abandoned %v", written)
	}
	p.ReleaseTerminals(ctx) // none left
	if last := c.sent[len(c.sent)-1]; strings.HasPrefix(last, MethodTerminalRelease) {
		t.Errorf("a terminal released twice: %v", c.sent)
	}
}

func TestTerminalErrorsCarryTheClientsReason(t *testing.T) {
	c := &fakeCaller{fail: map[string]error{MethodTerminalCreate: errors.New("raw")}, answers: map[string]string{}}
	p := New(c, Caps{Terminal: true}, Options{Reason: func(error) string { return "no shell" }})
	if _, err := p.Terminal("s").Create(context.Background(), tools.TerminalSpec{Command: "x"}); err == nil || err.Error() != "no shell" {
		t.Errorf("err = %v, want the client's reason", err)
	}
	c.fail = nil
	c.answers[MethodTerminalCreate] = `{}`
	if _, err := p.Terminal("s").Create(context.Background(), tools.TerminalSpec{Command: "x"}); err == nil {
		t.Error("an answer with no terminalId was taken")
	}
}

func TestNoTerminalUnlessOffered(t *testing.T) {
	if New(nil, Caps{}, Options{}).Terminal("s") != nil {
		t.Error("a terminal for a client that offers none")
	}
	if New(nil, Caps{Terminal: true}, Options{}).Terminal("") != nil {
		t.Error("a terminal with no session")
	}
}

func TestPeerSaysWhatACPDoes(t *testing.T) {
	p := New(nil, Caps{}, Options{})
	m, params := p.CancelNotice(json.RawMessage(`"a"`))
	b, _ := json.Marshal(params)
	if m != "$/cancel_request" || string(b) != `{"requestId":"a"}` {
		t.Errorf("cancel notice = %s %s", m, b)
	}
	if p.Messages() {
		t.Error("an ACP peer takes messages")
	}
	p.Waiting("m")()
	cmds := p.Commands()
	if len(cmds) != 4 || cmds[0].Name != "compact" {
		t.Errorf("commands = %v", cmds)
	}
	cmds[0].Name = "changed"
	if p.Commands()[0].Name != "compact" {
		t.Error("Commands hands out the package's own list")
	}
	p.BeginTurn(context.Background(), "s", "t", nil)("", nil)
	p.Report("s", wire.ToolCall{})
}

func TestLevels(t *testing.T) {
	for value, want := range map[string]string{"ask": "configured", "yolo": "all", "edits": "edits", "sandbox": "sandbox"} {
		if got, ok := ResolveLevel(value); !ok || got != want {
			t.Errorf("ResolveLevel(%q) = %q, %v; want %q", value, got, ok, want)
		}
	}
	if _, ok := ResolveLevel("sometimes"); ok {
		t.Error("an unknown level resolved")
	}
	if LevelIDs() != "configured, edits, sandbox, all" {
		t.Errorf("LevelIDs = %q", LevelIDs())
	}
	var a session.Approvals
	ApplyLevel("edits", &a)
	if a.Read != session.Allow || a.Edit != session.Allow {
		t.Errorf("edits level: %+v", a)
	}
}

func TestChoices(t *testing.T) {
	var c Choices
	if c.Level("s") != DefaultLevel {
		t.Fatal("a session with no choice has a level")
	}
	c.SetLevel("s", "all")
	if c.Level("s") != "all" {
		t.Fatal("level not kept")
	}
	c.Forget("s")
	if c.Level("s") != DefaultLevel {
		t.Fatal("level kept after Forget")
	}
}

func TestConfigOptions(t *testing.T) {
	opts := ConfigOptions(Current{Mode: "plan", Level: "edits", NoSandbox: "no bubblewrap"})
	if len(opts) != 2 || opts[0].ID != ConfigMode || opts[0].CurrentValue != "plan" || opts[1].ID != ConfigApprovals {
		t.Fatalf("options without a model = %+v", opts)
	}
	var sandbox string
	for _, v := range opts[1].Options {
		if v.Value == "sandbox" {
			sandbox = v.Description
		}
	}
	if !strings.Contains(sandbox, "no bubblewrap") {
		t.Errorf("the sandbox level does not say there is none: %q", sandbox)
	}
	opts = ConfigOptions(Current{Mode: "act", HasModel: true, Model: "m1", Models: []string{"m1", "m2"}, Level: "configured"})
	if len(opts) != 3 || opts[1].ID != ConfigModel || opts[1].CurrentValue != "m1" || len(opts[1].Options) != 2 {
		t.Fatalf("options with a model = %+v", opts)
	}
	if got := ModelChoices([]string{"a", ""}, []string{"b", "a"}, nil, []string{"c"}); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("ModelChoices = %v", got)
	}
}

func TestUpdateLocatesToolCalls(t *testing.T) {
	locate := func(l []wire.Location) []wire.Location {
		out := make([]wire.Location, len(l))
		for i, x := range l {
			x.Path = "/w/" + x.Path
			out[i] = x
		}
		return out
	}
	p := New(nil, Caps{}, Options{Locate: locate})
	if u := p.Update(wire.ToolCall{Locations: []wire.Location{{Path: "a.go"}}}).(wire.ToolCall); u.Locations[0].Path != "/w/a.go" {
		t.Errorf("tool call located at %v", u.Locations)
	}
	if u := p.Update(wire.ToolCallUpdate{Locations: []wire.Location{{Path: "b.go"}}}).(wire.ToolCallUpdate); u.Locations[0].Path != "/w/b.go" {
		t.Errorf("tool call update located at %v", u.Locations)
	}
	if u := p.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "a.go"}}).(wire.AgentMessageChunk); u.Content.(wire.TextBlock).Text != "a.go" {
		t.Errorf("a message changed: %+v", u)
	}
}
