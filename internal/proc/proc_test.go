package proc

import (
	"slices"
	"testing"
)

func TestEnvDropsSecrets(t *testing.T) {
	base := []string{"PATH=/bin", "ANTHROPIC_API_KEY=a", "OPENROUTER_API_KEY=b", "MY_TOKEN=c",
		"HOME=/h", OwnerVar + "=other/1", "google_api_key=d"}
	got := Env(base, []string{"MY_TOKEN"}, []string{"GEMINI_API_KEY=explicit", "PAGER=cat"})
	want := []string{"PATH=/bin", "HOME=/h", "GEMINI_API_KEY=explicit", "PAGER=cat"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

// TestSecretValuesFollowIsSecret: redaction scrubs the values of the same
// variables a child is not given: the known key variables and the
// configured one, but not others, and not values too short to scrub.
func TestSecretValuesFollowIsSecret(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-12345678", "OPENAI_API_KEY": "short", "MY_TOKEN": "tok-12345678",
		"HOME": "/home/someone", "GOOGLE_API_KEY": "g-12345678"}
	getenv := func(k string) string { return env[k] }
	got := SecretValues(getenv, []string{"MY_TOKEN"})
	want := []string{"sk-ant-12345678", "g-12345678", "tok-12345678"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretValues = %q, want %q", got, want)
	}
	for _, name := range []string{"ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "MY_TOKEN"} {
		if !IsSecret(name, []string{"MY_TOKEN"}) {
			t.Errorf("%s is scrubbed but IsSecret says it may reach a child", name)
		}
	}
	if got := SecretValues(getenv, nil); slices.Contains(got, "tok-12345678") {
		t.Errorf("an unconfigured variable was taken for a key: %q", got)
	}
}
