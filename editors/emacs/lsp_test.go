package emacs_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// TestEmacsLSP runs the lsp flow of test/e2e-lsp.el: gopls started by
// eglot-ensure on a small Go module, then cline-ls; the model's
// find_references is answered by gopls through cline-lsp.el (the user's
// unsaved typing included), its approved rename_symbol lands in the Go
// buffers and not on disk, and each bad request shape is refused.
func TestEmacsLSP(t *testing.T) {
	emacs := emacsOrSkip(t)
	testenv.LookPath(t, "gopls", "the lsp flow runs Eglot on gopls (go install golang.org/x/tools/gopls@v0.23.0)")
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// gopls runs go list on the module: no toolchain or module download.
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
	// The flow's HOME is a fresh folder: the build cache stays the
	// developer's, or gopls would start by filling an empty one.
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		t.Setenv("GOCACHE", string(bytes.TrimSpace(out)))
	}
	daemon := testbin.CLI(t)
	runFlow(t, emacs, daemon, here, flow{name: "lsp", disk: "hello\n", minChecks: 31, terminal: true})
}
