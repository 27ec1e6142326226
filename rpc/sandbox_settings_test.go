package rpc

import (
	"path/filepath"
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

func TestSettingPath(t *testing.T) {
	for in, want := range map[string]string{
		"~/.cache/go-build": "/home/u/.cache/go-build", "~": "/home/u", "/opt/x/../y": "/opt/y", "build/out": "/ws/build/out",
	} {
		if got := settingPath(in, "/home/u", "/ws"); got != filepath.FromSlash(want) {
			t.Errorf("settingPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := settingPath("~/x", "", "/ws"); got != "" {
		t.Errorf("~ without a home = %q", got)
	}
}
