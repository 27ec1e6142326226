package diff

import (
	"path/filepath"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// sharedDir returns ../shared, for tests that need the conformance data:
// they skip without it.
func sharedDir(t testing.TB) string { return filepath.Dir(shared.Conformance(t)) }
