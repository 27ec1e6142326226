package settings_test

import (
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
