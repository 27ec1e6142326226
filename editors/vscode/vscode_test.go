// Package vscode_test runs the VS Code client's own checks from go test:
// the TypeScript type check and the Node tests, which drive a real cline-ls
// (built here once) through the extension's protocol glue.
//
// They need the npm dependencies installed (npm ci in editors/vscode) and
// are skipped otherwise, so that go test ./... works on machines without
// Node.
package vscode_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

func TestVSCodeClient(t *testing.T) {
	if _, err := os.Stat("node_modules"); err != nil {
		testenv.Missing(t, "editors/vscode/node_modules is missing: run npm ci in editors/vscode first")
	}
	npm := testenv.LookPath(t, "npm", "the extension's tests run under it")
	ctx := testContext(t)
	// Build the daemon once here, so the Node tests need not.
	bin := testbin.CLI(t)

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Env = append(os.Environ(), "CLINE_LS_BIN="+bin, "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// npm test compiles (tsc) before it runs the tests.
	out := run("test")
	counts := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if name, n, ok := strings.Cut(strings.TrimPrefix(line, "# "), " "); ok && strings.HasPrefix(line, "# ") {
			if v, err := strconv.Atoi(n); err == nil {
				counts[name] = v
				t.Log(line)
			}
		}
	}
	// node --test exits 0 when it finds no test, or skips them all.
	if counts["tests"] == 0 || counts["pass"] != counts["tests"] {
		t.Errorf("npm test ran %d tests, %d passed (%v); want all of at least one to pass:\n%s", counts["tests"], counts["pass"], counts, out)
	}
}
