//go:build unix

package rpc_test

import (
	"context"
	"testing"
	"time"
)

// TestACPBackgroundCommandsStayLocal: with a client that offers
// terminals, a background command is still the daemon's own child (no
// terminal/* request is sent), read with
// read_command_output and stopped with stop_command as anywhere else:
// the client's terminal/output gives the whole kept output, cut at its
// start past the byte limit, so what is new since the last read could
// not be told once a server had printed more than the limit (DESIGN §2).
func TestACPBackgroundCommandsStayLocal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard only
	defer cancel()
	tr := transcript(t,
		reply(call("b1", "run_commands", map[string]any{"commands": []string{"echo ready; sleep 300"}, "background": true})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "ready\n[bg1 is running in the background"},
			"events": []any{call("b2", "read_command_output", map[string]any{"id": "bg1"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "bg1 is running in the background"},
			"events": []any{call("b3", "stop_command", map[string]any{"id": "bg1"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "[stopped: the command and the processes it started were killed"},
			"events": []any{text("Stopped the server."), call("b4", "submit_and_exit", map[string]any{"summary": "stopped", "verified": true})}},
	)
	c, wire, wireMu, sent := startTerminalClient(t, []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=yolo",
		"XDG_STATE_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "CLINE_LS_TRANSCRIPT=" + tr, "SHELL=/bin/sh"})
	id := acpStart(t, ctx, c, t.TempDir(), true)
	if stop, err := acpPrompt(ctx, c, id, "start the server"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v (each reply expects the result before it)", stop, err)
	}
	if reqs := c.Terminals(); len(reqs) != 0 {
		t.Errorf("terminal requests %v for a background command", reqs)
	}
	checkWire(t, acpSchema(t), wire, wireMu, sent, 8)
}
