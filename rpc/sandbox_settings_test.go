package rpc

import (
	"testing"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
)

func TestSandboxLevelReachesThePolicy(t *testing.T) {
	cfg := policyConfig(settings.Settings{Approvals: map[string]string{"level": "sandbox"}})
	if cfg.Approvals.Execute != session.Sandbox {
		t.Errorf("approvals.level sandbox: execute = %q", cfg.Approvals.Execute)
	}
	cfg = policyConfig(settings.Settings{Approvals: map[string]string{"level": "sandbox", "execute": "deny"}})
	if cfg.Approvals.Execute != session.Deny {
		t.Errorf("approvals.level sandbox over execute deny: %q, want deny kept", cfg.Approvals.Execute)
	}
}
