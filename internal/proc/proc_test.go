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
