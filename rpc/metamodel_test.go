package rpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// sharedDir finds ../shared beside the repository, or skips.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
	shared := filepath.Join(filepath.Dir(dir), "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("../shared is absent beside the repository (%s): conformance data not available", shared)
	}
	return shared
}

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
