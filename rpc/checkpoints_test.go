package rpc_test

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPCheckpointMethods checks that the ACP dialect routes the
// checkpoint methods under their extension names.
func TestACPCheckpointMethods(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	c := &acpClient{files: map[string]string{}}
	conn, _, _, _ := acpDaemon(t, c, "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+t.TempDir())
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := conn.CallExtension(ctx, "_cline/checkpoints", map[string]any{"sessionId": sess.SessionId})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(raw)), ""); got != `{"checkpoints":[]}` {
		t.Errorf("_cline/checkpoints = %s", raw)
	}
	_, err = conn.CallExtension(ctx, "_cline/restore", map[string]any{"sessionId": sess.SessionId, "checkpointId": "nope", "scope": "files"})
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("_cline/restore of an unknown checkpoint: err = %v", err)
	}
	_, err = conn.CallExtension(ctx, "_cline/checkpointDiff", map[string]any{"sessionId": sess.SessionId, "checkpointId": "nope"})
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("_cline/checkpointDiff of an unknown checkpoint: err = %v", err)
	}
}
