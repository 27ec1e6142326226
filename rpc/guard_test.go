package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// TestAlwaysOptionsNameTheirScope: the "always" options of an approval
// say what they cover, in the plugin's request and in a stock client's
// showMessageRequest, and the answer covers that and no more: after
// "always" on an edit of docs/a.txt, an edit of src/b.txt is asked about
// again (it went through), and after "always" on go-style program and
// subcommand, another program is asked about.
func TestAlwaysOptionsNameTheirScope(t *testing.T) {
	files := map[string]string{"docs/keep": "", "src/keep": ""}
	edit := func(path string) map[string]any {
		return map[string]any{"path": path, "content": "changed\n"}
	}

	t.Run("showMessageRequest", func(t *testing.T) {
		ctx := testCtx(t)
		ed, root := editWorkspace(t, files, askEdits, nil)
		var mu sync.Mutex
		var titles [][]string
		ed.Handle("window/showMessageRequest", func(_ context.Context, raw json.RawMessage) (any, error) {
			var p struct{ Actions []struct{ Title string } }
			json.Unmarshal(raw, &p)
			var ts []string
			for _, a := range p.Actions {
				ts = append(ts, a.Title)
			}
			mu.Lock()
			titles = append(titles, ts)
			mu.Unlock()
			if len(ts) < 3 {
				return nil, nil
			}
			return map[string]any{"title": ts[2]}, nil
		})
		for _, p := range []string{"docs/a.txt", "docs/a.txt", "src/b.txt"} {
			if r := callTool(t, ctx, ed, "write_to_file", edit(p)); r.IsError {
				t.Logf("%s: %+v", p, r)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(titles) != 2 {
			t.Fatalf("asked %d times, want 2 (docs/a.txt once, then src/b.txt): %v", len(titles), titles)
		}
		if want := []string{"Reject", "Allow", "Always allow edits of docs/a.txt"}; !slices.Equal(titles[0], want) {
			t.Errorf("actions %q, want %q", titles[0], want)
		}
		if got := titles[1][2]; got != "Always allow edits of src/b.txt" {
			t.Errorf("second always action %q", got)
		}
		if readFile(t, filepath.Join(root, "src/b.txt")) != "changed\n" {
			t.Error("src/b.txt was not written after its own always")
		}
	})

	t.Run("cline/approvalRequest", func(t *testing.T) {
		ctx := testCtx(t)
		caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
		ed, root := editWorkspace(t, files, map[string]any{"approvals": map[string]any{"edit": "ask", "execute": "ask"}}, caps)
		answered := 0
		answer := func(option string) []string {
			t.Helper()
			m, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool {
				return len(ed.Messages("cline/approvalRequest")) > answered
			})
			if err != nil {
				t.Fatal(err)
			}
			m = ed.Messages("cline/approvalRequest")[answered]
			answered++
			var req struct {
				ApprovalID string
				Options    []struct{ OptionID, Name string }
			}
			json.Unmarshal(m.Params, &req)
			if err := ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
				"outcome": map[string]any{"outcome": "selected", "optionId": option}}, nil); err != nil {
				t.Error(err)
			}
			var names []string
			for _, o := range req.Options {
				names = append(names, o.OptionID+"="+o.Name)
			}
			return names
		}
		run := func(name string, args map[string]any, option string) (toolResult, []string) {
			var names []string
			done := make(chan struct{})
			go func() {
				defer close(done)
				names = answer(option)
			}()
			r := callTool(t, ctx, ed, name, args)
			<-done
			return r, names
		}
		_, names := run("run_commands", map[string]any{"commands": "echo hi"}, "allow_always")
		if want := []string{"allow_once=Allow", "allow_always=Always allow echo hi …", "reject_once=Reject", "reject_always=Always reject echo hi …"}; !slices.Equal(names, want) {
			t.Errorf("options %q, want %q", names, want)
		}
		if r := callTool(t, ctx, ed, "run_commands", map[string]any{"commands": []string{"echo hi"}}); r.IsError {
			t.Errorf("the command always allowed: %+v", r)
		}
		if r, _ := run("run_commands", map[string]any{"commands": "touch made"}, "reject_once"); !r.IsError {
			t.Errorf("another command after always allow of echo hi: %+v", r)
		}
		if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
			t.Error("touch ran")
		}
		_, names = run("write_to_file", edit("docs/a.txt"), "allow_always")
		if !slices.Contains(names, "allow_always=Always allow edits of docs/a.txt") {
			t.Errorf("edit options %q", names)
		}
		if r, _ := run("write_to_file", edit("src/b.txt"), "reject_once"); !r.IsError || !strings.Contains(r.Content, "denied") {
			t.Errorf("an edit of src/b.txt after always allowing docs/a.txt: %+v", r)
		}
	})

	t.Run("session/request_permission", func(t *testing.T) {
		ctx := testCtx(t)
		tr := transcript(t,
			reply(call("w1", "write_to_file", edit("docs/a.txt"))),
			reply(call("w2", "write_to_file", edit("docs/a.txt"))),
			reply(call("w3", "write_to_file", edit("src/b.txt"))),
			reply(text("Done.")),
		)
		getenv, _ := parityEnv(t, tr)
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "docs"), 0o755)
		os.MkdirAll(filepath.Join(root, "src"), 0o755)
		c := connect(t, jsonrpcclient.ACP, getenv)
		var mu sync.Mutex
		var asked [][]string
		c.Handle("session/request_permission", func(_ context.Context, p json.RawMessage) (any, error) {
			var r struct {
				Options []struct {
					OptionID string `json:"optionId"`
					Name     string `json:"name"`
				} `json:"options"`
			}
			json.Unmarshal(p, &r)
			var names []string
			for _, o := range r.Options {
				names = append(names, o.OptionID+"="+o.Name)
			}
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, names)
			answer := "allow_always"
			if len(asked) > 1 {
				answer = "reject_once"
			}
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": answer}}, nil
		})
		if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
			t.Fatal(err)
		}
		parityPrompt(t, ctx, c, map[string]any{"cwd": root, "mcpServers": []any{}})
		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 2 {
			t.Fatalf("asked %d times, want 2 (docs/a.txt once, src/b.txt): %q", len(asked), asked)
		}
		if !slices.Contains(asked[0], "allow_always=Always allow edits of docs/a.txt") || !slices.Contains(asked[0], "reject_always=Always reject edits of docs/a.txt") {
			t.Errorf("first options %q", asked[0])
		}
		if !slices.Contains(asked[1], "allow_always=Always allow edits of src/b.txt") {
			t.Errorf("second options %q", asked[1])
		}
		if _, err := os.Stat(filepath.Join(root, "src", "b.txt")); err == nil {
			t.Error("src/b.txt was written though rejected")
		}
	})
}

// TestDenyRuleSeesCoercedCommandsWholeDaemon: a configured deny of ^rm
// holds however the editor's or model's call spells the command; sent
// as a bare string or a JSON list inside a string it was matched against
// the raw arguments and ran.
func TestDenyRuleSeesCoercedCommandsWholeDaemon(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"dir/f": "x"}, map[string]any{
		"approvals": map[string]any{"execute": "allow"},
		"rules":     []any{map[string]any{"tool": "run_commands", "argPattern": "^rm ", "decision": "deny"}},
	}, nil)
	for _, commands := range []any{"rm -r dir", `["rm -r dir"]`, []string{"ls && rm -r dir"}} {
		r := callTool(t, ctx, ed, "run_commands", map[string]any{"commands": commands})
		if !r.IsError || !strings.Contains(r.Content, "denies") {
			t.Errorf("%v: %+v", commands, r)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "dir", "f")); err != nil {
		t.Errorf("the folder was removed: %v", err)
	}
}
