//go:build unix

package workspace

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO has no writer: opening it the ordinary way would block forever.
func TestReadTextFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *NotRegularFileError
	if _, err := ReadTextFile(fifo, ReadOptions{}); !errors.As(err, &nr) {
		t.Errorf("reading a FIFO: %v, want *NotRegularFileError", err)
	}
}
