//go:build unix

package mcpbridge

import (
	"errors"
	"syscall"
	"testing"
)

// checkGone fails the test if process pid still exists, a zombie
// included: a child that was never waited for is a leak too.
func checkGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d is still there (kill 0: %v)", pid, err)
	}
}
