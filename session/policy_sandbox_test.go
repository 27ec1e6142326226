package session

import (
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/tools"
)

// sandboxCall is a run_commands call as the scheduler describes it: its
// invocation is Sandboxable, and outside when it asked for sandbox: false.
func sandboxCall(t *testing.T, mode, line string, outside bool) PolicyCall {
	t.Helper()
	c := PolicyCall{Tool: tools.NameRunCommands, Kind: tools.KindExecute, Mode: mode, Commands: []string{line},
		Confinable: true, OutsideSandbox: outside}
	return c
}

func sandboxPolicy(t *testing.T, available bool, rules ...Rule) *Policy {
	t.Helper()
	a := Approvals{}
	a.ApplyLevel(LevelSandbox)
	return mustPolicy(t, PolicyConfig{Approvals: a, Rules: rules, SandboxAvailable: available})
}

func TestSandboxLevelRunsCommandsConfinedWithoutAsking(t *testing.T) {
	p := sandboxPolicy(t, true,
		Rule{Tool: tools.NameRunCommands, ArgPattern: `^git push`, Decision: Deny},
		Rule{Tool: tools.NameRunCommands, ArgPattern: `^npm publish`, Decision: Ask},
		Rule{Tool: tools.NameRunCommands, ArgPattern: `^go vet`, Decision: Allow})
	for _, tt := range []struct {
		mode, line string
		outside    bool
		want       Decision
		sandboxed  bool
	}{
		{tools.ModeAct, "go test ./...", false, Allow, true},
		{tools.ModeAct, "touch /tmp/x && go build", false, Allow, true},
		// An allow rule lets its part run as at the ask level, but the
		// other parts keep the line in the sandbox.
		{tools.ModeAct, "go vet ./...", false, Allow, false},
		{tools.ModeAct, "go vet ./... && make", false, Allow, true},
		// Deny and ask rules still apply, whichever part they match.
		{tools.ModeAct, "git push origin main", false, Deny, false},
		{tools.ModeAct, "go test && git push", false, Deny, false},
		{tools.ModeAct, "npm publish", false, Ask, false},
		{tools.ModeAct, "make; npm publish", false, Ask, false},
		// Outside the sandbox is the user's call.
		{tools.ModeAct, "go test ./...", true, Ask, false},
		{tools.ModeAct, "git push", true, Deny, false},
		// Plan mode's guard runs first, whatever the level.
		{tools.ModePlan, "rm -rf build", false, Deny, false},
		{tools.ModePlan, "ls -la", false, Allow, true},
		// yolo mode approves what is asked, and keeps what is confined so.
		{tools.ModeYolo, "go test ./...", false, Allow, true},
	} {
		v := p.Explain(sandboxCall(t, tt.mode, tt.line, tt.outside))
		if v.Decision != tt.want || v.Sandboxed != tt.sandboxed {
			t.Errorf("%s %q outside=%v: %s sandboxed=%v (%s), want %s sandboxed=%v",
				tt.mode, tt.line, tt.outside, v.Decision, v.Sandboxed, v.Reason, tt.want, tt.sandboxed)
		}
		if v.Decision == Sandbox {
			t.Errorf("Explain returned the sandbox decision itself for %q", tt.line)
		}
	}
}

func TestSandboxLevelAsksWhereNothingConfines(t *testing.T) {
	p := sandboxPolicy(t, false)
	v := p.Explain(sandboxCall(t, tools.ModeAct, "go test ./...", false))
	if v.Decision != Ask || v.Sandboxed || !strings.Contains(v.Reason, "no sandbox") {
		t.Errorf("with no sandbox available: %+v, want ask saying so", v)
	}
	// A call that cannot be confined (not Sandboxable) is asked about too.
	p = sandboxPolicy(t, true)
	c := sandboxCall(t, tools.ModeAct, "go test", false)
	c.Confinable = false
	if v := p.Explain(c); v.Decision != Ask || v.Sandboxed {
		t.Errorf("an execute call that cannot be confined: %+v, want ask", v)
	}
	// Other categories keep their approvals at the sandbox level.
	if d := p.Decide(callOf(t, tools.NameEditor, tools.ModeAct, `{"path":"a.go","new_text":"x"}`)); d != Ask {
		t.Errorf("an edit at the sandbox level: %s, want ask", d)
	}
}

func TestApplyLevel(t *testing.T) {
	a := Approvals{Execute: Deny}
	a.ApplyLevel(LevelSandbox)
	if a.Execute != Deny {
		t.Errorf("sandbox level over execute: deny = %s, want deny kept", a.Execute)
	}
	a = Approvals{Edit: Ask}
	a.ApplyLevel(LevelAsk)
	if a != (Approvals{Edit: Ask}) {
		t.Errorf("ask level changed the approvals: %+v", a)
	}
	a.ApplyLevel(LevelYolo)
	if a.Edit != Allow || a.Execute != Allow || a.MCP != Allow {
		t.Errorf("yolo level: %+v, want everything allowed", a)
	}
	if _, err := NewPolicy(PolicyConfig{Approvals: Approvals{Edit: Sandbox}}); err == nil {
		t.Error("approvals.edit: sandbox accepted; only commands run in the sandbox")
	}
	if _, err := NewPolicy(PolicyConfig{Rules: []Rule{{Tool: "*", Decision: Sandbox}}}); err == nil {
		t.Error("a rule deciding sandbox accepted")
	}
}

// TestHookAllowDoesNotLiftTheSandboxAsk: the sandbox step comes after the
// hooks, so a PreToolUse hook's allow skips the rules' ask but not the
// question the sandbox level puts: a call that asks to run outside the
// sandbox (sandbox: false), cannot be confined, or finds nothing here to
// confine it, is still the user's call.
func TestHookAllowDoesNotLiftTheSandboxAsk(t *testing.T) {
	outside := sandboxCall(t, tools.ModeAct, "go test ./...", true)
	outside.Hook = hooks.Allow
	if v := sandboxPolicy(t, true).Explain(outside); v.Decision != Ask || v.Sandboxed {
		t.Errorf("sandbox: false with a hook's allow: %s sandboxed=%v (%s), want ask", v.Decision, v.Sandboxed, v.Reason)
	}
	unconfinable := sandboxCall(t, tools.ModeAct, "go test ./...", false)
	unconfinable.Confinable, unconfinable.Hook = false, hooks.Allow
	if v := sandboxPolicy(t, true).Explain(unconfinable); v.Decision != Ask {
		t.Errorf("a call that cannot be confined, with a hook's allow: %s (%s), want ask", v.Decision, v.Reason)
	}
	nowhere := sandboxCall(t, tools.ModeAct, "go test ./...", false)
	nowhere.Hook = hooks.Allow
	if v := sandboxPolicy(t, false).Explain(nowhere); v.Decision != Ask {
		t.Errorf("no sandbox here, with a hook's allow: %s (%s), want ask", v.Decision, v.Reason)
	}
	// Confined, the hook's allow changes nothing: it runs in the sandbox.
	in := sandboxCall(t, tools.ModeAct, "go test ./...", false)
	in.Hook = hooks.Allow
	if v := sandboxPolicy(t, true).Explain(in); v.Decision != Allow || !v.Sandboxed {
		t.Errorf("confined with a hook's allow: %s sandboxed=%v, want allow in the sandbox", v.Decision, v.Sandboxed)
	}
	// At the ask level the hook's allow still skips asking.
	ask := sandboxCall(t, tools.ModeAct, "go test ./...", true)
	ask.Hook = hooks.Allow
	if v := mustPolicy(t, PolicyConfig{}).Explain(ask); v.Decision != Allow {
		t.Errorf("ask level with a hook's allow: %s (%s), want allow", v.Decision, v.Reason)
	}
}

// TestHookAskKeepsTheSandbox: a hook's ask on a call the sandbox level
// would run confined asks the user, and the call, once allowed, still
// runs confined: a more cautious hook never ends in less confinement.
func TestHookAskKeepsTheSandbox(t *testing.T) {
	in := sandboxCall(t, tools.ModeAct, "go test ./...", false)
	in.Hook = hooks.Ask
	if v := sandboxPolicy(t, true).Explain(in); v.Decision != Ask || !v.Sandboxed {
		t.Errorf("confinable call with a hook's ask: %s sandboxed=%v (%s), want an ask that stays in the sandbox", v.Decision, v.Sandboxed, v.Reason)
	}
}
