//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processExists sends pid signal 0: no signal is delivered, but the
// error says whether the process is there (EPERM: there, not ours).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
