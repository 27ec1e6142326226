package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

func TestMCPErrorCodes(t *testing.T) {
	if mcpError(nil) != nil {
		t.Error("no error became one")
	}
	_, err := mcpbridge.NewPool(mcpbridge.PoolConfig{}).Start([]json.RawMessage{json.RawMessage(`7`)}, "")
	var je *jsonrpc2.Error
	if e := mcpError(err); !errors.As(e, &je) || je.Code != jsonrpc2.InvalidParams || !strings.HasPrefix(je.Message, "invalid params: mcpServers") {
		t.Errorf("a bad configuration: %v", e)
	}
	if e := mcpError(errors.New("MCP: boom")); !errors.As(e, &je) || je.Code != jsonrpc2.InternalError || je.Message != "MCP: boom" {
		t.Errorf("a failed start: %v", e)
	}
}

func TestTrustAnswerTakesOnlyTheOfferedChoices(t *testing.T) {
	for c, want := range map[session.ApprovalChoice]hooks.TrustAnswer{
		session.AllowAlways: hooks.Trusted, session.RejectAlways: hooks.Distrusted,
		session.AllowOnce: hooks.NotAnswered, session.RejectOnce: hooks.NotAnswered, "": hooks.NotAnswered,
	} {
		if got := trustAnswer(c); got != want {
			t.Errorf("trustAnswer(%q) = %v, want %v", c, got, want)
		}
	}
}
