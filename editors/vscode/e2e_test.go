package vscode_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/hookstest"
	"github.com/cline-ls/cline-ls/internal/mcptest"
	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// TestVSCodeRealEditor runs e2e/run.mjs: the extension packaged as a VSIX,
// installed into code-server and driven through Chromium, against the
// daemon built here. It needs the packages of editors/vscode and of
// editors/vscode/e2e installed and Chromium, as .ci/run installs them, and
// skips, saying which is missing, otherwise; in CI (CI set) a missing
// piece fails it, since CI must have installed it. A daemon that does not
// start as the extension starts it fails it everywhere.
func TestVSCodeRealEditor(t *testing.T) {
	if testing.Short() {
		t.Skip("a real VS Code in a browser takes tens of seconds; skipped in -short")
	}
	for _, dir := range []string{"node_modules", filepath.Join("e2e", "node_modules", "code-server", "lib", "vscode", "node_modules"), filepath.Join("e2e", "node_modules", "playwright-core")} {
		if _, err := os.Stat(dir); err != nil {
			testenv.Missing(t, "%s is missing: npm ci in editors/vscode, then bash editors/vscode/e2e/install.sh (as .ci/run does)", dir)
		}
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		testenv.Missing(t, "no Chromium at %s (apt-get install chromium, or set $CHROMIUM)", chromium)
	}
	testenv.LookPath(t, "npm", "vsce runs the extension's bundle script with it")
	node := testenv.LookPath(t, "node", "the flow's driver runs under it")
	gopls := testenv.LookPath(t, "gopls", "VS Code's providers answer the agent's language-server tools from it (e2e/lsp.mjs; go install golang.org/x/tools/gopls@v0.23.0)")
	ctx := testContext(t)
	bin := testbin.CLI(t)
	if msg := acceptsStdio(ctx, bin); msg != "" {
		t.Fatalf("the daemon under test does not accept `serve --stdio`, which vscode-languageclient passes, so the extension cannot start it in VS Code: %s", msg)
	}

	// The hooks scenario (e2e/hooks.mjs): the Go module and the user's
	// config file with the Claude Code hook scripts of testdata/hooks.
	hs := hookstest.Find(t)
	hooksWS, hooksConfig := filepath.Join(t.TempDir(), "ws"), t.TempDir()
	hookstest.WriteModule(t, hooksWS)
	hs.WriteConfig(t, hooksConfig, nil)

	// The MCP scenario (e2e/mcp.mjs): a server behind OAuth, signed in
	// to from VS Code, which asks the user its questions. On 127.0.0.2,
	// which VS Code takes for another machine (as a hosted server is: no
	// port forwarding of its own, a question before it opens the page),
	// and with a query of its own, an escaped & in it, so that the
	// sign-in address names a resource VS Code must not unescape on the
	// way to the browser.
	mcpSrv := mcptest.NewOAuthServer(t, mcptest.OnHost("127.0.0.2"), mcptest.WithQuery("org=a%26b&team=c"))

	run := exec.CommandContext(ctx, node, "run.mjs")
	run.Dir = "e2e"
	run.Env = append(os.Environ(), "CLINE_LS_BIN="+bin, "CHROMIUM="+chromium, "GOPLS="+gopls, "NO_COLOR=1",
		"CLINE_HOOK_WS="+hooksWS, "CLINE_HOOK_CONFIG="+hooksConfig, "CLINE_HOOK_TRANSCRIPT="+hs.Transcript, "CLINE_MCP_URL="+mcpSrv.URL)
	run.Env = append(append(run.Env, hookstest.Env(t)...), hookstest.Expectations()...)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("e2e/run.mjs: %v\n%s", err, out)
	}
	passed, hooksPassed, mcpPassed := false, false, false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "[e2e]") {
			t.Log(line)
			passed = passed || strings.TrimSpace(line) == "[e2e] PASS"
			hooksPassed = hooksPassed || strings.TrimSpace(line) == "[e2e] hooks PASS"
			mcpPassed = mcpPassed || strings.TrimSpace(line) == "[e2e] mcp PASS"
		}
	}
	// Exit 0 alone would pass a flow that ended early without failing.
	if !passed || !hooksPassed || !mcpPassed {
		t.Errorf("e2e/run.mjs exited 0 without reaching the end of the flow ([e2e] PASS), of the hooks scenario ([e2e] hooks PASS) or of the MCP scenario ([e2e] mcp PASS):\n%s", out)
	}
	hookstest.Check(t, hooksWS, true)
	// One sign-in, in the browser tab VS Code opened; its code exchanged once.
	if signIns, grants, _, _ := mcpSrv.Counts(); signIns != 1 || grants != 1 {
		t.Errorf("MCP server: %d sign-ins, %d code grants; want one of each", signIns, grants)
	}
}

// acceptsStdio runs `bin serve --stdio` on an empty stdin, as
// vscode-languageclient launches the daemon, and returns why it refused,
// or "" when it served and exited cleanly at end of input.
func acceptsStdio(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return err.Error() + ": " + first
	}
	return ""
}
