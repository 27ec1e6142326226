package diff

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDir returns /work/shared-style folder that sits next to the
// repository root (the directory holding go.mod), or skips the test when it
// is absent: the conformance data is third-party and lives outside the repo.
func sharedDir(t testing.TB) string {
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
			t.Skip("no go.mod above the test directory; cannot locate ../shared")
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(filepath.Join(shared, "conformance")); err != nil {
		t.Skipf("conformance data not found at %s: %v", shared, err)
	}
	return shared
}
