package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/workspace"
)

// silentServers never answer: each request waits until its context ends.
type silentServers struct{ asked chan string }

func (s silentServers) Encoding() workspace.Encoding { return workspace.UTF16 }

func (s silentServers) wait(ctx context.Context, what string) error {
	s.asked <- what
	<-ctx.Done()
	return ctx.Err()
}

func (s silentServers) References(ctx context.Context, _ tools.LSPReferenceParams) (tools.LSPLocations, error) {
	return nil, s.wait(ctx, "references")
}

func (s silentServers) Definition(ctx context.Context, _ tools.LSPPositionParams) (tools.LSPLocations, error) {
	return nil, s.wait(ctx, "definition")
}

func (s silentServers) Rename(ctx context.Context, _ tools.LSPRenameParams) (*tools.LSPWorkspaceEdit, error) {
	return nil, s.wait(ctx, "rename")
}

func (s silentServers) DocumentSymbols(ctx context.Context, _ tools.LSPDocumentSymbolParams) (tools.LSPSymbols, error) {
	return nil, s.wait(ctx, "documentSymbols")
}

// TestLSPToolsBoundedWait: a language server that never answers ends each
// tool's wait at the bound with an error that says so, and a cancelled
// call ends at once as cancelled, not as the server's failure.
func TestLSPToolsBoundedWait(t *testing.T) {
	dir := t.TempDir()
	files, err := toolstest.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	files.OpenBuffer("a.go", "package a\n\nfunc Foo() {}\n")
	ls := silentServers{asked: make(chan string, 8)}
	impls := tools.LSPToolsWaiting(files, ls, []string{tools.LSPReferences, tools.LSPDefinition, tools.LSPRename}, 50*time.Millisecond)
	for _, tc := range []struct{ tool, args, feature string }{
		{tools.NameFindReferences, `{"path":"a.go","symbol":"Foo"}`, "references"},
		{tools.NameGoToDefinition, `{"path":"a.go","symbol":"Foo"}`, "definition"},
		{tools.NameRenameSymbol, `{"path":"a.go","symbol":"Foo","new_name":"Bar"}`, "rename"},
		{tools.NameDocumentSymbols, `{"path":"a.go"}`, "documentSymbols"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			inv, err := impls[tc.tool](json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if d := inv.Describe(context.Background()); tc.tool == tools.NameRenameSymbol && !strings.Contains(d.Refusal, "did not answer the rename request within 50ms") {
				t.Errorf("rename's preview refusal = %q", d.Refusal)
			}
			r, err := inv.Execute(context.Background(), tools.ExecOptions{})
			if err != nil || !r.IsError || !strings.Contains(r.Content, "did not answer the "+tc.feature+" request within 50ms") {
				t.Errorf("result = %+v, %v", r, err)
			}
			if got := <-ls.asked; got != tc.feature {
				t.Errorf("asked %s", got)
			}

			// Cancelled while it waits: the call's own error, at once.
			inv, _ = impls[tc.tool](json.RawMessage(tc.args))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := inv.Execute(ctx, tools.ExecOptions{})
				done <- err
			}()
			<-ls.asked
			cancel()
			if err := <-done; err != context.Canceled {
				t.Errorf("cancelled call returned %v", err)
			}
		})
	}
}
