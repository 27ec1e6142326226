package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
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

// An lspRun is the same edit through cline/callTool over LSP: the
// cline-ls binary started as an editor starts it (LSP framing on its
// stdio), driven by internal/jsonrpcclient, the file not open, in the
// editor's own yolo session, so the daemon writes the file (durably) and
// tells the editor with cline/diff. A timed run is one cline/callTool,
// from sending it to its answer; the arguments are encoded beforehand, as
// an editor holds them before it sends them.
type lspRun struct {
	r *runner
	// bytes the client was sent in the last run, by method ("" for
	// answers), and the cline/diff notifications of that run.
	mu    sync.Mutex
	bytes map[string]int
	diffs []wire.DiffParams
	stop  func()
}

// newLSPRun starts a daemon for the LSP runner; from and want are case
// 1's, as for newWireRun.
func newLSPRun(name, slug, bin, base, textA string, from func(k int) (string, string, string), want func(k int) string) (*lspRun, error) {
	d := filepath.Join(base, slug)
	root := filepath.Join(d, "ws")
	for _, p := range []string{filepath.Join(d, "config"), filepath.Join(d, "state"), root} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(root, "big.go")
	if err := os.WriteFile(path, []byte(textA), 0o644); err != nil {
		return nil, err
	}
	var params [2]json.RawMessage
	for k := range params {
		_, o, n := from(k)
		b, err := json.Marshal(map[string]any{"name": "editor",
			"arguments": map[string]string{"path": "big.go", "old_text": o, "new_text": n}})
		if err != nil {
			return nil, err
		}
		params[k] = b
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d, "CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=yolo",
		"XDG_STATE_HOME=" + filepath.Join(d, "state"), "XDG_CONFIG_HOME=" + filepath.Join(d, "config")}
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
	l := &lspRun{bytes: map[string]int{}}
	c := jsonrpcclient.New(stdout, stdin, jsonrpcclient.Options{Framing: jsonrpcclient.LSP, Discard: true,
		Observe: func(m jsonrpcclient.Message) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.bytes[m.Method] += len(m.Params)
			if m.Method == "cline/diff" {
				var p wire.DiffParams
				if json.Unmarshal(m.Params, &p) == nil {
					l.diffs = append(l.diffs, p)
				}
			}
		}})
	l.stop = func() {
		stdin.Close()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
	}
	ctx := context.Background()
	rootURI := "file://" + filepath.ToSlash(root)
	if err := c.Call(ctx, "initialize", map[string]any{"processId": nil, "rootUri": rootURI,
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "ws"}},
		"capabilities": map[string]any{
			"workspace":    map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
			"experimental": map[string]any{"cline": map[string]any{"diffs": true}},
		}}, nil); err != nil {
		l.stop()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.Notify(ctx, "initialized", map[string]any{}); err != nil {
		l.stop()
		return nil, err
	}
	l.r = &runner{
		name: name,
		setup: func(int) error {
			l.mu.Lock()
			l.bytes, l.diffs = map[string]int{}, nil
			l.mu.Unlock()
			return syncFile(path)
		},
		run: func(k int) error {
			var res struct {
				Content string `json:"content"`
				IsError bool   `json:"isError"`
			}
			raw, err := c.CallRaw(ctx, "cline/callTool", params[k%2])
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
				return fmt.Errorf("cline/callTool answered %.300s", raw)
			}
			l.mu.Lock()
			l.bytes[""] += len(raw)
			l.mu.Unlock()
			return nil
		},
		check: func(k int) error {
			if err := sameFile(path, want(k)); err != nil {
				return err
			}
			// cline/diff follows the answer on the wire: wait for it.
			deadline := time.Now().Add(10 * time.Second)
			for {
				l.mu.Lock()
				diffs := slices.Clone(l.diffs)
				l.mu.Unlock()
				if len(diffs) > 0 {
					return checkLSPDiff(diffs, rootURI+"/big.go")
				}
				if time.Now().After(deadline) {
					return errors.New("no cline/diff sent")
				}
				time.Sleep(time.Millisecond)
			}
		},
	}
	return l, nil
}

// checkLSPDiff checks that the one cline/diff of a run is the edit's:
// the file's URI, every changed line counted, and a bounded text.
func checkLSPDiff(diffs []wire.DiffParams, uri string) error {
	if len(diffs) != 1 {
		return fmt.Errorf("%d cline/diff notifications, want 1", len(diffs))
	}
	d := diffs[0]
	if d.URI != uri || d.Added != replaceLines || d.Removed != replaceLines || d.Version != nil {
		return fmt.Errorf("cline/diff for %s, %d added, %d removed, version %v; want %s, %d and %d, no version",
			d.URI, d.Added, d.Removed, d.Version, uri, replaceLines, replaceLines)
	}
	if !strings.Contains(d.Diff, "evaluate(") || !strings.Contains(d.Diff, "compute(") || len(d.Diff) > bytesTarget {
		return fmt.Errorf("cline/diff's text (%d bytes) does not show the edit", len(d.Diff))
	}
	return nil
}

// lspBytesCheck reports what the LSP runner's last run sent the client.
func lspBytesCheck(name string, l *lspRun) check {
	l.mu.Lock()
	defer l.mu.Unlock()
	total := 0
	for _, n := range l.bytes {
		total += n
	}
	return check{name: name, isBytes: true, preview: total, total: total,
		target: fmt.Sprintf("≤ %.2f MB", float64(bytesTarget)/1e6), met: yesNo(total <= bytesTarget)}
}
