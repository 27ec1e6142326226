package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// selects returns the current value of each select option by id.
func selects(opts []acp.SessionConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.Select != nil {
			out[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	return out
}

func setOption(ctx context.Context, conn *acp.ClientSideConnection, id acp.SessionId, config, value string) (acp.SetSessionConfigOptionResponse, error) {
	return conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: acp.SessionConfigId(config), Value: acp.SessionConfigValueId(value)}})
}

// isInvalidParams reports whether err is a -32602 answer whose message
// contains want.
func isInvalidParams(err error, want string) bool {
	var re *acp.RequestError
	return errors.As(err, &re) && re.Code == -32602 && strings.Contains(re.Message, want)
}

// waitUpdate waits until the client has received an update f accepts.
func waitUpdate(t *testing.T, ctx context.Context, c *acpClient, what string, f func(acp.SessionUpdate) bool) {
	t.Helper()
	for {
		c.mu.Lock()
		for _, u := range c.updates {
			if f(u.Update) {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			t.Fatalf("no %s; got %d updates", what, len(c.updates))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// acpSchema returns the ACP schema of the conformance data beside the
// repository, or nil, saying so, when the data is absent. The tests that
// use it check the daemon's behaviour first and its messages' shapes
// second: without the data they leave out only the second (checkWire
// does nothing then), rather than skipping whole.
func acpSchema(t *testing.T) *shared.ACPSchema {
	t.Helper()
	if _, err := shared.Find(); err != nil {
		t.Logf("no ACP schema (%v): the messages are not checked against it", err)
		return nil
	}
	return shared.LoadACPSchema(t)
}

// checkWire validates every message the daemon sent against the schema
// (none without it: see acpSchema), and fails when there are fewer than
// min.
func checkWire(t *testing.T, schema *shared.ACPSchema, wire interface{ String() string }, wireMu *sync.Mutex, sent *teeWriter, min int) {
	t.Helper()
	wireMu.Lock()
	lines := strings.Split(strings.TrimSpace(wire.String()), "\n")
	wireMu.Unlock()
	if len(lines) < min {
		t.Fatalf("only %d messages on the wire, want at least %d", len(lines), min)
	}
	if schema == nil {
		return
	}
	requests := sent.requestMethods()
	for _, line := range lines {
		if err := schema.Check(line, requests); err != nil {
			t.Errorf("message does not validate against the ACP schema: %v\n%s", err, line)
		}
	}
}

// TestACPConfigOptions: session/new answers with the mode, model and
// approval options and sends the commands after its answer; a model
// chosen through session/set_config_option serves the next request;
// set_mode and the mode option keep each other's clients informed; every
// message validates against the ACP schema.
func TestACPConfigOptions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := acpSchema(t)
	var mu sync.Mutex
	var models []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost { // the daemon's models listing: none here
			http.NotFound(w, r)
			return
		}
		var body struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		models = append(models, body.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	cfgDir := t.TempDir()
	os.MkdirAll(filepath.Join(cfgDir, "cline-ls"), 0o755)
	os.WriteFile(filepath.Join(cfgDir, "cline-ls", "config.json"), []byte(`{"provider": {"models": ["model-two"]}}`), 0o644)
	root := t.TempDir()
	c := &acpClient{files: map[string]string{}}
	conn, wire, wireMu, sent := acpDaemon(t, c, "CLINE_LS_PROVIDER=openai-compatible", "CLINE_LS_MODEL=model-one",
		"CLINE_LS_BASE_URL="+srv.URL, "CLINE_LS_API_KEY_ENV=TEST_KEY", "TEST_KEY=sk-test",
		"XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+cfgDir)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := selects(sess.ConfigOptions); got["mode"] != "act" || got["model"] != "model-one" || got["approvals"] != "configured" {
		t.Fatalf("session/new configOptions = %v", got)
	}
	var modelValues []string
	for _, o := range sess.ConfigOptions {
		if o.Select != nil && o.Select.Id == "model" && o.Select.Options.Ungrouped != nil {
			for _, v := range *o.Select.Options.Ungrouped {
				modelValues = append(modelValues, string(v.Value))
			}
		}
	}
	if strings.Join(modelValues, ",") != "model-one,model-two" {
		t.Errorf("model choices = %v, want the settings' model and provider.models", modelValues)
	}

	waitUpdate(t, ctx, c, "available_commands_update", func(u acp.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		var names []string
		for _, cmd := range u.AvailableCommandsUpdate.AvailableCommands {
			names = append(names, cmd.Name)
		}
		return strings.Join(names, ",") == "compact,undo,plan,act"
	})

	res, err := setOption(ctx, conn, sess.SessionId, "model", "model-two")
	if err != nil {
		t.Fatal(err)
	}
	if got := selects(res.ConfigOptions)["model"]; got != "model-two" {
		t.Errorf("model after set_config_option = %q", got)
	}
	if _, err := setOption(ctx, conn, sess.SessionId, "model", "no-such-model"); err == nil || !strings.Contains(err.Error(), "model-one") || !strings.Contains(err.Error(), "model-two") {
		t.Errorf("an unknown model: err = %v, want the choices named", err)
	}
	if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(models, ",")
	mu.Unlock()
	if got != "model-two" {
		t.Errorf("the model server was asked for %q, want model-two", got)
	}

	if res, err = setOption(ctx, conn, sess.SessionId, "approvals", "all"); err != nil || selects(res.ConfigOptions)["approvals"] != "all" {
		t.Errorf("approvals: %v %v", selects(res.ConfigOptions), err)
	}
	// PROTOCOL.md §12's names of the levels are taken too.
	for _, vw := range [][2]string{{"sandbox", "sandbox"}, {"ask", "configured"}, {"yolo", "all"}} {
		value, want := vw[0], vw[1]
		if res, err = setOption(ctx, conn, sess.SessionId, "approvals", value); err != nil || selects(res.ConfigOptions)["approvals"] != want {
			t.Errorf("approvals %s: %v %v, want %s", value, selects(res.ConfigOptions), err, want)
		}
	}
	if _, err := setOption(ctx, conn, sess.SessionId, "approvals", "sometimes"); !isInvalidParams(err, "configured, edits, sandbox, all") {
		t.Errorf("an unknown approval level: err = %v, want invalid params naming the levels", err)
	}
	if _, err := setOption(ctx, conn, sess.SessionId, "colour", "red"); !isInvalidParams(err, "configId") {
		t.Errorf("an unknown option: err = %v, want invalid params naming configId", err)
	}

	if res, err = setOption(ctx, conn, sess.SessionId, "mode", "plan"); err != nil || selects(res.ConfigOptions)["mode"] != "plan" {
		t.Fatalf("mode option: %v %v", selects(res.ConfigOptions), err)
	}
	if got := selects(res.ConfigOptions)["approvals"]; got != "all" {
		t.Errorf("approvals after a refused level = %q, want all still", got)
	}
	waitUpdate(t, ctx, c, "current_mode_update to plan", func(u acp.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "plan"
	})
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "act"}); err != nil {
		t.Fatal(err)
	}
	waitUpdate(t, ctx, c, "config_option_update to act", func(u acp.SessionUpdate) bool {
		return u.ConfigOptionUpdate != nil && selects(u.ConfigOptionUpdate.ConfigOptions)["mode"] == "act"
	})

	// session/load answers with the options too.
	load, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := selects(load.ConfigOptions); got["mode"] != "act" || got["model"] != "model-two" || got["approvals"] != "all" {
		t.Errorf("session/load configOptions = %v", got)
	}
	checkWire(t, schema, wire, wireMu, sent, 1)
}

// TestACPCommands: the commands run when a prompt is one of them, in the
// daemon, with no model request: /plan and /act switch the mode (both
// updates sent), /undo puts back the files of the last turn and drops
// it from the conversation, /compact compacts.
func TestACPCommands(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := acpSchema(t)
	root, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := transcript(t,
		reply(call("c1", "run_commands", map[string]any{"commands": []any{"echo made > made.txt && rm keep.txt"}})),
		reply(text("Made it.")),
		// After /undo the next request holds no trace of the first turn.
		map[string]any{"expect": map[string]any{"last_user_contains": "second", "messages": 1}, "events": []any{text("Second.")}},
	)
	c := &acpClient{files: map[string]string{}, answer: "allow_once"}
	conn, wire, wireMu, sent := acpDaemon(t, c, "CLINE_LS_PROVIDER=replay", "XDG_STATE_HOME="+state,
		"XDG_CONFIG_HOME="+t.TempDir(), "CLINE_LS_TRANSCRIPT="+tr)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(text string) {
		t.Helper()
		res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		if err != nil {
			t.Fatalf("prompt %q: %v", text, err)
		}
		if res.StopReason != acp.StopReasonEndTurn {
			t.Fatalf("prompt %q: stopReason %s", text, res.StopReason)
		}
	}
	prompt("make a file")
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err != nil {
		t.Fatalf("the turn did not make the file: %v", err)
	}

	prompt("/plan")
	waitUpdate(t, ctx, c, "current_mode_update to plan", func(u acp.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "plan"
	})
	waitUpdate(t, ctx, c, "config_option_update to plan", func(u acp.SessionUpdate) bool {
		return u.ConfigOptionUpdate != nil && selects(u.ConfigOptionUpdate.ConfigOptions)["mode"] == "plan"
	})
	prompt("/act")
	waitUpdate(t, ctx, c, "current_mode_update to act", func(u acp.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "act"
	})

	prompt("/undo")
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err == nil {
		t.Error("made.txt is still there after /undo")
	}
	if b, err := os.ReadFile(filepath.Join(root, "keep.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("keep.txt after /undo: %q %v", b, err)
	}
	if got := c.agentText(); !strings.Contains(got, "Undid the last turn") {
		t.Errorf("agent text after /undo = %q", got)
	}
	prompt("/compact")
	if got := c.agentText(); !strings.Contains(got, "Compacted") {
		t.Errorf("agent text after /compact = %q", got)
	}
	// The commands asked the model nothing, and the next request holds
	// only its own prompt (the replay's expectation fails the turn
	// otherwise): the undone turn is gone from the conversation.
	prompt("second")
	if got := c.agentText(); !strings.Contains(got, "Second.") {
		t.Errorf("agent text = %q", got)
	}
	checkWire(t, schema, wire, wireMu, sent, 1)
}
