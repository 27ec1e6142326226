package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

func TestTrustRemembersAnswersPerHooks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "trusted-hooks.json")
	asked := 0
	answer := Trusted
	tr := NewTrust(TrustConfig{
		File:       func() string { return file },
		Pretrusted: func() []string { return []string{"/pre"} },
		Ask: func(_ context.Context, session, folder string, commands []string) (TrustAnswer, error) {
			asked++
			if session != "s-1" || folder != "/w" || strings.Join(commands, ",") != "a,b" {
				t.Errorf("asked %s %s %q", session, folder, commands)
			}
			return answer, nil
		},
	})
	ctx := context.Background()
	if !tr.Allowed(ctx, "s-1", "/pre/sub", []string{"x"}, true) || asked != 0 {
		t.Fatalf("a folder under a trusted one asked or refused")
	}
	if tr.Allowed(ctx, "s-1", "/w", []string{"a", "b"}, false) || asked != 0 {
		t.Fatalf("asked, or trusted, when it may not ask")
	}
	if !tr.Allowed(ctx, "s-1", "/w/", []string{"a", "b"}, true) || asked != 1 {
		t.Fatalf("trusted after the answer: asked %d", asked)
	}
	// A new store (a new connection) reads the answer back; changed
	// hooks ask again.
	answer = Distrusted
	tr2 := NewTrust(tr.cfg)
	if !tr2.Allowed(ctx, "s-1", "/w", []string{"a", "b"}, true) || asked != 1 {
		t.Fatalf("the remembered answer was not read: asked %d", asked)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file: %v %v", fi, err)
	}
}

func TestTrustDismissedAsksOncePerConnection(t *testing.T) {
	asked := 0
	tr := NewTrust(TrustConfig{
		File: func() string { return filepath.Join(t.TempDir(), "t.json") },
		Ask: func(context.Context, string, string, []string) (TrustAnswer, error) {
			asked++
			if asked == 1 {
				return NotAnswered, nil
			}
			return Trusted, errors.New("editor gone")
		},
	})
	ctx := context.Background()
	for range 2 {
		if tr.Allowed(ctx, "s", "/w", []string{"a"}, true) {
			t.Fatal("a dismissed question trusted")
		}
	}
	if asked != 1 {
		t.Errorf("asked %d times, want 1", asked)
	}
	if tr.Allowed(ctx, "s", "/v", []string{"a"}, true) || asked != 2 {
		t.Errorf("an answer that came with an error trusted, or was not asked")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tr.turn <- struct{}{} // another session holds the turn
	if tr.Allowed(cancelled, "s", "/u", []string{"a"}, true) {
		t.Error("a cancelled wait trusted")
	}
}

func TestSessionReadsProjectHooks(t *testing.T) {
	dir := t.TempDir()
	roots, err := workspace.NewRoots(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := SessionConfig{ID: "s-1", CWD: dir, Roots: func() (*workspace.Roots, error) { return roots, nil }}
	h := NewSession(cfg)
	if got, err := h.projectHooks(); got != nil || err != nil {
		t.Fatalf("no file: %v %v", got, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".cline"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, ProjectSettingsFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
	if got, err := h.projectHooks(); len(got[string(Stop)]) != 1 || err != nil {
		t.Fatalf("project hooks: %v %v", got, err)
	}
	// An invalid file is told once per session, and runs nothing.
	write(`{"hooks":`)
	for i, want := range []int{1, 0} {
		if out := h.Run(context.Background(), Input{Event: Stop}); len(out.Messages) != want {
			t.Errorf("run %d: messages %q, want %d", i, out.Messages, want)
		}
	}
	// Untrusted project hooks do not run; no Trust is no trust.
	write(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo ran >&2; exit 2"}]}]}}`)
	if out := h.Run(context.Background(), Input{Event: Stop}); out.Decision != "" || len(out.Notes) != 0 {
		t.Errorf("untrusted hooks ran: %+v", out)
	}
}
