package session

import (
	"slices"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// TestToolKindsAreWireKinds: every built-in tool's kind, which a tool call
// sends as its kind, is one the wire (and ACP's schema) allows.
func TestToolKindsAreWireKinds(t *testing.T) {
	for _, s := range tools.BuiltinSpecs() {
		if !slices.Contains(wire.ToolKinds, wire.ToolKind(s.Kind)) {
			t.Errorf("%s: kind %q is not a wire.ToolKind", s.Name, s.Kind)
		}
	}
}
