package emacs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/hookstest"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// TestEmacsHooks plays the Claude Code hook scripts of testdata/hooks
// (internal/hookstest) through cline.el, each flow of test/hooks.el in its
// own Emacs: hooks (in the user's config file: the model's rm -rf build
// refused with the hook's reason and nobody asked, the edit of main.go
// approved and go vet's report to the model and on the edit's card),
// hooks-trust (in the folder's .cline/settings.json: the trust question in
// the approval view, A trusts, then as before) and hooks-distrust (r
// declines: no hook runs, the rm -rf asks and is rejected; remembered).
func TestEmacsHooks(t *testing.T) {
	emacs := emacsOrSkip(t)
	hs := hookstest.Find(t)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	daemon := testbin.CLI(t)
	setup := func(project bool) func(home, ws string) []string {
		return func(home, ws string) []string {
			hookstest.WriteModule(t, ws)
			if project {
				hs.WriteProject(t, ws)
			} else {
				hs.WriteConfig(t, filepath.Join(home, ".config"), nil)
			}
			return append(hookstest.Env(t), hookstest.Expectations()...)
		}
	}
	for _, c := range []struct {
		flow
		trusted string // the answer trusted-hooks.json keeps, if any
	}{
		{flow{name: "hooks", disk: "hello\n", minChecks: 9, transcript: hs.Transcript, setup: setup(false)}, ""},
		{flow{name: "hooks-trust", disk: "hello\n", minChecks: 11, transcript: hs.Transcript, setup: setup(true)}, "true"},
		{flow{name: "hooks-distrust", disk: "hello\n", minChecks: 6, transcript: hs.Distrusted, setup: setup(true)}, "false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ws, state string
			setup := c.setup
			c.setup = func(home, w string) []string {
				ws, state = w, filepath.Join(filepath.Dir(w), "state")
				return setup(home, w)
			}
			runFlow(t, emacs, daemon, here, c.flow)
			hookstest.Check(t, ws, c.name != "hooks-distrust")
			if c.trusted != "" {
				b, err := os.ReadFile(filepath.Join(state, "trusted-hooks.json"))
				if err != nil || !strings.Contains(string(b), `"trusted": `+c.trusted) {
					t.Errorf("trusted-hooks.json = %q (%v), want trusted %s", b, err, c.trusted)
				}
			}
		})
	}
}
