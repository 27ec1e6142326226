package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/cline-ls/cline-ls/wire"
	"go.lsp.dev/jsonrpc2"
)

// decodeParams decodes a request's params into v. The error is a -32602
// whose message names the field at fault ("textDocument.version: expected
// an integer, got string"), not only a byte offset.
func decodeParams(raw []byte, v any) error {
	if err := requireParams(raw); err != nil {
		return err
	}
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		te.Field = withoutEmbedded(reflect.TypeOf(v), te.Field)
	}
	return paramError(err, "")
}

// withoutEmbedded is a decoding error's field path without the name of
// a struct that v's type embeds (ours beside an SDK type, acp.go): the
// decoder puts that Go name in the path, and no such member is on the
// wire.
func withoutEmbedded(t reflect.Type, field string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return field
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Tag.Get("json") == "" {
			if rest, ok := strings.CutPrefix(field, f.Name+"."); ok {
				return withoutEmbedded(f.Type, rest)
			}
		}
	}
	return field
}

// requireParams fails a request that came without params (or with null).
func requireParams(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return invalidParams("params: required, got none")
	}
	return nil
}

// paramError makes a decoding error a -32602 naming the field
// (wire.FieldError): at is the path of the value decoded ("" for the
// params themselves).
func paramError(err error, at string) error {
	if err == nil {
		return nil
	}
	return invalidParams("%s", wire.FieldError(err, at))
}

// invalidParams builds a -32602 error.
func invalidParams(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: "+format, args...)
}

// required reports the first empty field among name/value pairs.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return invalidParams("%s: required", pairs[i])
		}
	}
	return nil
}

// The LSP param shapes the daemon reads: the specification's types with
// only what is used, decoded with encoding/json so errors can name fields.

type position struct {
	Line      *int64 `json:"line"`
	Character *int64 `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type textDocumentItem struct {
	URI        string  `json:"uri"`
	LanguageID string  `json:"languageId"`
	Version    int32   `json:"version"`
	Text       *string `json:"text"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type versionedDoc struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"`
}

type contentChange struct {
	Range *lspRange `json:"range"`
	Text  *string   `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedDoc    `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

type docParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Text *string `json:"text"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type didChangeFoldersParams struct {
	Event struct {
		Added   []workspaceFolder `json:"added"`
		Removed []workspaceFolder `json:"removed"`
	} `json:"event"`
}

type executeCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

// checkPosition validates a position's fields; LSP positions are unsigned
// 32-bit numbers and both are required.
func checkPosition(field string, p position) error {
	if p.Line == nil {
		return invalidParams("%s.line: required", field)
	}
	if p.Character == nil {
		return invalidParams("%s.character: required", field)
	}
	if *p.Line < 0 || *p.Line > 1<<32-1 {
		return invalidParams("%s.line: must be between 0 and 4294967295, got %d", field, *p.Line)
	}
	if *p.Character < 0 || *p.Character > 1<<32-1 {
		return invalidParams("%s.character: must be between 0 and 4294967295, got %d", field, *p.Character)
	}
	return nil
}

func fieldf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
