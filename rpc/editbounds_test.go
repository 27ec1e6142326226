package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// hugeLine is a minified file: one line of about 1.7 MB.
func hugeLine() string {
	var b strings.Builder
	for i := 0; b.Len() < 1700<<10; i++ {
		fmt.Fprintf(&b, `{"id":%d,"v":"token"},`, i)
	}
	return b.String()
}

// manyLines is a file of 50,000 short lines.
func manyLines() string {
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	return b.String()
}

// TestEditViewsAreBounded: whatever the file, what an edit sends besides
// the edit itself (the result the model or the editor's cline/callTool
// gets, cline/diff, the approval's preview) stays small and says what it
// cut, through every edit tool; the file is edited exactly.
func TestEditViewsAreBounded(t *testing.T) {
	t.Parallel()
	const bound = 40 << 10
	huge, many := hugeLine(), manyLines()
	mid := strings.Index(huge[len(huge)/2:], "token") + len(huge)/2
	hugeEdited := huge[:mid] + "TOKEN" + huge[mid+5:]
	manyEdited := strings.Replace(strings.Replace(many, "line 00000\n", "first\n", 1), "line 49999\n", "last\n", 1)
	// The one-token edit as the model would write it for each tool: the
	// editor's unique match needs only the token and what makes it unique.
	unique := huge[mid-30 : mid+5]
	cases := []struct {
		name, file, text, want string
		tool                   string
		args                   map[string]any
		note                   string // a cut the views must say
	}{
		{"editor, one token of a huge line", "min.json", huge, hugeEdited, "editor",
			map[string]any{"path": "min.json", "old_text": unique, "new_text": unique[:len(unique)-5] + "TOKEN"}, "characters left out"},
		{"replace_in_file, a huge line", "min.json", huge, hugeEdited, "replace_in_file",
			map[string]any{"path": "min.json", "diff": "------- SEARCH\n" + huge + "\n=======\n" + hugeEdited + "\n+++++++ REPLACE\n"}, "characters left out"},
		{"editor, both ends of 50k lines", "long.txt", many, strings.Replace(many, "line 00000\n", "first\n", 1), "editor",
			map[string]any{"path": "long.txt", "old_text": "line 00000\n", "new_text": "first\n"}, ""},
		{"apply_patch, both ends of 50k lines", "long.txt", many, manyEdited, "apply_patch",
			map[string]any{"input": "*** Begin Patch\n*** Update File: long.txt\n@@\n-line 00000\n+first\n line 00001\n@@\n line 49998\n-line 49999\n+last\n*** End of File\n*** End Patch"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true, "diffs": true}}}
			opts := askEdits
			if c.tool == "apply_patch" {
				// apply_patch is offered to the models trained on it.
				opts = map[string]any{"approvals": askEdits["approvals"],
					"provider": map[string]any{"name": "replay", "transcript": transcriptFor(t, "gpt-5", reply(text("unused")))}}
			}
			ed, root := editWorkspace(t, map[string]string{c.file: c.text}, opts, caps)
			previews := approveAll(t, ctx, ed)
			r := callTool(t, ctx, ed, c.tool, c.args)
			if r.IsError {
				t.Fatalf("%s failed: %.500s", c.tool, r.Content)
			}
			if got := readFile(t, filepath.Join(root, c.file)); got != c.want {
				t.Fatal("the file is not the edit's result")
			}
			check := func(what, text string) {
				t.Helper()
				if len(text) > bound {
					t.Errorf("%s is %d bytes, want at most %d", what, len(text), bound)
				}
				if c.note != "" && !strings.Contains(text, c.note) {
					t.Errorf("%s does not say %q: %.300s", what, c.note, text)
				}
			}
			check("the result", r.Content)
			if ps := previews(); len(ps) != 1 {
				t.Errorf("%d approval requests, want 1", len(ps))
			} else {
				check("the approval preview", ps[0])
			}
			diffs := ed.Messages("cline/diff")
			if len(diffs) != 1 {
				t.Fatalf("%d cline/diff notifications, want 1", len(diffs))
			}
			var d struct {
				Diff           string
				Added, Removed int
			}
			json.Unmarshal(diffs[0].Params, &d)
			check("cline/diff", d.Diff)
			if len(diffs[0].Params) > bound+1<<10 {
				t.Errorf("cline/diff is %d bytes on the wire", len(diffs[0].Params))
			}
		})
	}
}

// approveAll answers every cline/approvalRequest with allow_once until
// the test ends; what it returns gives the previews (diff) asked with.
func approveAll(t *testing.T, ctx context.Context, ed *rpctest.Editor) func() []string {
	var mu sync.Mutex
	var previews []string
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() {
		seen := 0
		for {
			_, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool {
				return len(ed.Messages("cline/approvalRequest")) > seen
			})
			if err != nil {
				return
			}
			m := ed.Messages("cline/approvalRequest")[seen]
			seen++
			var req struct {
				ApprovalID string
				Diff       string
			}
			json.Unmarshal(m.Params, &req)
			mu.Lock()
			previews = append(previews, req.Diff)
			mu.Unlock()
			ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID, "outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(previews)
	}
}

// TestEditFailureQuotesAreBounded: a failed edit that quotes the file's
// line it stopped at does not quote megabytes of it.
func TestEditFailureQuotesAreBounded(t *testing.T) {
	ctx := testCtx(t)
	huge := hugeLine()
	ed, _ := editWorkspace(t, map[string]string{"min.json": "header\n" + huge + "\n"}, nil, nil)
	r := callTool(t, ctx, ed, "replace_in_file", map[string]any{"path": "min.json",
		"diff": "------- SEARCH\nheader\nnot the second line\n=======\nx\n+++++++ REPLACE\n"})
	if !r.IsError || len(r.Content) > 8<<10 || !strings.Contains(r.Content, "characters left out") {
		t.Errorf("failure of %d bytes (error %v): %.600s", len(r.Content), r.IsError, r.Content)
	}
}

// TestACPEditViewsAreBounded: ACP's diff content, in the permission
// request and the final update, is the changed region, narrowed inside a
// huge line and one region per far-apart change, each exact; nothing else
// sent besides the delivered edit grows with the file.
func TestACPEditViewsAreBounded(t *testing.T) {
	t.Parallel()
	huge, many := hugeLine(), manyLines()
	mid := strings.Index(huge[len(huge)/2:], "token") + len(huge)/2
	unique := huge[mid-30 : mid+5]
	manyEdited := strings.Replace(strings.Replace(many, "line 00000\n", "first\n", 1), "line 49999\n", "last\n", 1)
	cases := []struct {
		name, file, text, want string
		replies                []any
		regions                int // diff items per diff content sent
	}{
		{"one token of a huge line", "min.json", huge, huge[:mid] + "TOKEN" + huge[mid+5:], []any{
			reply(call("c1", "editor", map[string]any{"path": "min.json", "old_text": unique, "new_text": unique[:len(unique)-5] + "TOKEN"})),
			reply(text("Done.")),
		}, 1},
		{"both ends of 50k lines", "long.txt", many, manyEdited, []any{
			reply(call("c1", "replace_in_file", map[string]any{"path": "long.txt", "diff": "------- SEARCH\nline 00000\n=======\nfirst\n+++++++ REPLACE\n" +
				"------- SEARCH\nline 49999\n=======\nlast\n+++++++ REPLACE\n"})),
			reply(text("Done.")),
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			root, state := t.TempDir(), t.TempDir()
			path := filepath.Join(root, tc.file)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			tr := transcript(t, tc.replies...)
			config := t.TempDir()
			os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
			os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), []byte(`{"provider":{"contextWindow":10000000}}`), 0o644)
			c := startACPClient(t, []string{"CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act", "XDG_STATE_HOME=" + state,
				"XDG_CONFIG_HOME=" + config, "CLINE_LS_TRANSCRIPT=" + tr})
			acpTurn(t, ctx, c, true, root, "edit it")
			if got, _ := c.File(path); got != tc.want {
				t.Fatalf("the client's buffer is not the edited file (%d bytes, want %d)", len(got), len(tc.want))
			}
			diffs := c.Diffs()
			if want := tc.regions * (1 + c.Permissions()); len(diffs) != want || c.Permissions() != 1 {
				t.Fatalf("%d diff items after %d permission requests, want %d", len(diffs), c.Permissions(), want)
			}
			for _, d := range diffs {
				if d.OldText == nil {
					t.Fatal("diff content without oldText for a file that existed")
				}
				o, n := *d.OldText, d.NewText
				if len(o)+len(n) > 2<<10 {
					t.Errorf("a diff item holds %d bytes, want the change in its context", len(o)+len(n))
				}
				if strings.Count(tc.text, o) != 1 || !strings.Contains(tc.want, n) {
					t.Errorf("diff item %.80q → %.80q is not a region of the edit", o, n)
				}
			}
			by := c.Bytes()
			total := 0
			for _, n := range by {
				total += n
			}
			// The file is read and written whole by the client (fs/*); the
			// rest is what the views of the edit cost.
			besides := total - by["fs/write_text_file"] - by["response"]
			t.Logf("bytes to the client: %d in all, %d besides the edit and answers; by method %v", total, besides, by)
			if besides > 100<<10 {
				t.Errorf("%d bytes sent besides the delivered edit, want them bounded", besides)
			}
		})
	}
}

// TestPatchOfManyFilesIsBounded: each file's diff is bounded, and so are
// they together in apply_patch's result and its approval preview, which
// say what they left out.
func TestPatchOfManyFilesIsBounded(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	files := map[string]string{}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for f := range 30 {
		var old, hunk strings.Builder
		for i := range 300 {
			l := fmt.Sprintf("file %02d line %03d %s", f, i, strings.Repeat("x", 80))
			old.WriteString(l + "\n")
			hunk.WriteString("-" + l + "\n+" + strings.ToUpper(l) + "\n")
		}
		name := fmt.Sprintf("f%02d.txt", f)
		files[name] = old.String()
		fmt.Fprintf(&patch, "*** Update File: %s\n@@\n%s", name, hunk.String())
	}
	patch.WriteString("*** End Patch")
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	ed, _ := editWorkspace(t, files, map[string]any{"approvals": askEdits["approvals"],
		"provider": map[string]any{"name": "replay", "transcript": transcriptFor(t, "gpt-5", reply(text("unused")))}}, caps)
	previews := approveAll(t, ctx, ed)
	r := callTool(t, ctx, ed, "apply_patch", map[string]any{"input": patch.String()})
	if r.IsError {
		t.Fatalf("apply_patch failed: %.500s", r.Content)
	}
	if len(r.Content) > 72<<10 || !strings.Contains(r.Content, "more files not shown") || !strings.Contains(r.Content, "M f29.txt") {
		t.Errorf("result of %d bytes, want every file named and the diffs bounded with a note: …%s", len(r.Content), r.Content[max(0, len(r.Content)-300):])
	}
	if ps := previews(); len(ps) != 1 || len(ps[0]) > 72<<10 || !strings.Contains(ps[0], "more files not shown") {
		t.Errorf("%d previews, the first of %d bytes; want one, bounded, saying what it left out", len(ps), len(ps[0]))
	}
}

// TestMessageApprovalPreviewIsShort: a stock client asked through
// window/showMessageRequest gets the preview as text to read, cut to tens
// of KiB, even where a plugin would get the exact patch (under a MiB).
func TestMessageApprovalPreviewIsShort(t *testing.T) {
	ctx := testCtx(t)
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("z", 60))
	}
	text := b.String()
	edited := strings.ReplaceAll(text, "zzzz", "ZZZZ")
	ed, root := editWorkspace(t, map[string]string{"big.txt": text}, askEdits, nil)
	var mu sync.Mutex
	var asked []string
	ed.Handle("window/showMessageRequest", func(_ context.Context, p json.RawMessage) (any, error) {
		var req struct{ Message string }
		json.Unmarshal(p, &req)
		mu.Lock()
		asked = append(asked, req.Message)
		mu.Unlock()
		return map[string]any{"title": "Allow"}, nil
	})
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "big.txt", "old_text": text, "new_text": edited})
	if r.IsError || readFile(t, filepath.Join(root, "big.txt")) != edited {
		t.Fatalf("editor: %.300s", r.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no approval asked")
	}
	m := asked[len(asked)-1]
	if len(m) > 40<<10 || !strings.Contains(m, "for reading, not a patch") || !strings.Contains(m, "more lines not shown") {
		t.Errorf("the message is %d bytes: %.300s…", len(m), m)
	}
}
