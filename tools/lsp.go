package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/workspace"
)

// What a client may declare in experimental.cline.lsp (PROTOCOL.md §11):
// which requests its editor's language servers answer through
// cline/lspRequest. Each enables the tools built on it.
const (
	LSPReferences      = "references"
	LSPDefinition      = "definition"
	LSPRename          = "rename"
	LSPDocumentSymbols = "documentSymbols"
)

// LSPFeatures lists the features a client may declare, in the order
// PROTOCOL.md §11 names them.
func LSPFeatures() []string {
	return []string{LSPReferences, LSPDefinition, LSPRename, LSPDocumentSymbols}
}

// LanguageServers asks the editor's own language servers, through the
// client (cline/lspRequest). Positions count characters in Encoding, the
// connection's position encoding. Each method returns the servers' answer
// decoded, or the client's error; a call is not bounded here (the tools
// bound it, lspWait) but ends when ctx does.
type LanguageServers interface {
	Encoding() workspace.Encoding
	References(ctx context.Context, p LSPReferenceParams) (LSPLocations, error)
	Definition(ctx context.Context, p LSPPositionParams) (LSPLocations, error)
	Rename(ctx context.Context, p LSPRenameParams) (*LSPWorkspaceEdit, error)
	DocumentSymbols(ctx context.Context, p LSPDocumentSymbolParams) (LSPSymbols, error)
}

// LSPTextDocument is LSP's TextDocumentIdentifier.
type LSPTextDocument struct {
	URI string `json:"uri"`
}

// LSPPositionParams is LSP's TextDocumentPositionParams, the params of
// textDocument/definition.
type LSPPositionParams struct {
	TextDocument LSPTextDocument    `json:"textDocument"`
	Position     workspace.Position `json:"position"`
}

// LSPReferenceParams is the params of textDocument/references.
type LSPReferenceParams struct {
	LSPPositionParams
	Context LSPReferenceContext `json:"context"`
}

// LSPReferenceContext is LSP's ReferenceContext.
type LSPReferenceContext struct {
	IncludeDeclaration bool `json:"includeDeclaration"`
}

// LSPRenameParams is the params of textDocument/rename.
type LSPRenameParams struct {
	LSPPositionParams
	NewName string `json:"newName"`
}

// LSPDocumentSymbolParams is the params of textDocument/documentSymbol.
type LSPDocumentSymbolParams struct {
	TextDocument LSPTextDocument `json:"textDocument"`
}

// LSPLocation is LSP's Location; a LocationLink is read as its target
// and the target's selection range.
type LSPLocation struct {
	URI   string          `json:"uri"`
	Range workspace.Range `json:"range"`
}

// LSPLocations is the answer of textDocument/references (Location[] or
// null) and textDocument/definition (Location, Location[], LocationLink[]
// or null), read into one list.
type LSPLocations []LSPLocation

// UnmarshalJSON reads every shape the two methods answer with.
func (l *LSPLocations) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*l = nil
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var one lspLocationOrLink
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*l = LSPLocations{one.location()}
		return nil
	}
	var many []lspLocationOrLink
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	out := make(LSPLocations, 0, len(many))
	for _, x := range many {
		out = append(out, x.location())
	}
	*l = out
	return nil
}

// lspLocationOrLink holds the members of a Location and a LocationLink.
type lspLocationOrLink struct {
	URI                  string           `json:"uri"`
	Range                workspace.Range  `json:"range"`
	TargetURI            string           `json:"targetUri"`
	TargetRange          workspace.Range  `json:"targetRange"`
	TargetSelectionRange *workspace.Range `json:"targetSelectionRange"`
}

func (x lspLocationOrLink) location() LSPLocation {
	if x.TargetURI == "" {
		return LSPLocation{URI: x.URI, Range: x.Range}
	}
	r := x.TargetRange
	if x.TargetSelectionRange != nil {
		r = *x.TargetSelectionRange
	}
	return LSPLocation{URI: x.TargetURI, Range: r}
}

// LSPWorkspaceEdit is LSP's WorkspaceEdit, the answer of
// textDocument/rename: edits per document in changes, or in
// documentChanges (text document edits, possibly versioned, and file
// operations, which rename_symbol refuses).
type LSPWorkspaceEdit struct {
	Changes         map[string][]diff.Edit `json:"changes,omitempty"`
	DocumentChanges []LSPDocumentChange    `json:"documentChanges,omitempty"`
}

// LSPDocumentChange is one member of documentChanges: a TextDocumentEdit
// (Kind empty) or a file operation (Kind "create", "rename", "delete").
type LSPDocumentChange struct {
	Kind         string                   `json:"kind,omitempty"`
	TextDocument LSPVersionedTextDocument `json:"textDocument"`
	Edits        []diff.Edit              `json:"edits"`
	// URI, OldURI and NewURI are a file operation's.
	URI    string `json:"uri,omitempty"`
	OldURI string `json:"oldUri,omitempty"`
	NewURI string `json:"newUri,omitempty"`
}

// LSPVersionedTextDocument is LSP's OptionalVersionedTextDocumentIdentifier:
// Version nil (null) when the edit is for the file as it is on disk.
type LSPVersionedTextDocument struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"`
}

// LSPSymbol is a DocumentSymbol, or a SymbolInformation read into the
// same shape (URI and Container set, Range its location's range).
type LSPSymbol struct {
	Name           string          `json:"name"`
	Detail         string          `json:"detail,omitempty"`
	Kind           int             `json:"kind"`
	Range          workspace.Range `json:"range"`
	SelectionRange workspace.Range `json:"selectionRange"`
	Children       []LSPSymbol     `json:"children,omitempty"`
	URI            string          `json:"-"`
	Container      string          `json:"-"`
}

// LSPSymbols is the answer of textDocument/documentSymbol:
// DocumentSymbol[] (a tree), SymbolInformation[] (flat) or null.
type LSPSymbols []LSPSymbol

// UnmarshalJSON reads both shapes; a SymbolInformation's selection range
// is its location's range.
func (s *LSPSymbols) UnmarshalJSON(b []byte) error {
	*s = nil
	if b = bytes.TrimSpace(b); len(b) == 0 || string(b) == "null" {
		return nil
	}
	var raw []struct {
		LSPSymbol
		Location      *LSPLocation `json:"location"`
		ContainerName string       `json:"containerName"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(LSPSymbols, 0, len(raw))
	for _, r := range raw {
		sym := r.LSPSymbol
		if r.Location != nil {
			sym.URI, sym.Range, sym.SelectionRange = r.Location.URI, r.Location.Range, r.Location.Range
			sym.Container = r.ContainerName
		}
		out = append(out, sym)
	}
	*s = out
	return nil
}

// lspSymbolKinds names LSP's SymbolKind values (1-based).
var lspSymbolKinds = []string{"file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable", "constant", "string", "number",
	"boolean", "array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}

func lspSymbolKind(k int) string {
	if k >= 1 && k <= len(lspSymbolKinds) {
		return lspSymbolKinds[k-1]
	}
	return fmt.Sprintf("kind %d", k)
}

// lspToolFeature is, for each language-server tool, the feature it is
// built on.
var lspToolFeature = map[string]string{
	NameFindReferences:  LSPReferences,
	NameGoToDefinition:  LSPDefinition,
	NameDocumentSymbols: LSPDocumentSymbols,
	NameRenameSymbol:    LSPRename,
}

// OfferedWith reports whether the tool called name can be offered to a
// client that declared the language-server features lsp: every tool but
// those built on a feature it did not declare.
func OfferedWith(name string, lsp []string) bool {
	f, ok := lspToolFeature[name]
	return !ok || slices.Contains(lsp, f)
}

// needsLSP is the ContextRequirements of the language-server tool name.
func needsLSP(name string) func(Context) bool {
	return func(c Context) bool { return OfferedWith(name, c.LSP) }
}
