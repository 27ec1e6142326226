package vscode_test

import (
	"context"
	"testing"
	"time"
)

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
