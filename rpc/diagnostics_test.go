package rpc_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// brokenLines is the tests' diagnostic source: an error on every line
// that holds BROKEN, as a compiler would report an undefined name.
func brokenLines(text string) []rpctest.Diagnostic {
	var out []rpctest.Diagnostic
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "BROKEN") {
			out = append(out, rpctest.Diagnostic{Line: i, Severity: 1, Source: "fakec", Message: "undefined: BROKEN"})
		}
	}
	return out
}

// diagnosedEditor starts a fake editor that declares
// experimental.cline.diagnostics, with a.go open holding text and its
// diagnostics sent, and settleMs as diagnostics.settleMs (nil: unset).
func diagnosedEditor(t *testing.T, content string, settleMs any, declare bool) (*rpctest.Editor, string) {
	return diagnosedEditorModel(t, content, settleMs, declare, "")
}

// diagnosedEditorModel is diagnosedEditor whose model is model ("" for
// none): the tools offered depend on the model's family.
func diagnosedEditorModel(t *testing.T, content string, settleMs any, declare bool, model string) (*rpctest.Editor, string) {
	t.Helper()
	opts := map[string]any{"approvals": map[string]any{"edit": "allow"}, "stateDir": t.TempDir()}
	if model != "" {
		opts["provider"] = map[string]any{"name": "replay", "transcript": transcriptFor(t, model, reply(text("unused")))}
	}
	ctx := testCtx(t)
	if settleMs != nil {
		opts["diagnostics"] = map[string]any{"settleMs": settleMs}
	}
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"diagnostics": declare}}}
	ed, root := editWorkspace(t, map[string]string{"a.go": content}, opts, caps)
	uri := workspace.PathToURI(filepath.Join(root, "a.go"))
	if err := ed.Open(ctx, uri, content); err != nil {
		t.Fatal(err)
	}
	if err := ed.SendDiagnostics(ctx, uri, 1, brokenLines(content)); err != nil {
		t.Fatal(err)
	}
	return ed, uri
}

func TestDiagnosticsOfAnEditInTheResult(t *testing.T) {
	t.Parallel()
	const text = "package a\n\nfunc A() {\n\treturn\n}\n\nfunc B() {\n\tBROKEN()\n}\n"
	for _, tc := range []struct {
		name     string
		old, new string
		want     []string // in the result
		not      []string // not in it
	}{
		{name: "breaks", old: "\treturn\n", new: "\tBROKEN()\n\treturn\n",
			want: []string{"new error at line 4 (fakec): undefined: BROKEN"},
			// The old error moved down one line with the insertion: it is
			// neither new nor fixed.
			not: []string{"line 9", "line 8", "fixed"}},
		{name: "fixes", old: "\tBROKEN()\n", new: "\tB()\n",
			want: []string{"fixed error at line 8 (fakec): undefined: BROKEN"},
			not:  []string{"new error"}},
		{name: "moves", old: "package a\n", new: "package a\n\nimport \"fmt\"\n",
			want: []string{"show no new or fixed problems"},
			not:  []string{"new error", "fixed error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			ed, uri := diagnosedEditor(t, text, nil, true)
			ed.AfterApply = func(ctx context.Context, uri string, version int32, text string) {
				ed.SendDiagnostics(ctx, uri, version, brokenLines(text))
			}
			r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.go", "old_text": tc.old, "new_text": tc.new})
			if r.IsError {
				t.Fatalf("edit failed: %s", r.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, r.Content)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(r.Content, n) {
					t.Errorf("result has %q:\n%s", n, r.Content)
				}
			}
			assertBuffer(t, ctx, ed, uri, strings.Replace(text, tc.old, tc.new, 1))
		})
	}
}

// TestDiagnosticsEveryEditTool: the note comes through the one delivery
// path, whichever tool made the edit.
func TestDiagnosticsEveryEditTool(t *testing.T) {
	t.Parallel()
	const text = "package a\n\nfunc A() {\n\treturn\n}\n"
	for _, tc := range []struct {
		tool  string
		model string // apply_patch is offered to the models trained on it
		args  map[string]any
	}{
		{"replace_in_file", "", map[string]any{"path": "a.go", "diff": "------- SEARCH\n\treturn\n=======\n\tBROKEN()\n>>>>>>> REPLACE\n"}},
		{"apply_patch", "gpt-5", map[string]any{"input": "*** Begin Patch\n*** Update File: a.go\n@@ func A() {\n-\treturn\n+\tBROKEN()\n*** End Patch\n"}},
		{"write_to_file", "", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {\n\tBROKEN()\n}\n"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			ctx := testCtx(t)
			ed, uri := diagnosedEditorModel(t, text, nil, true, tc.model)
			ed.AfterApply = func(ctx context.Context, uri string, version int32, text string) {
				ed.SendDiagnostics(ctx, uri, version, brokenLines(text))
			}
			if tc.tool == "write_to_file" {
				callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "a.go"}}})
			}
			r := callTool(t, ctx, ed, tc.tool, tc.args)
			if r.IsError {
				t.Fatalf("edit failed: %s", r.Content)
			}
			if !strings.Contains(r.Content, "new error at line 4 (fakec): undefined: BROKEN") {
				t.Errorf("result lacks the new error:\n%s", r.Content)
			}
			assertBuffer(t, ctx, ed, uri, strings.Replace(text, "\treturn", "\tBROKEN()", 1))
		})
	}
}

// TestDiagnosticsStaleOrMissing: a report of the text before the edit is
// never the edit's, and with none of the edited text in time (or no
// capability, or the wait off) the result is the plain one.
func TestDiagnosticsStaleOrMissing(t *testing.T) {
	t.Parallel()
	const text = "package a\n\nfunc A() {\n\treturn\n}\n"
	edit := map[string]any{"path": "a.go", "old_text": "\treturn\n", "new_text": "\tBROKEN()\n"}
	plain := func() string {
		ctx := testCtx(t)
		ed, _ := diagnosedEditor(t, text, nil, false)
		r := callTool(t, ctx, ed, "editor", edit)
		if r.IsError {
			t.Fatalf("edit failed: %s", r.Content)
		}
		return r.Content
	}()
	for _, tc := range []struct {
		name    string
		settle  any
		declare bool
		after   func(ed *rpctest.Editor, ctx context.Context, uri string, version int32, text string)
	}{
		{name: "stale", settle: 300, declare: true, after: func(ed *rpctest.Editor, ctx context.Context, uri string, version int32, text string) {
			// A late report for the version the edit was made on, with
			// what the new text would show: it is of the old text.
			ed.SendDiagnostics(ctx, uri, version-1, brokenLines(text))
		}},
		{name: "never", settle: 300, declare: true},
		{name: "undeclared", declare: false, after: func(ed *rpctest.Editor, ctx context.Context, uri string, version int32, text string) {
			ed.SendDiagnostics(ctx, uri, version, brokenLines(text))
		}},
		{name: "off", settle: 0, declare: true, after: func(ed *rpctest.Editor, ctx context.Context, uri string, version int32, text string) {
			ed.SendDiagnostics(ctx, uri, version, brokenLines(text))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			ed, _ := diagnosedEditor(t, text, tc.settle, tc.declare)
			if tc.after != nil {
				ed.AfterApply = func(ctx context.Context, uri string, version int32, text string) {
					tc.after(ed, ctx, uri, version, text)
				}
			}
			r := callTool(t, ctx, ed, "editor", edit)
			if r.IsError {
				t.Fatalf("edit failed: %s", r.Content)
			}
			if r.Content != plain {
				t.Errorf("result = %q, want the plain %q", r.Content, plain)
			}
		})
	}
}

// TestDiagnosticsBounded: a report of many long diagnostics is kept
// bounded and the result lists at most 10 of them, each on one line.
func TestDiagnosticsBounded(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	const text = "package a\n\nfunc A() {\n\treturn\n}\n"
	ed, _ := diagnosedEditor(t, text, nil, true)
	ed.AfterApply = func(ctx context.Context, uri string, version int32, text string) {
		// 5,000 problems, those that can be shown with messages far over
		// the cap: the count and the cut are what is checked, and a 50 MB
		// report would only time the JSON decoder (under -race, minutes).
		var many []rpctest.Diagnostic
		for i := range 5000 {
			long := 10
			if i < 20 {
				long = 10000
			}
			many = append(many, rpctest.Diagnostic{Line: 3, Severity: 2, Source: "lint",
				Message: fmt.Sprintf("problem %d\nsecond line %s", i, strings.Repeat("x", long))})
		}
		ed.SendDiagnostics(ctx, uri, version, many)
	}
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.go", "old_text": "\treturn\n", "new_text": "\treturn // x\n"})
	if r.IsError {
		t.Fatalf("edit failed: %s", r.Content)
	}
	if n := strings.Count(r.Content, "\n- new warning"); n != 10 {
		t.Errorf("%d problems listed, want 10:\n%.2000s", n, r.Content)
	}
	if !strings.Contains(r.Content, "and 190 more") {
		t.Errorf("the count of the rest (200 kept of 5000, 10 shown) is missing:\n%.2000s", r.Content)
	}
	if len(r.Content) > 10*(workspace.MaxDiagnosticMessage+100)+2000 {
		t.Errorf("result is %d bytes", len(r.Content))
	}
	if strings.Contains(r.Content, "\nsecond line") {
		t.Errorf("a message's second line starts a line of the result")
	}
}

// TestDiagnosticsBadReport: a malformed report is refused with an error
// naming the field, and the daemon goes on serving.
func TestDiagnosticsBadReport(t *testing.T) {
	ctx := testCtx(t)
	const text = "package a\n"
	ed, uri := diagnosedEditor(t, text, nil, true)
	for _, p := range []map[string]any{
		{"uri": uri, "diagnostics": []any{}},
		{"uri": uri, "version": 2},
		{"uri": uri, "version": 2, "diagnostics": []any{map[string]any{"message": "x"}}},
		{"uri": uri, "version": 2, "diagnostics": []any{map[string]any{"message": "x", "severity": 9,
			"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}}}},
	} {
		if err := ed.Notify(ctx, "cline/diagnostics", p); err != nil {
			t.Fatal(err)
		}
	}
	ed.Sync(ctx)
	var logged []string
	for _, m := range ed.Messages("window/logMessage") {
		logged = append(logged, string(m.Params))
	}
	all := strings.Join(logged, "\n")
	for _, w := range []string{"version: required", "diagnostics: required", "diagnostics[0].range: required", "diagnostics[0].severity"} {
		if !strings.Contains(all, w) {
			t.Errorf("no report naming %q in %s", w, all)
		}
	}
	r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "a.go"}}})
	if r.IsError {
		t.Errorf("the daemon stopped serving: %s", r.Content)
	}
}

// TestDiagnosticsWaitEndsOnCancel: a turn cancelled while its edit waits
// for diagnostics that never come ends at once, not after settleMs.
func TestDiagnosticsWaitEndsOnCancel(t *testing.T) {
	ctx := testCtx(t) // the guard: far below the minute the wait could take
	const text = "package a\n\nfunc A() {\n\treturn\n}\n"
	ed, _ := diagnosedEditor(t, text, 60000, true)
	root := ed.Server.Folders().Paths()[0]
	id := newSessionIn(t, ctx, ed, root)
	applied := make(chan struct{}, 1)
	ed.AfterApply = func(context.Context, string, int32, string) { applied <- struct{}{} }
	done := make(chan callResult, 1)
	go func() {
		var res callResult
		ed.Call(ctx, "cline/callTool", map[string]any{"sessionId": id, "name": "editor",
			"arguments": map[string]any{"path": "a.go", "old_text": "\treturn\n", "new_text": "\tBROKEN()\n"}}, &res)
		done <- res
	}()
	select {
	case <-applied:
	case <-ctx.Done():
		t.Fatal("the edit never reached the editor")
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the call still waited for diagnostics after its cancel")
	}
}

// TestDiagnosticsWithoutABaseline: with no report of the text before the
// edit, what the editor reports after it is listed as it is, not as new.
func TestDiagnosticsWithoutABaseline(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	const text = "package a\n\nfunc A() {\n\tBROKEN()\n\treturn\n}\n"
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"diagnostics": true}}}
	ed, root := editWorkspace(t, map[string]string{"a.go": text}, nil, caps)
	uri := workspace.PathToURI(filepath.Join(root, "a.go"))
	if err := ed.Open(ctx, uri, text); err != nil {
		t.Fatal(err)
	}
	ed.AfterApply = func(ctx context.Context, uri string, version int32, text string) {
		ed.SendDiagnostics(ctx, uri, version, brokenLines(text))
	}
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.go", "old_text": "\treturn\n", "new_text": "\treturn // done\n"})
	if r.IsError {
		t.Fatalf("edit failed: %s", r.Content)
	}
	if !strings.Contains(r.Content, "(none known from before it to compare with):\n- error at line 4 (fakec): undefined: BROKEN") || strings.Contains(r.Content, "new error") {
		t.Errorf("result does not list the problem as present now:\n%s", r.Content)
	}
}
