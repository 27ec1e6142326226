package rpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// sharedDir returns ../shared, or skips.
func sharedDir(t *testing.T) string { return filepath.Dir(shared.Conformance(t)) }

// TestMethodsAgainstLSPMetaModel checks every standard method the server
// handles or sends against the LSP meta model: the name exists and the
// direction is right.
func TestMethodsAgainstLSPMetaModel(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "conformance", "lsp", "metaModel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mm struct {
		Requests, Notifications []struct {
			Method           string `json:"method"`
			MessageDirection string `json:"messageDirection"`
		}
	}
	if err := json.Unmarshal(data, &mm); err != nil {
		t.Fatal(err)
	}
	dir := map[string]string{}
	for _, m := range append(mm.Requests, mm.Notifications...) {
		dir[m.Method] = m.MessageDirection
	}
	for _, m := range lspReceived {
		if d := dir[m]; d != "clientToServer" && d != "both" {
			t.Errorf("%s: meta model direction %q, but the server receives it", m, d)
		}
	}
	for _, m := range lspSent {
		if d := dir[m]; d != "serverToClient" && d != "both" {
			t.Errorf("%s: meta model direction %q, but the server sends it", m, d)
		}
	}
}
