//go:build !unix

package main

import "os"

// processExists reports whether pid can be found; on Windows finding a
// process opens it, which fails once it has exited.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
