package vscode_test

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// tool returns the path of a program the test needs, or reports it
// missing through missing (t.Skipf outside CI, t.Fatalf in it).
func tool(name, why string, missing func(string, ...any)) string {
	p, err := exec.LookPath(name)
	if err != nil {
		missing("%s is not on PATH: %s", name, why)
	}
	return p
}

// testContext ends ten seconds before the test's deadline, so that a
// hung child is killed while the test can still report it.
func testContext(t *testing.T) context.Context {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		t.Cleanup(cancel)
	}
	return ctx
}
