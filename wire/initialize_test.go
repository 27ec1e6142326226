package wire_test

import (
	"testing"

	"github.com/cline-ls/cline-ls/wire"
)

// TestInitializeResultBytesAreReflections: the hand-written encoding of
// initialize's answer gives the bytes reflection over the same structs
// gives (a type of the same fields without the method), for values empty
// and full and strings that need escaping.
func TestInitializeResultBytesAreReflections(t *testing.T) {
	type reflected wire.InitializeResult
	odd := "a<b>&\"q\"\\ \n\t\x01 \u2028 \xff é"
	for _, v := range []wire.InitializeResult{
		{},
		{ServerInfo: wire.Implementation{Name: "cline-ls", Version: odd}, Capabilities: wire.ServerCapabilities{
			PositionEncoding: "utf-8", TextDocumentSync: wire.TextDocumentSyncOptions{OpenClose: true, Change: 2, Save: wire.SaveOptions{IncludeText: true}},
			ExecuteCommandProvider: wire.ExecuteCommandOptions{Commands: []string{"cline.prompt", odd}},
			CodeActionProvider:     wire.CodeActionOptions{CodeActionKinds: []string{}},
			Workspace:              wire.WorkspaceCapabilities{WorkspaceFolders: wire.WorkspaceFoldersCapabilities{Supported: true}},
			Experimental:           wire.Experimental{Cline: wire.ClineCapabilities{ProtocolVersion: -3, Modes: []string{"act", "plan"}, Tools: []string{}}}}},
		{Capabilities: wire.ServerCapabilities{TextDocumentSync: wire.TextDocumentSyncOptions{OpenClose: true}, Workspace: wire.WorkspaceCapabilities{WorkspaceFolders: wire.WorkspaceFoldersCapabilities{ChangeNotifications: true}}}},
	} {
		got, err := wire.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal(reflected(v))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("InitializeResult encodes as\n %s\nreflection gives\n %s", got, want)
		}
	}
}
