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
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// The tests' workspace: Foo is declared in a.go and used in both files;
// line 3 holds a character outside the BMP before Foo, so that its
// position differs between UTF-16 and UTF-8.
const (
	lspA = "package a\n\n// 😀 Foo is the answer.\nfunc Foo() int { return 42 }\n\nfunc Bar() int { return Foo() + Foo() }\n"
	lspB = "package a\n\nvar x = Foo()\n"
)

// lspEditor starts a fake editor declaring features of experimental.cline.lsp
// (nil: no lsp member at all), with a.go and b.go on disk and extra
// capabilities and options merged in.
func lspEditor(t *testing.T, features any, opts map[string]any, caps map[string]any) (*rpctest.Editor, string) {
	t.Helper()
	cline := map[string]any{"approvals": true}
	if features != nil {
		cline["lsp"] = features
	}
	c := map[string]any{"experimental": map[string]any{"cline": cline}}
	for k, v := range caps {
		c[k] = v
	}
	if opts == nil {
		opts = map[string]any{"approvals": map[string]any{"edit": "allow"}}
	}
	opts["stateDir"] = t.TempDir()
	return editWorkspace(t, map[string]string{"a.go": lspA, "b.go": lspB}, opts, c)
}

var allLSP = []string{"references", "definition", "rename", "documentSymbols"}

// toolNamesOf lists the tools cline/tools renders for mode.
func toolNamesOf(t *testing.T, ctx context.Context, ed *rpctest.Editor, mode string) []string {
	t.Helper()
	var r struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "anthropic", "mode": mode}, &r); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestLSPToolsOfferedAsDeclared: each tool is offered only for the
// feature the client declared, rename_symbol only in modes that edit, and
// none without the capability or in the ACP dialect's absence of it.
func TestLSPToolsOfferedAsDeclared(t *testing.T) {
	t.Parallel()
	lspTools := []string{"find_references", "go_to_definition", "document_symbols", "rename_symbol"}
	for _, tc := range []struct {
		name     string
		features any
		mode     string
		want     []string
	}{
		{"absent", nil, "act", nil},
		{"empty", []string{}, "act", nil},
		{"unknown only", []string{"hover", "Rename"}, "act", nil},
		{"references", []string{"references"}, "act", []string{"find_references"}},
		{"rename only", []string{"rename"}, "act", []string{"rename_symbol"}},
		{"all act", allLSP, "act", lspTools},
		{"all yolo", allLSP, "yolo", lspTools},
		{"all plan", allLSP, "plan", []string{"find_references", "go_to_definition", "document_symbols"}},
		{"all search", allLSP, "search", []string{"find_references", "go_to_definition", "document_symbols"}},
		{"all minimal", allLSP, "minimal", nil},
		{"twice", []string{"definition", "definition", "hover"}, "act", []string{"go_to_definition"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			ed, _ := lspEditor(t, tc.features, nil, nil)
			var got []string
			for _, n := range toolNamesOf(t, ctx, ed, tc.mode) {
				if slices.Contains(lspTools, n) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("language-server tools = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLSPToolsAnnounced: initialize's experimental.cline.tools names the
// language-server tools only for what the client declared.
func TestLSPToolsAnnounced(t *testing.T) {
	for _, tc := range []struct {
		features any
		want     []string
	}{
		{nil, nil},
		{[]string{"rename", "hover"}, []string{"rename_symbol"}},
		{allLSP, []string{"find_references", "go_to_definition", "document_symbols", "rename_symbol"}},
	} {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{ToolNames: tools.BuiltinNames})
		caps := map[string]any{}
		if tc.features != nil {
			caps["experimental"] = map[string]any{"cline": map[string]any{"lsp": tc.features}}
		}
		res, err := ed.Initialize(ctx, t.TempDir(), map[string]any{"capabilities": caps})
		if err != nil {
			t.Fatal(err)
		}
		var got, all []string
		for _, n := range res["capabilities"].(map[string]any)["experimental"].(map[string]any)["cline"].(map[string]any)["tools"].([]any) {
			all = append(all, n.(string))
			if strings.HasSuffix(n.(string), "_symbol") || strings.HasSuffix(n.(string), "_symbols") || n == "find_references" || n == "go_to_definition" {
				got = append(got, n.(string))
			}
		}
		if !slices.Equal(got, tc.want) || !slices.Contains(all, "read_files") {
			t.Errorf("declared %v: announced %v", tc.features, all)
		}
	}
}

// TestLSPCapabilityBadShape: a capability of the wrong type is a clear
// -32602 naming it, and the daemon goes on serving.
func TestLSPCapabilityBadShape(t *testing.T) {
	ctx := testCtx(t)
	ed := rpctest.New(t, rpc.Options{})
	_, err := ed.Initialize(ctx, t.TempDir(), map[string]any{"capabilities": map[string]any{
		"experimental": map[string]any{"cline": map[string]any{"lsp": true}}}})
	if c := codeOf(t, err); c != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "lsp") {
		t.Fatalf("initialize with lsp: true = %v", err)
	}
	if _, err := ed.Initialize(ctx, t.TempDir(), nil); err != nil {
		t.Fatalf("a good initialize after the bad one: %v", err)
	}
}

// lspServer is the tests' language server behind the fake editor: it
// answers each method with what the test put in answers (a func of the
// params, or a value), an error for errs.
type lspServer struct {
	mu      sync.Mutex
	answers map[string]func(params json.RawMessage) (any, error)
}

func serveLSP(ed *rpctest.Editor, answers map[string]func(json.RawMessage) (any, error)) *lspServer {
	s := &lspServer{answers: answers}
	ed.ServeLSP(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		s.mu.Lock()
		f := s.answers[method]
		s.mu.Unlock()
		if f == nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.MethodNotFound, Message: "no server answers " + method}
		}
		return f(params)
	})
	return s
}

func constant(v any) func(json.RawMessage) (any, error) {
	return func(json.RawMessage) (any, error) { return v, nil }
}

func loc(uri string, line, char uint32) map[string]any {
	return map[string]any{"uri": uri, "range": rng(line, char, line, char+3)}
}

type sentPosition struct {
	TextDocument struct{ URI string }
	Position     workspace.Position
	Context      *struct{ IncludeDeclaration bool }
	NewName      string
}

func lastSent(t *testing.T, ed *rpctest.Editor, method string) sentPosition {
	t.Helper()
	var p sentPosition
	reqs := ed.LSPRequests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method {
			if err := json.Unmarshal(reqs[i].Params, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no %s request sent; sent %v", method, reqs)
	return p
}

// TestLSPFindReferences: the position sent is the symbol's in the live
// buffer, in the connection's encoding; the result groups the locations
// by file with each line's text, workspace files first, and marks what
// lies outside the workspace without reading it.
func TestLSPFindReferences(t *testing.T) {
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			ctx := testCtx(t)
			ed, root := lspEditor(t, allLSP, nil, map[string]any{"general": map[string]any{"positionEncodings": []string{enc}}})
			aURI, bURI := workspace.PathToURI(filepath.Join(root, "a.go")), workspace.PathToURI(filepath.Join(root, "b.go"))
			outside := filepath.Join(t.TempDir(), "secret.go")
			os.WriteFile(outside, []byte("package secret\n\nvar Foo = 1 // SECRET LINE\n"), 0o644)
			link := filepath.Join(root, "link.go") // inside, but leading out
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			// The user's unsaved typing moved Foo's use in b.go down a line.
			unsaved := "package a\n\n// typed\nvar x = Foo()\n"
			ed.Open(ctx, bURI, unsaved)
			serveLSP(ed, map[string]func(json.RawMessage) (any, error){
				"textDocument/references": constant([]any{
					loc(bURI, 3, 8), loc(aURI, 5, 24), loc(aURI, 3, 5), loc(aURI, 5, 32),
					loc(workspace.PathToURI(outside), 2, 4), loc("untitled:Untitled-1", 0, 0), loc(aURI, 3, 5),
					loc(workspace.PathToURI(link), 2, 4),
				}),
			})
			r := callTool(t, ctx, ed, "find_references", map[string]any{"path": "a.go", "symbol": "Foo", "line": 3})
			if r.IsError {
				t.Fatalf("find_references: %s", r.Content)
			}
			p := lastSent(t, ed, "textDocument/references")
			wantChar := uint32(6) // "// " + 😀 (two UTF-16 units) + " "
			if enc == "utf-8" {
				wantChar = 8
			}
			if p.TextDocument.URI != aURI || p.Position != (workspace.Position{Line: 2, Character: wantChar}) || p.Context == nil || !p.Context.IncludeDeclaration {
				t.Errorf("sent %+v, want %s at 2:%d with the declaration", p, aURI, wantChar)
			}
			want := []string{
				"7 references to `Foo` (a.go:3) in 5 files:",
				"a.go\n  a.go:4:6: func Foo() int { return 42 }\n  a.go:6:25: func Bar() int { return Foo() + Foo() }\n  a.go:6:33: func Bar() int",
				"b.go\n  b.go:4:9: var x = Foo()",
				outside + " (outside the workspace; not read)\n  3:5",
				link + " (outside the workspace; not read)\n  3:5",
				"untitled:Untitled-1 (not a file)",
			}
			for _, w := range want {
				if !strings.Contains(r.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, r.Content)
				}
			}
			if strings.Contains(r.Content, "SECRET") {
				t.Errorf("a file outside the workspace was read:\n%s", r.Content)
			}
			if strings.Index(r.Content, "b.go") > strings.Index(r.Content, outside) {
				t.Errorf("workspace files are not listed first:\n%s", r.Content)
			}
		})
	}
}

// TestLSPSymbolPosition: every way the model may name a symbol, and each
// way it can fail to, with a message that says what to give.
func TestLSPSymbolPosition(t *testing.T) {
	ctx := testCtx(t)
	ed, root := lspEditor(t, allLSP, nil, nil)
	aURI := workspace.PathToURI(filepath.Join(root, "a.go"))
	serveLSP(ed, map[string]func(json.RawMessage) (any, error){
		"textDocument/definition": constant(loc(aURI, 3, 5)),
		"textDocument/documentSymbol": constant([]any{
			map[string]any{"name": "Foo", "kind": 12, "range": rng(3, 0, 3, 28), "selectionRange": rng(3, 5, 3, 8)},
			map[string]any{"name": "Bar", "kind": 12, "range": rng(5, 0, 5, 39), "selectionRange": rng(5, 5, 5, 8)},
		}),
	})
	for _, tc := range []struct {
		name    string
		args    map[string]any
		at      workspace.Position // sent, when the call goes through
		wantErr string
	}{
		{name: "symbol on its line", args: map[string]any{"symbol": "Bar", "line": 6}, at: workspace.Position{Line: 5, Character: 5}},
		{name: "line as a string", args: map[string]any{"symbol": "Bar", "line": "6"}, at: workspace.Position{Line: 5, Character: 5}},
		{name: "column picks", args: map[string]any{"symbol": "Foo", "line": 6, "column": 34}, at: workspace.Position{Line: 5, Character: 32}},
		{name: "twice on the line", args: map[string]any{"symbol": "Foo", "line": 6}, wantErr: "`Foo` occurs 2 times on line 6 of a.go (columns 25, 33); give column"},
		{name: "column misses", args: map[string]any{"symbol": "Foo", "line": 6, "column": 2}, wantErr: "at columns 25, 33, not at column 2"},
		{name: "not on the line", args: map[string]any{"symbol": "Foo", "line": 1}, wantErr: "`Foo` is not on line 1 of a.go, which reads: package a"},
		{name: "part of a word", args: map[string]any{"symbol": "Fo", "line": 4}, wantErr: "`Fo` is not on line 4"},
		{name: "as a call", args: map[string]any{"symbol": "Bar()", "line": 6}, at: workspace.Position{Line: 5, Character: 5}},
		{name: "qualified", args: map[string]any{"symbol": "a.Bar"}, at: workspace.Position{Line: 5, Character: 5}},
		{name: "in backticks", args: map[string]any{"symbol": "`Foo`", "line": 6, "column": 25}, at: workspace.Position{Line: 5, Character: 24}},
		{name: "qualified, not there", args: map[string]any{"symbol": "pkg.Baz"}, wantErr: "`pkg.Baz` does not occur in a.go"},
		{name: "once in the file", args: map[string]any{"symbol": "Bar"}, at: workspace.Position{Line: 5, Character: 5}},
		{name: "declaration by document symbols", args: map[string]any{"symbol": "Foo"}, at: workspace.Position{Line: 3, Character: 5}},
		{name: "line alone", args: map[string]any{"line": 4}, at: workspace.Position{Line: 3, Character: 5}},
		{name: "line without a declaration", args: map[string]any{"line": 1}, wantErr: "Give symbol: the name on line 1 of a.go"},
		{name: "absent", args: map[string]any{"symbol": "Baz"}, wantErr: "`Baz` does not occur in a.go"},
		{name: "past the end", args: map[string]any{"symbol": "Foo", "line": 99}, wantErr: "a.go has 7 lines; line 99 is past its end"},
		{name: "neither", args: map[string]any{}, wantErr: "Give symbol, line or both"},
		{name: "outside", args: map[string]any{"path": "../x.go", "symbol": "Foo"}, wantErr: "leads out of the workspace"},
		{name: "missing file", args: map[string]any{"path": "c.go", "symbol": "Foo"}, wantErr: "c.go does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": "a.go"}
			for k, v := range tc.args {
				args[k] = v
			}
			before := len(ed.Messages("cline/lspRequest"))
			r := callTool(t, ctx, ed, "go_to_definition", args)
			if tc.wantErr != "" {
				if !r.IsError || !strings.Contains(r.Content, tc.wantErr) {
					t.Fatalf("result = %+v, want an error with %q", r, tc.wantErr)
				}
				for _, req := range ed.LSPRequests()[before:] {
					if req.Method == "textDocument/definition" {
						t.Errorf("a definition request was sent for a call that names no position")
					}
				}
				return
			}
			if r.IsError {
				t.Fatalf("go_to_definition: %s", r.Content)
			}
			if p := lastSent(t, ed, "textDocument/definition"); p.Position != tc.at {
				t.Errorf("sent position %+v, want %+v", p.Position, tc.at)
			}
			if !strings.Contains(r.Content, "a.go:4:6: func Foo() int { return 42 }") {
				t.Errorf("result = %s", r.Content)
			}
		})
	}
}

// TestLSPDefinitionShapes: every shape textDocument/definition answers
// with is read.
func TestLSPDefinitionShapes(t *testing.T) {
	ctx := testCtx(t)
	ed, root := lspEditor(t, []string{"definition"}, nil, nil)
	aURI := workspace.PathToURI(filepath.Join(root, "a.go"))
	link := map[string]any{"targetUri": aURI, "targetRange": rng(3, 0, 3, 28), "targetSelectionRange": rng(3, 5, 3, 8), "originSelectionRange": rng(5, 24, 5, 27)}
	for _, tc := range []struct {
		name   string
		answer any
		want   string
	}{
		{"location", loc(aURI, 3, 5), "1 definition of `Foo` (a.go:6) in 1 file:\na.go\n  a.go:4:6:"},
		{"locations", []any{loc(aURI, 3, 5)}, "a.go:4:6:"},
		{"links", []any{link}, "a.go:4:6:"},
		{"null", nil, "The editor's language server found no definitions of `Foo` (a.go:6)."},
		{"empty", []any{}, "found no definitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/definition": constant(tc.answer)})
			r := callTool(t, ctx, ed, "go_to_definition", map[string]any{"path": "a.go", "symbol": "Foo", "line": 6, "column": 25})
			if r.IsError || !strings.Contains(r.Content, tc.want) {
				t.Errorf("result = %+v, want %q", r, tc.want)
			}
		})
	}
}

// TestLSPDocumentSymbols: a tree of DocumentSymbol and a flat list of
// SymbolInformation, each with kinds and lines, bounded.
func TestLSPDocumentSymbols(t *testing.T) {
	ctx := testCtx(t)
	ed, root := lspEditor(t, []string{"documentSymbols"}, nil, nil)
	aURI := workspace.PathToURI(filepath.Join(root, "a.go"))
	many := make([]any, 0, 2000)
	for i := range 2000 {
		many = append(many, map[string]any{"name": fmt.Sprint("S", i), "kind": 13, "range": rng(0, 0, 0, 1), "selectionRange": rng(0, 0, 0, 1)})
	}
	for _, tc := range []struct {
		name   string
		answer any
		want   []string
	}{
		{"tree", []any{map[string]any{"name": "T", "kind": 23, "detail": "struct{...}", "range": rng(3, 0, 5, 1), "selectionRange": rng(3, 5, 3, 6),
			"children": []any{map[string]any{"name": "F", "kind": 8, "detail": "int", "range": rng(4, 1, 4, 6), "selectionRange": rng(4, 1, 4, 2)}}}},
			[]string{"Symbols of a.go (line: kind name):\n4: struct T struct{...}\n  5: field F int"}},
		{"information", []any{map[string]any{"name": "Foo", "kind": 12, "location": loc(aURI, 3, 5), "containerName": "a"}},
			[]string{"4: function Foo (in a)"}},
		{"null", nil, []string{"found no symbols in a.go"}},
		{"many", many, []string{"S499\n… and 1500 more not listed (2000 in all)."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/documentSymbol": constant(tc.answer)})
			r := callTool(t, ctx, ed, "document_symbols", map[string]any{"path": "a.go"})
			for _, w := range tc.want {
				if r.IsError || !strings.Contains(r.Content, w) {
					t.Errorf("result = %+v, want %q", r, w)
				}
			}
			if p := lastSent(t, ed, "textDocument/documentSymbol"); p.TextDocument.URI != aURI {
				t.Errorf("sent for %s, want %s", p.TextDocument.URI, aURI)
			}
		})
	}
}

// TestLSPClientErrors: the client's error, an answer of the wrong shape
// and a huge answer each end as a clear tool result, and the daemon goes
// on serving.
func TestLSPClientErrors(t *testing.T) {
	t.Parallel()
	// A failure guard, not a timing assertion: two answers of 100,000
	// locations each cross the pipe and are decoded, which takes a while
	// under the race detector on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ed, root := lspEditor(t, []string{"references"}, nil, nil)
	aURI := workspace.PathToURI(filepath.Join(root, "a.go"))
	huge := locations(100_000, func(i int) (string, uint32) { return aURI, uint32(i % 7) })
	call := map[string]any{"path": "a.go", "symbol": "Bar"}
	for _, tc := range []struct {
		name    string
		answer  func(json.RawMessage) (any, error)
		isError bool
		want    string
	}{
		{"client error", func(json.RawMessage) (any, error) {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: "no language server attached to a.go"}
		}, true, "The editor's language server could not answer the references request: no language server attached to a.go."},
		{"wrong shape", constant("references"), true, "not the LSP shape of textDocument/references"},
		// The same place is listed once.
		{"huge", constant(huge), false, "7 references to `Bar` (a.go:6) in 1 file:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/references": tc.answer})
			r := callTool(t, ctx, ed, "find_references", call)
			if r.IsError != tc.isError || !strings.Contains(r.Content, tc.want) {
				t.Fatalf("result = %.2000s (error %v), want %q", r.Content, r.IsError, tc.want)
			}
		})
	}
	// Many distinct places: cut at the bound with a note.
	many := locations(100_000, func(i int) (string, uint32) {
		return workspace.PathToURI(filepath.Join(root, fmt.Sprintf("f%06d.go", i))), 0
	})
	serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/references": constant(many)})
	r := callTool(t, ctx, ed, "find_references", call)
	if r.IsError || !strings.Contains(r.Content, "100000 references to `Bar` (a.go:6) in 100000 files:") || !strings.Contains(r.Content, "… and 99800 more not listed (100000 in all)") || len(r.Content) > 48_000 {
		t.Fatalf("huge result: %d bytes, %.500s … %s", len(r.Content), r.Content, r.Content[max(0, len(r.Content)-300):])
	}
}

// locations is n Locations as JSON, the ith at (uri, line) of at(i),
// written once rather than marshalled from maps at every answer.
func locations(n int, at func(i int) (string, uint32)) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		uri, line := at(i)
		u, _ := json.Marshal(uri)
		fmt.Fprintf(&b, `{"uri":%s,"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":3}}}`, u, line, line)
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

// TestLSPCancelEndsTheWait: cancelling the turn ends the daemon's wait
// for the editor's language server at once, withdrawing its request, and
// the daemon goes on serving.
func TestLSPCancelEndsTheWait(t *testing.T) {
	ctx := testCtx(t)
	tr := transcriptFor(t, "claude-sonnet-4-5", reply(call("c1", "find_references", map[string]any{"path": "a.go", "symbol": "Bar"})), reply(text("unused")))
	ed, root := lspEditor(t, []string{"references"}, map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}}, nil)
	release := make(chan struct{})
	defer close(release)
	serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/references": func(json.RawMessage) (any, error) {
		<-release // the server never answers
		return nil, nil
	}})
	id := newSessionIn(t, ctx, ed, root)
	done := make(chan string, 1)
	go func() {
		stop, err := promptText(ctx, ed, id, "who uses Bar?")
		if err != nil {
			t.Error(err)
		}
		done <- stop
	}()
	req, err := ed.Await(ctx, "cline/lspRequest", nil)
	if err != nil {
		t.Fatal(err)
	}
	ed.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
	select {
	case stop := <-done:
		if stop != "cancelled" {
			t.Errorf("stopReason = %q, want cancelled", stop)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled turn still waits for the language server")
	}
	if _, err := ed.Await(ctx, "$/cancelRequest", func(p json.RawMessage) bool {
		var c struct{ ID json.RawMessage }
		json.Unmarshal(p, &c)
		return string(c.ID) == string(req.ID)
	}); err != nil {
		t.Fatalf("the daemon did not withdraw its cline/lspRequest %s: %v; cancels %v", req.ID, err, ed.Messages("$/cancelRequest"))
	}
	r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "b.go"}}})
	if r.IsError || !strings.Contains(r.Content, "var x = Foo()") {
		t.Fatalf("after the cancel: %+v", r)
	}
}

// answerApprovals answers every cline/approvalRequest with option, after
// running before (when set) with the request's params.
func answerApprovals(t *testing.T, ctx context.Context, ed *rpctest.Editor, option string, before func(json.RawMessage)) {
	go func() {
		seen := 0
		for {
			if _, err := ed.Await(ctx, "cline/approvalRequest", func(json.RawMessage) bool {
				return len(ed.Messages("cline/approvalRequest")) > seen
			}); err != nil {
				return // the test's end
			}
			m := ed.Messages("cline/approvalRequest")[seen]
			seen++
			if before != nil {
				before(m.Params)
			}
			var req struct{ ApprovalID string }
			json.Unmarshal(m.Params, &req)
			ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID,
				"outcome": map[string]any{"outcome": "selected", "optionId": option}}, nil)
		}
	}()
}

// renameEdit is the language server's rename of Foo to Answer: a.go's
// edits versioned for its buffer, b.go's for the file on disk.
func renameEdit(aURI, bURI string, aVersion int32) map[string]any {
	edit := func(l, c uint32) map[string]any {
		return map[string]any{"range": rng(l, c, l, c+3), "newText": "Answer"}
	}
	return map[string]any{"documentChanges": []any{
		map[string]any{"textDocument": map[string]any{"uri": aURI, "version": aVersion}, "edits": []any{edit(2, 6), edit(3, 5), edit(5, 24), edit(5, 32)}},
		map[string]any{"textDocument": map[string]any{"uri": bURI, "version": nil}, "edits": []any{edit(2, 8)}},
	}}
}

var (
	lspARenamed = strings.ReplaceAll(lspA, "Foo", "Answer")
	lspBRenamed = strings.ReplaceAll(lspB, "Foo", "Answer")
)

// TestLSPRenameApproved: the model's rename_symbol asks once, shows the
// diff of every file, and lands in the open buffer through
// workspace/applyEdit and on disk for the file not open; a checkpoint is
// taken as for any edit.
func TestLSPRenameApproved(t *testing.T) {
	ctx := testCtx(t)
	tr := transcriptFor(t, "claude-sonnet-4-5",
		reply(call("c1", "rename_symbol", map[string]any{"path": "a.go", "symbol": "Foo", "line": 4, "new_name": "Answer"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Renamed `Foo` to `Answer` in 2 files"}, "events": []any{text("Renamed.")}})
	ed, root := lspEditor(t, allLSP, map[string]any{"approvals": map[string]any{"edit": "ask"}, "provider": map[string]any{"name": "replay", "transcript": tr}}, nil)
	aPath, bPath := filepath.Join(root, "a.go"), filepath.Join(root, "b.go")
	aURI, bURI := workspace.PathToURI(aPath), workspace.PathToURI(bPath)
	ed.Open(ctx, aURI, lspA)
	serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/rename": constant(renameEdit(aURI, bURI, 1))})
	answerApprovals(t, ctx, ed, "allow_once", nil)
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "rename Foo to Answer"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	p := lastSent(t, ed, "textDocument/rename")
	if p.NewName != "Answer" || p.Position != (workspace.Position{Line: 3, Character: 5}) || p.TextDocument.URI != aURI {
		t.Errorf("rename sent %+v", p)
	}
	if n := len(ed.LSPRequests()); n != 1 {
		t.Errorf("%d language-server requests, want the one rename", n)
	}
	approvals := ed.Messages("cline/approvalRequest")
	if len(approvals) != 1 {
		t.Fatalf("%d approvals", len(approvals))
	}
	var ap struct {
		Diff     string
		ToolCall struct{ Kind string }
	}
	json.Unmarshal(approvals[0].Params, &ap)
	for _, w := range []string{"a/a.go", "a/b.go", "+func Answer() int", "+var x = Answer()"} {
		if !strings.Contains(ap.Diff, w) {
			t.Errorf("the approval's diff lacks %q:\n%s", w, ap.Diff)
		}
	}
	if ap.ToolCall.Kind != "edit" {
		t.Errorf("approval kind %q", ap.ToolCall.Kind)
	}
	assertBuffer(t, ctx, ed, aURI, lspARenamed)
	if got := readFile(t, aPath); got != lspA {
		t.Errorf("the open file was saved by the daemon: %q", got)
	}
	if got := readFile(t, bPath); got != lspBRenamed {
		t.Errorf("b.go on disk = %q", got)
	}
	var cps struct {
		Checkpoints []struct{ Title string }
	}
	if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &cps); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(cps); !strings.Contains(string(b), "After: Rename Foo in a.go:4 to Answer") {
		t.Errorf("no checkpoint after the rename: %s", b)
	}
}

// TestLSPRenameRefused: a rejected rename, plan mode, a workspace edit
// reaching outside the workspace or doing more than text edits, one for
// another version of a buffer, a buffer typed into while the approval
// waited: each leaves every file as it was and says why.
func TestLSPRenameRefused(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "victim.go")
	for _, tc := range []struct {
		name   string
		mode   string
		option string // the approval's answer
		edit   func(root, aURI, bURI string) any
		typing bool // the user types into a.go while the approval waits
		want   string
	}{
		{name: "rejected", option: "reject_once", want: "denied by the user"},
		{name: "plan mode", mode: "plan", want: "rename_symbol is not available in plan mode"},
		{name: "outside the workspace", edit: func(root, aURI, bURI string) any {
			e := renameEdit(aURI, bURI, 1)
			e["documentChanges"] = append(e["documentChanges"].([]any), map[string]any{"textDocument": map[string]any{"uri": workspace.PathToURI(outside), "version": nil},
				"edits": []any{map[string]any{"range": rng(0, 0, 0, 0), "newText": "pwned"}}})
			return e
		}, want: "outside the workspace"},
		{name: "dot dot", edit: func(root, aURI, bURI string) any {
			return map[string]any{"changes": map[string]any{aURI: []any{map[string]any{"range": rng(3, 5, 3, 8), "newText": "Answer"}},
				"file://" + root + "/../" + filepath.Base(filepath.Dir(outside)) + "/victim.go": []any{map[string]any{"range": rng(0, 0, 0, 0), "newText": "pwned"}}}}
		}, want: "outside the workspace"},
		{name: "symbolic link out", edit: func(root, aURI, bURI string) any {
			link := filepath.Join(root, "link.go")
			if err := os.Symlink(outside, link); err != nil {
				panic(err)
			}
			return map[string]any{"changes": map[string]any{workspace.PathToURI(link): []any{map[string]any{"range": rng(0, 0, 0, 0), "newText": "pwned"}}}}
		}, want: "leads outside the workspace"},
		{name: "not a file", edit: func(root, aURI, bURI string) any {
			return map[string]any{"changes": map[string]any{"untitled:Untitled-1": []any{map[string]any{"range": rng(0, 0, 0, 0), "newText": "x"}}}}
		}, want: "untitled:Untitled-1, which is not a file of the workspace"},
		{name: "file operation", edit: func(root, aURI, bURI string) any {
			e := renameEdit(aURI, bURI, 1)
			e["documentChanges"] = append(e["documentChanges"].([]any), map[string]any{"kind": "delete", "uri": bURI})
			return e
		}, want: "also asks to delete a file"},
		{name: "other version", edit: func(root, aURI, bURI string) any { return renameEdit(aURI, bURI, 7) },
			want: "a.go changed since the language server made the rename (it was for version 7, the buffer is at 1)"},
		{name: "overlapping", edit: func(root, aURI, bURI string) any {
			return map[string]any{"changes": map[string]any{aURI: []any{map[string]any{"range": rng(3, 5, 3, 8), "newText": "A"}, map[string]any{"range": rng(3, 6, 3, 9), "newText": "B"}}}}
		}, want: "does not apply"},
		{name: "nothing", edit: func(root, aURI, bURI string) any { return nil }, want: "has nothing to rename at `Foo` (a.go:4)"},
		{name: "typed while asked", typing: true, want: "a.go changed since the language server made the rename"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			os.WriteFile(outside, []byte("package victim\n"), 0o644)
			ed, root := lspEditor(t, allLSP, map[string]any{"approvals": map[string]any{"edit": "ask"}}, nil)
			aPath, bPath := filepath.Join(root, "a.go"), filepath.Join(root, "b.go")
			aURI, bURI := workspace.PathToURI(aPath), workspace.PathToURI(bPath)
			ed.Open(ctx, aURI, lspA)
			var answer any = renameEdit(aURI, bURI, 1)
			if tc.edit != nil {
				answer = tc.edit(root, aURI, bURI)
			}
			serveLSP(ed, map[string]func(json.RawMessage) (any, error){"textDocument/rename": constant(answer)})
			typed := "package a\n\n// typed\n" + lspA[len("package a\n\n"):]
			var before func(json.RawMessage)
			if tc.typing {
				before = func(json.RawMessage) {
					ed.Edit(ctx, aURI, rng(2, 0, 2, 0), "// typed\n")
					ed.Sync(ctx)
				}
			}
			option := cmpOr(tc.option, "allow_once")
			answerApprovals(t, ctx, ed, option, before)
			var r toolResult
			args := map[string]any{"path": "a.go", "symbol": "Foo", "line": 4, "new_name": "Answer"}
			if err := ed.Call(ctx, "cline/callTool", map[string]any{"name": "rename_symbol", "arguments": args, "mode": cmpOr(tc.mode, "act")}, &r); err != nil {
				t.Fatal(err)
			}
			if !r.IsError || !strings.Contains(r.Content, tc.want) {
				t.Fatalf("result = %+v, want an error with %q", r, tc.want)
			}
			wantA := lspA
			if tc.typing {
				wantA = typed
			}
			assertBuffer(t, ctx, ed, aURI, wantA)
			if got := readFile(t, bPath); got != lspB {
				t.Errorf("b.go changed to %q", got)
			}
			if got := readFile(t, outside); got != "package victim\n" {
				t.Errorf("the file outside the workspace changed to %q", got)
			}
			if n := len(ed.Messages("workspace/applyEdit")); n != 0 {
				t.Errorf("%d workspace/applyEdit sent", n)
			}
			if tc.mode == "plan" && len(ed.LSPRequests()) != 0 {
				t.Errorf("plan mode asked the language server to rename")
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
