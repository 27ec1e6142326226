// Package shared locates the project's shared folder (../shared beside the
// repository), which holds the third-party conformance data the tests run.
// The data is kept out of the repository on purpose, so tests that need it
// skip, saying why, when it is absent.
package shared

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Find returns the absolute path of ../shared/conformance beside the
// repository root (the folder holding go.mod above the working directory).
func Find() (string, error) {
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
			return "", errors.New("no go.mod above the working directory, so ../shared cannot be located")
		}
		dir = parent
	}
	c := filepath.Join(filepath.Dir(dir), "shared", "conformance")
	if _, err := os.Stat(c); err != nil {
		return "", err
	}
	return c, nil
}

// Conformance returns Find's path, or skips t, saying why, when the data
// is absent.
func Conformance(t testing.TB) string {
	t.Helper()
	c, err := Find()
	if err != nil {
		t.Skipf("../shared/conformance is absent beside the repository (%v): conformance data skipped", err)
	}
	return c
}
