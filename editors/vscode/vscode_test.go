// Package vscode_test runs the VS Code client's own checks from go test:
// the TypeScript type check and the Node tests, which drive a real cline-ls
// (built here once) through the extension's protocol glue.
//
// They need the npm dependencies installed (npm ci in editors/vscode) and
// are skipped otherwise, so that go test ./... works on machines without
// Node.
package vscode_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVSCodeClient(t *testing.T) {
	if _, err := os.Stat("node_modules"); err != nil {
		t.Skip("run npm ci in editors/vscode first")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH, so the daemon cannot be built")
	}

	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}

	// Build the daemon once here, so the Node tests need not.
	bin := filepath.Join(t.TempDir(), "cline-ls")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/cline-ls")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cline-ls: %v\n%s", err, out)
	}

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
	run("run", "compile")
	out := run("test")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# tests") || strings.HasPrefix(line, "# pass") || strings.HasPrefix(line, "# fail") {
			t.Log(line)
		}
	}
}
