package session

import (
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// TestPolicyGitWrites: a write under .git asks even where edits are
// allowed, and is refused in yolo mode; reads there and writes elsewhere
// are unaffected.
func TestPolicyGitWrites(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Approvals: Approvals{Edit: Allow}})
	at := func(tool, mode, path string) Decision {
		c := callOf(t, tool, mode, `{}`)
		c.Paths = []string{path}
		return p.Decide(c)
	}
	const hook = "/w/.git/hooks/pre-commit"
	for _, tt := range []struct {
		tool, mode, path string
		want             Decision
	}{
		{tools.NameWriteToFile, tools.ModeAct, hook, Ask},
		{tools.NameApplyPatch, tools.ModeAct, "/w/sub/.git/config", Ask},
		{tools.NameWriteToFile, tools.ModeYolo, hook, Deny},
		{tools.NameEditor, tools.ModeYolo, "/w/.git/config", Deny},
		{tools.NameWriteToFile, tools.ModeAct, "/w/src/.gitignore", Allow},
		{tools.NameWriteToFile, tools.ModeYolo, "/w/.github/ci.yml", Allow},
		{tools.NameReadFiles, tools.ModeYolo, "/w/.git/config", Allow},
	} {
		if got := at(tt.tool, tt.mode, tt.path); got != tt.want {
			t.Errorf("%s in %s mode on %s: %s, want %s", tt.tool, tt.mode, tt.path, got, tt.want)
		}
	}
}
