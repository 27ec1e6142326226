//go:build !unix

package mcpbridge

import "testing"

// checkGone cannot look for a process portably; the Unix build checks.
func checkGone(t *testing.T, pid int) {
	t.Helper()
	t.Logf("not checking that process %d is gone on this system", pid)
}
