package nvim_test

import (
	"testing"

	"github.com/cline-ls/cline-ls/internal/mcptest"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// TestMCPSignInAndQuestions: an MCP server behind OAuth signs in from
// Neovim, the daemon asking it to open the sign-in page (its
// window/showDocument, external, which Neovim 0.7 has no handler of its
// own for) in the user's browser, here $BROWSER: a stand-in that follows
// the page as a browser would, so that the redirect reaches the daemon.
// The server's tools then work, and its elicitation is asked in Neovim.
func TestMCPSignInAndQuestions(t *testing.T) {
	testenv.LookPath(t, "python3", "the stand-in browser follows the sign-in page with it")
	srv := mcptest.NewOAuthServer(t)
	dir := t.TempDir()
	browser, log := mcptest.StandInBrowser(t, dir)
	t.Setenv("BROWSER", browser)
	t.Setenv("MCPTEST_URL", srv.URL)
	t.Setenv("MCPTEST_BROWSER_LOG", log)
	r := runNvim(t, "mcp", "mcp", "mcp", true)
	r.check(t)
	if signIns, grants, _, _ := srv.Counts(); signIns != 1 || grants != 1 {
		t.Errorf("sign-ins %d, code grants %d; want one of each", signIns, grants)
	}
}
