package emacs_test

import (
	"os"
	"testing"

	"github.com/cline-ls/cline-ls/internal/mcptest"
	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// TestEmacsMCPSignInAndQuestions: an MCP server behind OAuth signs in
// from Emacs, the daemon asking it to open the sign-in page
// (window/showDocument, external, which Eglot 1.9 has no handler for)
// through `browse-url', here a stand-in browser that follows the page so
// that the redirect reaches the daemon; the server's tools then work,
// and its elicitation is asked in Emacs (flow mcp, test/mcp.el).
func TestEmacsMCPSignInAndQuestions(t *testing.T) {
	emacs := emacsOrSkip(t)
	testenv.LookPath(t, "python3", "the stand-in browser follows the sign-in page with it")
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.NewOAuthServer(t)
	dir := t.TempDir()
	browser, log := mcptest.StandInBrowser(t, dir)
	runFlow(t, emacs, testbin.CLI(t), here, flow{name: "mcp", disk: "hello\n", minChecks: 6,
		setup: func(home, ws string) []string {
			return []string{"MCPTEST_URL=" + srv.URL, "BROWSER=" + browser, "MCPTEST_BROWSER_LOG=" + log}
		}})
	if signIns, grants, _, _ := srv.Counts(); signIns != 1 || grants != 1 {
		t.Errorf("sign-ins %d, code grants %d; want one of each", signIns, grants)
	}
}
