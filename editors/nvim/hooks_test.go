package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/hookstest"
)

// hookRun sets up the hooks scenario (internal/hookstest) for a run: the
// Go module in the workspace, the hooks in the user's config file or,
// when project, in the folder's .cline/settings.json, and what
// tests/hooks.lua checks.
func hookRun(t *testing.T, hs hookstest.Scripts, project bool) func(home, ws string) []string {
	return func(home, ws string) []string {
		hookstest.WriteModule(t, ws)
		if project {
			hs.WriteProject(t, ws)
		} else {
			hs.WriteConfig(t, filepath.Join(home, "config"), nil)
		}
		return append(hookstest.Env(t), hookstest.Expectations()...)
	}
}

// The Claude Code hook scripts of testdata/hooks, in the user's config
// file, run unchanged with the plugin: the model's rm -rf build is
// refused with the hook's reason (the card shows it, nothing is removed,
// nobody is asked), its edit of main.go is approved and go vet's report
// reaches the model (the transcript expects it) and the edit's card.
func TestClaudeCodeHooks(t *testing.T) {
	hs := hookstest.Find(t)
	r := runNvim(t, "hooks", "user", hs.Transcript, true, hookRun(t, hs, false))
	r.check(t)
	hookstest.Check(t, r.ws, true)
}

// A folder's own hooks (.cline/settings.json) run only once the user
// trusts the folder: the question comes to the approval view listing the
// commands; Trust runs them, Don't trust never does (the rm -rf is then an
// ordinary command that asks) and is remembered.
func TestProjectHooksTrust(t *testing.T) {
	hs := hookstest.Find(t)
	t.Run("trust", func(t *testing.T) {
		r := runNvim(t, "hooks", "trust", hs.Transcript, true, hookRun(t, hs, true))
		r.check(t)
		hookstest.Check(t, r.ws, true)
		remembered(t, r, true)
	})
	t.Run("distrust", func(t *testing.T) {
		r := runNvim(t, "hooks", "distrust", hs.Distrusted, true, hookRun(t, hs, true))
		r.check(t)
		hookstest.Check(t, r.ws, false)
		remembered(t, r, false)
	})
}

// remembered checks the answer was kept in the state directory.
func remembered(t *testing.T, r result, trusted bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(r.ws), "sessions", "trusted-hooks.json"))
	want := `"trusted": ` + map[bool]string{true: "true", false: "false"}[trusted]
	if err != nil || !strings.Contains(string(b), want) {
		t.Errorf("trusted-hooks.json = %q (%v), want %s", b, err, want)
	}
}
