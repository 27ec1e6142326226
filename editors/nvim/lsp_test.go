package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// The editor's language servers as the model's tools, against a real
// gopls the test configures as a user would: find_references on a file
// not open, then rename_symbol, approved, landing in the open buffer and
// on disk for the file not open.
func TestLanguageServerTools(t *testing.T) {
	gopls := testenv.LookPath(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0 (the gopls step of .ci/run)")
	goBin := testenv.LookPath(t, "go", "gopls runs the go command")
	t.Setenv("PATH", filepath.Dir(gopls)+string(os.PathListSeparator)+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := runNvim(t, "lsp", "lsp", "lsp", true)
	r.check(t)
	if b, err := os.ReadFile(filepath.Join(r.ws, "b.go")); err != nil || !strings.Contains(string(b), "return Result() + Result()") {
		t.Errorf("b.go = %q, %v; want it renamed on disk", b, err)
	}
}
