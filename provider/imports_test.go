package provider

import (
	"os/exec"
	"strings"
	"testing"
)

// A model client must not link the tools (the search engine, the HTML
// reader, the process supervisor): tool definitions come in as ToolDef
// and go out through toolspec.
func TestImportsNoTools(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/cline-ls/cline-ls/tools" || strings.HasPrefix(p, "github.com/cline-ls/cline-ls/tools/") {
			t.Errorf("provider links %s", p)
		}
	}
}
