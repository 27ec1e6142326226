package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// bytesTarget is the bound on what one 10 MiB edit sends an ACP
// client besides the edit itself (fs/write_text_file): 2 MB.
const bytesTarget = 2_000_000

// A wireRun is the editor tool's edit of case 1 made over the wire: the
// cline-ls binary as an ACP agent, driven by rpctest.ACPClient, the model
// replayed from a transcript that makes the one editor call. A timed run
// is one session/prompt, from sending it to its answer: the model's call
// streamed in, described, asked about (in act mode; the client allows),
// executed (read, match, write: durably to disk by the daemon, or through
// fs/write_text_file to the client's buffer), the result reported and the
// turn saved. A fresh session for each run is made untimed beforehand.
type wireRun struct {
	r        *runner
	clientFS bool
	// bytes the client was sent in the last run, by method.
	bytes map[string]int
	perms int
	stop  func()
}

// newWireRun starts a daemon for one runner. from and want are case 1's:
// run k turns from(k)'s text into want(k).
func newWireRun(name, slug, bin, base, mode string, clientFS bool, textA string,
	from func(k int) (string, string, string), want func(k int) string) (*wireRun, error) {
	d := filepath.Join(base, slug)
	config := filepath.Join(d, "config", "cline-ls")
	for _, p := range []string{config, filepath.Join(d, "state"), filepath.Join(d, "ws")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
	}
	// The call's arguments stay in the history: a window of 10M tokens
	// keeps the turn's second request from compacting.
	if err := os.WriteFile(filepath.Join(config, "config.json"), []byte(`{"provider":{"contextWindow":10000000}}`), 0o644); err != nil {
		return nil, err
	}
	root := filepath.Join(d, "ws")
	path := filepath.Join(root, "big.go")
	if err := os.WriteFile(path, []byte(textA), 0o644); err != nil {
		return nil, err
	}
	// Yolo ends a turn only at submit_and_exit; act at a reply without
	// calls.
	end := []any{map[string]any{"text": "Done."}}
	if mode == "yolo" {
		end = append(end, map[string]any{"tool_call": map[string]any{"id": "c2", "name": "submit_and_exit", "args": map[string]any{"summary": "renamed", "verified": true}}})
	}
	var transcripts [2][]byte
	for k := range transcripts {
		_, o, n := from(k)
		b, err := json.Marshal(map[string]any{"model": "bench", "replies": []any{
			map[string]any{"events": []any{map[string]any{"tool_call": map[string]any{"id": "c1", "name": "editor",
				"args": map[string]string{"path": "big.go", "old_text": o, "new_text": n}}}}},
			map[string]any{"events": end},
		}})
		if err != nil {
			return nil, err
		}
		transcripts[k] = b
	}
	tr := filepath.Join(d, "transcript.json")

	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d, "CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=" + mode,
		"XDG_STATE_HOME=" + filepath.Join(d, "state"), "XDG_CONFIG_HOME=" + filepath.Join(d, "config"), "CLINE_LS_TRANSCRIPT=" + tr}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := rpctest.NewACPClient(stdout, stdin)
	w := &wireRun{clientFS: clientFS, stop: func() {
		stdin.Close()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
	}}
	ctx := context.Background()
	fsCaps := map[string]any{"readTextFile": clientFS, "writeTextFile": clientFS}
	if _, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": fsCaps}}); err != nil {
		w.stop()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	var sessionID string
	w.r = &runner{
		name: name,
		setup: func(k int) error {
			if err := os.WriteFile(tr, transcripts[k%2], 0o644); err != nil {
				return err
			}
			if err := syncFile(path); err != nil {
				return err
			}
			res, err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
			if err != nil {
				return fmt.Errorf("session/new: %w", err)
			}
			var s struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
				return fmt.Errorf("session/new answered %s", res)
			}
			sessionID = s.SessionID
			c.Bytes()
			c.Diffs()
			w.perms = c.Permissions()
			return nil
		},
		run: func(int) error {
			res, err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": sessionID,
				"prompt": []any{map[string]any{"type": "text", "text": "rename compute"}}})
			if err != nil {
				return err
			}
			var p struct {
				StopReason string `json:"stopReason"`
			}
			json.Unmarshal(res, &p)
			if p.StopReason != "end_turn" {
				return fmt.Errorf("session/prompt answered %s", res)
			}
			return nil
		},
		check: func(k int) error {
			w.bytes = c.Bytes()
			w.perms = c.Permissions() - w.perms
			if err := c.Err(); err != nil {
				return err
			}
			if clientFS {
				got, _ := c.File(path)
				if got != want(k) {
					return fmt.Errorf("the client's buffer %s", firstDifference(got, want(k)))
				}
			} else if err := sameFile(path, want(k)); err != nil {
				return err
			}
			if wantPerms := map[string]int{"yolo": 0, "act": 1}[mode]; w.perms != wantPerms {
				return fmt.Errorf("%d permission requests, want %d", w.perms, wantPerms)
			}
			text, _, _ := from(k)
			diffs := c.Diffs()
			if len(diffs) == 0 {
				return errors.New("no diff content sent")
			}
			for _, d := range diffs {
				if d.OldText == nil || applyRegion(text, *d.OldText, d.NewText) != want(k) {
					return errors.New("the diff content sent is not the edit")
				}
			}
			return nil
		},
	}
	return w, nil
}

// applyRegion puts newPart in place of the one occurrence of oldPart,
// or returns "" when oldPart does not occur exactly once.
func applyRegion(text, oldPart, newPart string) string {
	if strings.Count(text, oldPart) != 1 {
		return ""
	}
	return strings.Replace(text, oldPart, newPart, 1)
}

// bytesCheck reports what a wire runner's last run sent the client
// besides the delivered edit, against bytesTarget.
func bytesCheck(name string, w *wireRun) check {
	total := 0
	for _, n := range w.bytes {
		total += n
	}
	preview := total - w.bytes["fs/write_text_file"]
	return check{name: name, isBytes: true, preview: preview, total: total, write: w.bytes["fs/write_text_file"],
		target: fmt.Sprintf("≤ %.2f MB", float64(bytesTarget)/1e6), met: yesNo(preview <= bytesTarget)}
}
