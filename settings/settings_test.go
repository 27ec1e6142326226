package settings

import (
	"strings"
	"testing"
)

func TestSandboxSettingsValidate(t *testing.T) {
	for _, c := range []struct {
		st   Settings
		want string // "" for valid
	}{
		{Settings{Approvals: map[string]string{"level": "sandbox"}}, ""},
		{Settings{Approvals: map[string]string{"level": "yolo", "execute": "deny"}}, ""},
		{Settings{Approvals: map[string]string{"execute": "sandbox"}}, ""},
		{Settings{Approvals: map[string]string{"level": "careful"}}, "approvals.level: must be ask, sandbox or yolo"},
		{Settings{Approvals: map[string]string{"edit": "sandbox"}}, "approvals.edit: must be allow, ask or deny"},
		{Settings{Approvals: map[string]string{"execute": "maybe"}}, "allow, ask, sandbox or deny"},
		{Settings{Sandbox: &SandboxSettings{Backend: "docker"}}, "sandbox.backend"},
		{Settings{Sandbox: &SandboxSettings{AllowWrite: []string{"/"}}}, "sandbox.allowWrite[0]"},
		{Settings{Sandbox: &SandboxSettings{DenyRead: []string{" "}}}, "sandbox.denyRead[0]"},
		{Settings{Sandbox: &SandboxSettings{Backend: "landlock", Network: true, DenyRead: []string{"~/.kube"}, AllowWrite: []string{"~/.cache/go-build"}}}, ""},
	} {
		err := c.st.Validate("")
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.st, err, c.want)
		}
	}
}

// TestSandboxBackendResolved: CLINE_LS_SANDBOX forces the backend where
// the settings name none, and the result shares nothing with the file's.
func TestSandboxBackendResolved(t *testing.T) {
	// CLINE_LS_SANDBOX forces the backend where the settings name none.
	env := func(k string) string {
		if k == "CLINE_LS_SANDBOX" {
			return "landlock"
		}
		return ""
	}
	if st := resolve(Settings{}, env, Settings{}); st.Sandbox == nil || st.Sandbox.Backend != "landlock" {
		t.Errorf("CLINE_LS_SANDBOX=landlock: %+v", st.Sandbox)
	}
	if st := resolve(Settings{Sandbox: &SandboxSettings{Backend: "bwrap"}}, env, Settings{}); st.Sandbox.Backend != "bwrap" {
		t.Errorf("the client's backend lost to CLINE_LS_SANDBOX: %+v", st.Sandbox)
	}
	file := Settings{Sandbox: &SandboxSettings{DenyRead: []string{"x"}}}
	st := resolve(Settings{}, func(string) string { return "" }, file)
	st.Sandbox.DenyRead[0] = "changed"
	if file.Sandbox.DenyRead[0] != "x" {
		t.Error("the resolved settings share the file's denyRead")
	}
}

// TestNoModelMessageNamesTheClient: the message says how to configure a
// model in the client at hand, and always the environment and the file.
func TestNoModelMessageNamesTheClient(t *testing.T) {
	for _, c := range []struct {
		acp          bool
		client, want string
	}{
		{true, "Zed", "agent_servers"},
		{false, "Neovim", "require('cline').setup"},
		{false, "Eglot", "cline-initialization-options"},
		{false, "Visual Studio Code", "cline.provider"},
		{false, "code-server", "cline.provider"},
		{false, "cline-ls headless", "--api-key-env"},
		{false, "Helix", "initializationOptions"},
	} {
		msg := NoModelMessage(c.acp, c.client)
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "CLINE_LS_PROVIDER") || !strings.Contains(msg, "config.json") {
			t.Errorf("%s: %q, want %q", c.client, msg, c.want)
		}
	}
}
