//go:build linux

package rpc_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
)

// TestSandboxScriptedSession is the "done when" in one session at
// approvals.level sandbox: `go test` of a small module passes inside the
// sandbox without a single approval, while the session's attempts to
// write outside the workspace, reach a server on the loopback and read a
// planted ~/.ssh key each fail, and the model is told, each time, that the
// sandbox may be why. Under bubblewrap, and under Landlock found the way a
// machine without bubblewrap finds it: bwrap hidden from PATH, no backend
// named.
func TestSandboxScriptedSession(t *testing.T) {
	for _, b := range []sandbox.Backend{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(string(b), func(t *testing.T) {
			testenv.LookPath(t, "curl", "the session's network attempt runs it")
			goBin := testenv.LookPath(t, "go", "the session runs go test")
			if b == sandbox.BackendLandlock {
				t.Setenv("PATH", pathWithout(t, "bwrap"))
			}
			if st := sandbox.Detect(sandbox.BackendAuto, ""); st.Backend != b {
				if b == sandbox.BackendBwrap {
					testenv.Missing(t, "bubblewrap cannot run here (%s); apt-get install bubblewrap", st.Detail)
				}
				t.Skipf("no %s with bwrap off PATH: %s", b, st.Detail)
			}
			scriptedSandboxSession(t, goBin)
		})
	}
}

// pathWithout is a PATH holding every program of the current one but
// name, through a folder of links.
func pathWithout(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() == name {
				continue
			}
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name())) // the first of a name wins, as on PATH
		}
	}
	return dir
}

func scriptedSandboxSession(t *testing.T, goBin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure guard: go test on a loaded machine
	defer cancel()
	root, home := t.TempDir(), t.TempDir()
	var rnd [6]byte
	rand.Read(rnd[:])
	secret := "KEY-" + hex.EncodeToString(rnd[:])
	outside := filepath.Join(os.TempDir(), "cline-ls-outside-"+hex.EncodeToString(rnd[:]))
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte(secret), 0o600)
	for name, body := range map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.21\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
	} {
		os.WriteFile(filepath.Join(root, name), []byte(body), 0o644)
	}
	// A server on the loopback the sandbox must not reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	// The build cache is the developer's, which the settings let commands
	// write as the README shows for ~/.cache/go-build; no toolchain or
	// module download is tried.
	cache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := strings.TrimSpace(string(cache))
	t.Setenv("GOCACHE", gocache)
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")

	yes, no := true, false
	refused := map[string]any{"last_tool_result_contains": "[sandbox: the command ran in the sandbox, which may have stopped it", "last_tool_result_is_error": &yes}
	tr := transcript(t,
		reply(call("t1", "run_commands", map[string]any{"commands": []string{"go test -count=1 ./..."}, "timeout": 300})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "ok  \texample.com/calc", "last_tool_result_is_error": &no},
			"events": []any{call("w1", "run_commands", map[string]any{"commands": []string{"touch " + outside}})}},
		map[string]any{"expect": refused,
			"events": []any{call("n1", "run_commands", map[string]any{"commands": []string{"curl -sS --max-time 20 http://" + ln.Addr().String() + "/"}})}},
		map[string]any{"expect": refused,
			"events": []any{call("k1", "run_commands", map[string]any{"commands": []string{"cat " + key}})}},
		map[string]any{"expect": refused, "events": []any{text("Tests pass; the rest was refused.")}},
	)
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}})
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}},
		"workspace": map[string]any{"applyEdit": true}, "window": map[string]any{"showMessage": map[string]any{}}}
	if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"level": "sandbox"}, "sandbox": map[string]any{"allowWrite": []string{gocache}}}}); err != nil {
		t.Fatal(err)
	}
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "run the tests"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v (each reply expects the result before it)", stop, err)
	}
	if n := len(ed.Messages("cline/approvalRequest")) + len(ed.Messages("window/showMessageRequest")); n != 0 {
		t.Errorf("%d approvals asked; the sandbox level asks none for what it confines", n)
	}
	results := map[string]string{}
	for _, u := range typedUpdates(t, ed, id) {
		if tc, ok := u.(wire.ToolCallUpdate); ok && tc.Status == wire.StatusFailed {
			for _, c := range tc.Content {
				if ci, ok := c.(wire.ContentItem); ok {
					if tb, ok := ci.Content.(wire.TextBlock); ok {
						results[tc.ToolCallID] += tb.Text
					}
				}
			}
		}
	}
	// Each attempt failed for the sandbox's reason, in the command's own
	// words, and was reported with the note.
	for call, signs := range map[string][]string{
		"w1": {"touch:", "read-only file system", "permission denied"},
		"n1": {"curl:", "couldn't connect", "failed to connect", "permission denied", "network is unreachable"},
		"k1": {"cat:", "permission denied", "no such file"},
	} {
		got := strings.ToLower(results[call])
		hasSign := false
		for _, s := range signs[1:] {
			hasSign = hasSign || strings.Contains(got, s)
		}
		if !strings.Contains(got, signs[0]) || !hasSign || !strings.Contains(got, "[sandbox: ") {
			t.Errorf("%s's result %q: want the command's refusal (%v) and the sandbox's note", call, results[call], signs[1:])
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		os.Remove(outside)
		t.Errorf("%s was written", outside)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	all, _ := json.Marshal(updates(ed, id))
	if strings.Contains(string(all), secret) {
		t.Error("the planted key reached the session's updates")
	}
}
