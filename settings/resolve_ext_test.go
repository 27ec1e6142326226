package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/settings"
)

func TestResolveSettingsOrder(t *testing.T) {
	cfg := t.TempDir()
	env := map[string]string{
		"XDG_CONFIG_HOME":   cfg,
		"OPENAI_API_KEY":    "sk-test",
		"ANTHROPIC_API_KEY": "",
	}
	getenv := func(k string) string { return env[k] }
	st := settings.Resolve(settings.Settings{}, getenv)
	if st.Provider.Name != "openai" || st.Provider.APIKeyEnv != "OPENAI_API_KEY" || st.Mode != "act" {
		t.Fatalf("key fallback: %+v %+v", st, st.Provider)
	}
	env["CLINE_LS_PROVIDER"], env["CLINE_LS_MODEL"] = "anthropic", "claude-x"
	st = settings.Resolve(settings.Settings{}, getenv)
	if st.Provider.Name != "anthropic" || st.Provider.Model != "claude-x" || st.Provider.APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Fatalf("env: %+v", st.Provider)
	}
	st = settings.Resolve(settings.Settings{Provider: &settings.ProviderSettings{Name: "gemini"}}, getenv)
	if st.Provider.Name != "gemini" || st.Provider.Model != "claude-x" {
		t.Fatalf("client first: %+v", st.Provider)
	}
}

// TestConfigFileReaders: the readers cmd/cline-ls uses before any
// connection: the key variable the file names, its MCP servers, and a
// file that is not valid named with the field.
func TestConfigFileReaders(t *testing.T) {
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	name := filepath.Join(cfg, "cline-ls", "config.json")
	if servers, file, err := settings.ConfigMCPServers(getenv); servers != nil || file != name || err != nil {
		t.Errorf("no file: %v %q %v", servers, file, err)
	}
	os.MkdirAll(filepath.Dir(name), 0o755)
	os.WriteFile(name, []byte(`{"provider": {"name": "openai", "apiKeyEnv": "MY_KEY"}}`), 0o600)
	if got := settings.ConfigKeyEnv(getenv); got != "MY_KEY" {
		t.Errorf("ConfigKeyEnv = %q", got)
	}
	if st := settings.Resolve(settings.Settings{}, getenv); st.Provider.Name != "openai" || st.Provider.APIKeyEnv != "MY_KEY" {
		t.Errorf("Resolve took %+v of the file", st.Provider)
	}
	os.WriteFile(name, []byte(`{"maxTurns": "many"}`), 0o600)
	if _, _, err := settings.ConfigMCPServers(getenv); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "maxTurns: expected an integer") {
		t.Errorf("an invalid file: %v", err)
	}
}
