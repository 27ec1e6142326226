package diff

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// findShared locates the shared folder that sits next to the repository
// root (the directory holding go.mod). The conformance data in it is
// third-party and is kept out of the repository.
func findShared() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test directory")
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(filepath.Join(shared, "conformance")); err != nil {
		return "", err
	}
	return shared, nil
}

// sharedDir is findShared for tests that need the data: they skip without it.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := findShared()
	if err != nil {
		t.Skipf("conformance data not found (%v); skipping", err)
	}
	return dir
}
