package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// bigEdit is a 10 MiB file of unique lines and an edit replacing 5,000 of
// them in its middle, the size of edit the bytes budget is about.
func bigEdit() (text, oldText, newText, want string) {
	var b strings.Builder
	b.Grow(10<<20 + 200)
	n := 0
	line := func(i int) string {
		return fmt.Sprintf("\tvalue_%07d := compute(%d, \"the quick brown fox\") // jumps over the lazy dog", i, i*7)
	}
	for b.Len() < 10<<20 {
		b.WriteString(line(n))
		b.WriteByte('\n')
		n++
	}
	text = b.String()
	old := make([]string, 5000)
	for i := range old {
		old[i] = line(n/2 + i)
	}
	oldText = strings.Join(old, "\n")
	newText = strings.ReplaceAll(oldText, "compute(", "evaluate(")
	return text, oldText, newText, strings.Replace(text, oldText, newText, 1)
}

// startACPClient starts the daemon as a separate process with env and
// connects an rpctest.ACPClient to it.
func startACPClient(t *testing.T, env []string) *rpctest.ACPClient {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(env, "CLINE_LS_TEST_DAEMON=1")...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := rpctest.NewACPClient(out, stdin)
	t.Cleanup(func() {
		stdin.Close()
		<-c.Done()
		cmd.Wait()
		if err := c.Err(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// TestACPBigEditBytes holds a 5,000-line edit of a 10 MiB file to 2 MB
// sent to the client, the edit delivered aside: diff content carries the
// changed region with context, not the whole old and new file, in the
// permission request and in the tool call's updates alike. The delivery
// itself (fs/write_text_file) stays the whole new text, which the client
// must have.
func TestACPBigEditBytes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("moves tens of megabytes through a daemon process; skipped with -short")
	}
	orig, oldText, newText, want := bigEdit()
	const budget = 2_000_000 // 2 MB
	for _, tc := range []struct {
		name     string
		mode     string
		clientFS bool
	}{
		// The two figures were for a client that reads and
		// writes (Zed's setup); the daemon's own durable write is the
		// other delivery. Both modes are covered between the two.
		{"approval, client writes", "act", true},
		{"yolo, daemon writes", "yolo", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A failure guard, not a timing assertion: under -race on a
			// loaded machine tens of megabytes of JSON take a while.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			root, state := t.TempDir(), t.TempDir()
			path := filepath.Join(root, "big.go")
			if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
				t.Fatal(err)
			}
			tr := transcript(t,
				reply(call("c1", "editor", map[string]any{"path": "big.go", "old_text": oldText, "new_text": newText})),
				// Yolo ends its turn only at submit_and_exit; act ends at
				// a reply without calls and never reads the third.
				reply(text("Done."), call("c2", "submit_and_exit", map[string]any{"summary": "renamed", "verified": true})),
				reply(text("Done.")),
			)
			// The call's 0.9 MB of arguments stay in the history: a window
			// of 10M tokens keeps the next request from compacting.
			config := t.TempDir()
			os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
			os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), []byte(`{"provider":{"contextWindow":10000000}}`), 0o644)
			c := startACPClient(t, []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=" + tc.mode, "XDG_STATE_HOME=" + state,
				"XDG_CONFIG_HOME=" + config, "CLINE_LS_TRANSCRIPT=" + tr})
			acpTurn(t, ctx, c, tc.clientFS, root, "rename compute")
			if tc.clientFS {
				if got, _ := c.File(path); got != want {
					t.Fatalf("the client's buffer is not the edited file (%d bytes, want %d)", len(got), len(want))
				}
			} else if disk, _ := os.ReadFile(path); string(disk) != want {
				t.Fatalf("the file on disk is not the edited file (%d bytes, want %d)", len(disk), len(want))
			}
			if wantPerms := map[string]int{"yolo": 0, "act": 1}[tc.mode]; c.Permissions() != wantPerms {
				t.Fatalf("%d permission requests, want %d", c.Permissions(), wantPerms)
			}
			diffs := c.Diffs()
			if len(diffs) != 1+c.Permissions() {
				t.Fatalf("%d diff contents sent, want one per permission request and one at the end", len(diffs))
			}
			for _, d := range diffs {
				if d.OldText == nil {
					t.Fatal("diff content without oldText for a file that existed")
				}
				o, n := *d.OldText, d.NewText
				if d.Path != path || strings.Count(orig, o) != 1 || strings.Replace(orig, o, n, 1) != want {
					t.Fatalf("diff content is not a faithful region of the edit (old %d bytes, new %d bytes)", len(o), len(n))
				}
			}
			by := c.Bytes()
			total := 0
			for _, n := range by {
				total += n
			}
			preview := total - by["fs/write_text_file"]
			t.Logf("bytes to the client: %d in all, %d besides the delivered edit; by method %v", total, preview, by)
			if preview > budget {
				t.Errorf("%d bytes sent besides the delivered edit, want at most %d", preview, budget)
			}
		})
	}
}

// acpTurn runs one turn of a new ACP session in root: initialize (with the
// client's file system when clientFS), session/new, a prompt of text, which
// must end with end_turn.
func acpTurn(t *testing.T, ctx context.Context, c *rpctest.ACPClient, clientFS bool, root, text string) {
	t.Helper()
	must := func(r json.RawMessage, err error) json.RawMessage {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fsCaps := map[string]any{"readTextFile": clientFS, "writeTextFile": clientFS}
	must(c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": fsCaps}}))
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(must(c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})), &sess)
	var res struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(must(c.Call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": text}}})), &res)
	if res.StopReason != "end_turn" {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
}
