package rpc_test

import (
	"fmt"
	"testing"
	"time"
)

// TestInputEndStopsEditorCallAtOnce: when the editor's input ends while
// its cline/callTool runs a command, the daemon stops the call as it
// stops a model's turn, instead of waiting out the command's timeout
// (300 s here, so that a daemon that waits fails the 20 s guard, not a
// timing).
func TestInputEndStopsEditorCallAtOnce(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	d := startDaemon(t)
	init := map[string]any{"processId": nil, "rootUri": "file://" + root, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"approvals": map[string]any{"execute": "allow"}, "stateDir": t.TempDir()}}
	if err := d.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	marker := bgMarker()
	go d.Call(ctx, "cline/callTool", map[string]any{"name": "run_commands", "arguments": map[string]any{
		"commands": []string{fmt.Sprintf("sleep %d", marker)}, "timeout": 300}}, nil)
	if !waitMarked(t, marker, true) {
		t.Fatal("the command never ran")
	}
	d.Close() // the daemon's stdin ends
	exited := make(chan error, 1)
	go func() { exited <- d.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second): // a failure guard, far under the command's timeout
		t.Fatal("the daemon still runs 20 s after its input ended, waiting on the editor's call")
	}
	if !waitMarked(t, marker, false) {
		t.Error("the command outlived the daemon")
	}
}
