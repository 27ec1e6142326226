package delivery

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/workspace"
)

// The requests delivery sends to the client.
const (
	methodApplyEdit     = "workspace/applyEdit"
	methodReadTextFile  = "fs/read_text_file"
	methodWriteTextFile = "fs/write_text_file"
)

// Caller sends a request to the client and waits for its answer.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Client is the editor connection as delivery needs it.
type Client interface {
	Caller
	// Caps is what the client declared; asked at each delivery, since
	// it is only known once the client has initialized.
	Caps() Caps
}

// Caps is what delivery needs to know of the client, whatever its dialect.
type Caps struct {
	Encoding       workspace.Encoding // of the positions in applyEdit's edits
	ApplyEdit      bool               // serves workspace/applyEdit
	DocChanges     bool               // takes versioned documentChanges
	ChecksVersions bool               // refuses an edit for a stale version itself (see rpc's checksVersions)
	FSRead         bool               // reads files through fs/read_text_file
	FSWrite        bool               // writes files through fs/write_text_file
}

// ClientError is the message of an error answer from the client. SDKs
// wrap a handler's failure as "Internal error" and put its own message in
// data (the TypeScript SDK under "details", the Go SDK under "error"), so
// that is where the reason a user can act on is.
func ClientError(err error) string {
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		return err.Error()
	}
	var detail string
	if len(je.Data) > 0 {
		var str string
		var obj map[string]json.RawMessage
		switch {
		case json.Unmarshal(je.Data, &str) == nil:
			detail = str
		case json.Unmarshal(je.Data, &obj) == nil:
			for _, k := range []string{"message", "details", "error"} {
				// A field that is not a string is passed over.
				if json.Unmarshal(obj[k], &str) == nil && str != "" {
					detail = str
					break
				}
			}
		}
	}
	switch {
	case detail == "":
		return je.Message
	case je.Message == "" || je.Message == "Internal error":
		return detail
	}
	return je.Message + ": " + detail
}
