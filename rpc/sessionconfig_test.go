package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

// These tests drive the configuration part alone, given fakes for what
// newSessionConfig takes from the server; the end-to-end behaviour is
// acp_config_test.go's and the models tests'.

// namedModel is a model client that only names its model.
type namedModel struct {
	provider.Provider
	model string
}

func (m namedModel) Name() string  { return "openai" }
func (m namedModel) Model() string { return m.model }

// configRig is a sessionConfig over one session, recording what it
// sends and what it runs in the background.
type configRig struct {
	c       *sessionConfig
	ls      *liveSession
	st      settings.Settings
	models  settings.Models
	mu      sync.Mutex
	updates []wire.SessionUpdate
	after   []func(context.Context)
	bg      int
	cmds    []wire.AvailableCommand
}

func newConfigRig(t *testing.T) *configRig {
	t.Helper()
	sess, err := session.New(session.Config{ID: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &configRig{st: settings.Settings{Provider: &settings.ProviderSettings{Name: "openai", Model: "gpt-a", Models: []string{"gpt-b"}}}}
	policy, err := session.NewPolicy(policyConfig(r.st))
	if err != nil {
		t.Fatal(err)
	}
	r.ls = &liveSession{Session: sess, policy: policy}
	r.models.Switch("s1", namedModel{model: "gpt-a"}, nil, r.st.Provider)
	r.c = &sessionConfig{
		settings: func() settings.Settings { return r.st },
		models:   &r.models,
		lists:    settings.NewModelLists(func(string) string { return "" }, nil, nil),
		newProvider: func(model string) (provider.Provider, error) {
			if model == "" {
				model = r.st.Provider.Model
			}
			return namedModel{model: model}, nil
		},
		getSession: func(id string) (*liveSession, error) {
			if id != "s1" {
				return nil, invalidParams("sessionId: no session %q is open", id)
			}
			return r.ls, nil
		},
		sessions: func() []*liveSession { return []*liveSession{r.ls} },
		sendUpdate: func(id string, u wire.SessionUpdate) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.updates = append(r.updates, u)
		},
		afterReply:   func(_ jsonrpc2.ID, fn func(context.Context)) { r.after = append(r.after, fn) },
		goBackground: func(func()) bool { r.bg++; return true },
		bgCtx:        context.Background(),
		commands:     func() []wire.AvailableCommand { return r.cmds },
		mcpCommands: func(*liveSession) []wire.AvailableCommand {
			return []wire.AvailableCommand{{Name: "mcp.prompt"}}
		},
		undo:   func(context.Context, *liveSession) (string, error) { return "undone", nil },
		redact: func(s string) string { return s },
		serveSetMode: func(raw []byte) (any, error) {
			return wire.Empty{}, r.ls.SetMode("plan")
		},
	}
	return r
}

func (r *configRig) sent() []wire.SessionUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wire.SessionUpdate(nil), r.updates...)
}

func current(opts []wire.ConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		out[o.ID] = o.CurrentValue
	}
	return out
}

func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.InvalidParams || !strings.Contains(rpcErr.Message, want) {
		t.Fatalf("err = %v, want -32602 naming %q", err, want)
	}
}

func TestSessionConfigSetsModelFromItsChoices(t *testing.T) {
	r := newConfigRig(t)
	res, err := r.c.setConfigOption([]byte(`{"sessionId":"s1","configId":"model","value":"gpt-b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := current(res.(wire.SetConfigOptionResult).ConfigOptions)[acppeer.ConfigModel]; got != "gpt-b" {
		t.Errorf("model option = %q, want gpt-b", got)
	}
	if got := r.models.Of("s1").Shown(); got != "gpt-b" {
		t.Errorf("next turn's model = %q, want gpt-b", got)
	}
	_, err = r.c.setConfigOption([]byte(`{"sessionId":"s1","configId":"model","value":"gpt-z"}`))
	wantInvalid(t, err, "value: model must be one of ")
}

func TestSessionConfigRefusesBadOptions(t *testing.T) {
	r := newConfigRig(t)
	for raw, want := range map[string]string{
		`{"configId":"mode","value":"plan"}`:                            "sessionId",
		`{"sessionId":"s2","configId":"mode","value":"plan"}`:           "no session",
		`{"sessionId":"s1","configId":"mode","value":true}`:             "value: mode takes",
		`{"sessionId":"s1","configId":"colour","value":"red"}`:          "configId: unknown option",
		`{"sessionId":"s1","configId":"approvals","value":"sometimes"}`: "value: approvals must be one of",
		`{"sessionId":"s1","configId":"mode","value":"nap"}`:            "value:",
	} {
		_, err := r.c.setConfigOption([]byte(raw))
		wantInvalid(t, err, want)
	}
	if len(r.sent()) != 0 {
		t.Errorf("refused options sent %v", r.sent())
	}
}

func TestSessionConfigApprovalLevelIsTheSessions(t *testing.T) {
	r := newConfigRig(t)
	res, err := r.c.setConfigOption([]byte(`{"sessionId":"s1","configId":"approvals","value":"edits"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := current(res.(wire.SetConfigOptionResult).ConfigOptions)[acppeer.ConfigApprovals]; got != "edits" {
		t.Errorf("approvals option = %q, want edits", got)
	}
	if r.c.Level("s1") != "edits" || r.c.Level("s2") != acppeer.DefaultLevel {
		t.Errorf("levels = %q, %q", r.c.Level("s1"), r.c.Level("s2"))
	}
}

func TestSessionConfigSetModeTellsTheOptions(t *testing.T) {
	r := newConfigRig(t)
	if _, err := r.c.acpSetMode([]byte(`{"sessionId":"s1","modeId":"plan"}`)); err != nil {
		t.Fatal(err)
	}
	sent := r.sent()
	if len(sent) != 1 {
		t.Fatalf("sent %v, want one config_option_update", sent)
	}
	u, ok := sent[0].(wire.ConfigOptionUpdate)
	if !ok || current(u.ConfigOptions)[acppeer.ConfigMode] != "plan" {
		t.Errorf("sent %#v, want the options with mode plan", sent[0])
	}
}

func TestSessionConfigWithConfigAddsOptionsThenCommands(t *testing.T) {
	r := newConfigRig(t)
	r.cmds = []wire.AvailableCommand{{Name: "undo"}}
	res, err := r.c.withConfig(jsonrpc2.NewNumberID(1), wire.NewSessionResult{SessionID: "s1"}, "s1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	body := string(raw)
	if !strings.Contains(body, `"configOptions":[`) || !strings.Contains(body, `"sessionId":"s1"`) {
		t.Errorf("answer = %s, want the session's and its options", body)
	}
	if len(r.sent()) != 0 || len(r.after) != 1 {
		t.Fatalf("before the answer: sent %v, %d after the reply", r.sent(), len(r.after))
	}
	r.after[0](context.Background())
	sent := r.sent()
	u, ok := sent[0].(wire.AvailableCommandsUpdate)
	if len(sent) != 1 || !ok || len(u.AvailableCommands) != 2 || u.AvailableCommands[0].Name != "undo" || u.AvailableCommands[1].Name != "mcp.prompt" {
		t.Errorf("after the answer sent %#v, want ours then the MCP prompts", sent)
	}
	if r.bg != 1 {
		t.Errorf("models listing fetched %d times in the background, want 1", r.bg)
	}
	if _, err := r.c.withConfig(jsonrpc2.NewNumberID(2), wire.NewSessionResult{SessionID: "s2"}, "s2"); err == nil {
		t.Error("withConfig of no session answered")
	}
}

func TestSessionConfigCommands(t *testing.T) {
	r := newConfigRig(t)
	r.c.sendAvailableCommands()
	if _, ok, err := r.c.acpCommand(context.Background(), r.ls, "/undo"); ok || err != nil || len(r.sent()) != 0 {
		t.Fatalf("a client without commands: ok %v, err %v, sent %v", ok, err, r.sent())
	}
	r.cmds = []wire.AvailableCommand{{Name: "undo"}, {Name: "plan"}}
	if _, ok, _ := r.c.acpCommand(context.Background(), r.ls, "undo the last change"); ok {
		t.Error("a prompt that is not a command ran as one")
	}
	res, ok, err := r.c.acpCommand(context.Background(), r.ls, " /plan ")
	if !ok || err != nil || res.(wire.PromptResult).StopReason != string(session.StopEndTurn) {
		t.Fatalf("/plan: %v, %v, %v", res, ok, err)
	}
	if r.ls.Mode() != "plan" {
		t.Errorf("mode = %q after /plan", r.ls.Mode())
	}
	if _, _, err := r.c.acpCommand(context.Background(), r.ls, "/undo"); err != nil {
		t.Fatal(err)
	}
	sent := r.sent()
	if len(sent) != 3 {
		t.Fatalf("sent %#v, want the options and two messages", sent)
	}
	if _, ok := sent[0].(wire.ConfigOptionUpdate); !ok {
		t.Errorf("first sent %#v, want the options", sent[0])
	}
	if m, ok := sent[2].(wire.AgentMessageChunk); !ok || m.Content.(wire.TextBlock).Text != "undone" {
		t.Errorf("last sent %#v, want undo's message", sent[2])
	}
	r.c.sendAvailableCommands()
	if u, ok := r.sent()[3].(wire.AvailableCommandsUpdate); !ok || len(u.AvailableCommands) != 3 {
		t.Errorf("commands sent %#v", r.sent()[3])
	}
}

func TestSessionConfigFollowsTheSettings(t *testing.T) {
	r := newConfigRig(t)
	r.c.modelSettingsChanged([]*liveSession{r.ls})
	if len(r.sent()) != 0 {
		t.Fatalf("unchanged settings sent %v", r.sent())
	}
	r.st.Provider = &settings.ProviderSettings{Name: "openai", Model: "gpt-c"}
	r.c.modelSettingsChanged([]*liveSession{r.ls})
	if got := r.models.Of("s1").Shown(); got != "gpt-c" {
		t.Errorf("next turn's model = %q, want the settings' gpt-c", got)
	}
	if len(r.sent()) != 1 {
		t.Errorf("sent %v, want one config_option_update", r.sent())
	}
}

// TestSessionConfigAnswerIsTheMergedOne: the typed answer withConfig
// gives is, byte for byte, the sessions part's answer with configOptions
// merged into it as a JSON object.
func TestSessionConfigAnswerIsTheMergedOne(t *testing.T) {
	r := newConfigRig(t)
	modes := sessionModes("plan")
	for _, res := range []any{wire.NewSessionResult{SessionID: "s1", Modes: modes}, wire.ModesResult{Modes: modes}} {
		got, err := r.c.withConfig(jsonrpc2.NewNumberID(1), res, "s1")
		if err != nil {
			t.Fatal(err)
		}
		gotJSON, _ := json.Marshal(got)
		var merged map[string]json.RawMessage
		body, _ := json.Marshal(res)
		if err := json.Unmarshal(body, &merged); err != nil {
			t.Fatal(err)
		}
		merged["configOptions"], _ = json.Marshal(r.c.options(r.ls))
		wantJSON, _ := json.Marshal(merged)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("answer to %T:\n got %s\nwant %s", res, gotJSON, wantJSON)
		}
	}
}
