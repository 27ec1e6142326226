package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestKeyInFirstPromptRedactedEverywhere pastes the daemon's key into a
// session's first prompt, where the title and the checkpoint labels are
// cut from (at the start, across the title's cut, inside it, glued to
// other text), has the turn edit a file so that a checkpoint is labelled
// by it, and looks for the key, or the start of it that a cut leaves,
// in every message to the editor, session/list, cline/checkpoints, every
// file of the state directory and the log.
func TestKeyInFirstPromptRedactedEverywhere(t *testing.T) {
	const key = "sk-ant-planted-title-0123456789abcdefghij"
	const start = "sk-ant-planted" // what a cut key leaves at least
	prompts := map[string]string{
		"at the start":   key + " is my key, please set up the deploy script with it",
		"across the cut": "please set up the deploy script with this key " + key + " thanks",
		"inside":         "use " + key,
		"glued":          "configure the deploy script's environment KEY=" + key + ";",
	}
	for name, prompt := range prompts {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			state := t.TempDir()
			logPath := filepath.Join(t.TempDir(), "daemon.log")
			logFile, _ := os.Create(logPath)
			defer logFile.Close()
			tr := transcriptFor(t, "claude-sonnet-4-5",
				reply(call("c1", "write_to_file", map[string]any{"path": "deploy.sh", "content": "echo deploy\n"})),
				reply(text("Done.")))
			root := t.TempDir()
			ed := rpctest.New(t, rpc.Options{Logger: slogTo(logFile), Getenv: func(k string) string {
				if k == "ANTHROPIC_API_KEY" {
					return key
				}
				return ""
			}})
			if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
				"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state,
				"approvals": map[string]any{"edit": "allow"}}}); err != nil {
				t.Fatal(err)
			}
			id := newSessionIn(t, ctx, ed, root)
			if _, err := promptText(ctx, ed, id, prompt); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "deploy.sh")); err != nil {
				t.Fatalf("the turn made no edit, so no checkpoint was labelled: %v", err)
			}
			var list, cks json.RawMessage
			if err := ed.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
				t.Fatal(err)
			}
			if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &cks); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(list), id) || !strings.Contains(string(cks), "Before") {
				t.Fatalf("session/list %s or cline/checkpoints %s lacks what the test looks at", list, cks)
			}
			leaks := func(what string, b []byte) {
				if strings.Contains(string(b), start) {
					t.Errorf("%s carries the key or its start: %s", what, b)
				}
			}
			leaks("session/list", list)
			leaks("cline/checkpoints", cks)
			for _, m := range ed.Messages("") {
				leaks(m.Method, m.Params)
			}
			filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					leaks(p, b)
				}
				return nil
			})
			b, _ := os.ReadFile(logPath)
			leaks("the log", b)
		})
	}
}

// TestKeyInLogsRedacted: what the daemon logs passes the same redaction
// as what it sends: a key pasted into a setting the client got wrong is
// logged (and reported to the client) as [redacted], in the message and
// in every attribute, a group's included.
func TestKeyInLogsRedacted(t *testing.T) {
	const key = "sk-ant-planted-in-a-log-0123456789"
	ctx := testCtx(t)
	logs := &lockedBuffer{}
	logger := slogTo(logs)
	ed := rpctest.New(t, rpc.Options{Logger: logger, Getenv: func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return key
		}
		return ""
	}})
	if _, err := ed.Initialize(ctx, t.TempDir(), map[string]any{"initializationOptions": map[string]any{"stateDir": t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"mode": key}})
	ed.Sync(ctx)
	got := logs.String()
	if !strings.Contains(got, "must be one of") {
		t.Fatalf("the bad setting was not logged:\n%s", got)
	}
	if strings.Contains(got, key) || !strings.Contains(got, "[redacted]") {
		t.Errorf("the log carries the key:\n%s", got)
	}
	for _, m := range ed.Messages("") {
		if strings.Contains(string(m.Params), key) {
			t.Errorf("%s carries the key: %s", m.Method, m.Params)
		}
	}
}

// TestKeySplitAcrossStreamedOutputRedacted: a command prints the key in
// two writes a second apart, so that its streamed output arrives in two
// chunks, each holding part of the key: no update may carry a part (the
// client would put them together). The command builds the key from
// pieces that are not parts of it by themselves.
func TestKeySplitAcrossStreamedOutputRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-planted-split-0123456789abcdef"
	ctx := testCtx(t)
	root := t.TempDir()
	// "sk-ant-plant" then, a second later, "ed-split-0123456789abcdef".
	cmd := `a=sk-ant; b=plant; printf '%s-%s' $a $b; sleep 1; c=ed-split; printf '%s-0123456789abcdef\n' $c`
	tr := transcriptFor(t, "claude-sonnet-4-5",
		reply(call("c1", "run_commands", map[string]any{"commands": []string{cmd}})),
		reply(text("Done.")))
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return key
		}
		return ""
	}})
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"execute": "allow"}}}); err != nil {
		t.Fatal(err)
	}
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "print it"); err != nil {
		t.Fatal(err)
	}
	redacted := false
	for _, m := range ed.Messages("") {
		for _, part := range []string{"sk-ant-plant", "ed-split-0123"} {
			if strings.Contains(string(m.Params), part) {
				t.Errorf("%s carries part of the key (%q): %s", m.Method, part, m.Params)
			}
		}
		redacted = redacted || strings.Contains(string(m.Params), "[redacted]")
	}
	if !redacted {
		t.Error("the key was never shown redacted: the command did not print it")
	}
}
