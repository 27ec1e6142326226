//go:build unix

package testbin

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock on the file at path, waiting for whoever
// holds it; the lock goes with the process, however it ends.
func lock(path string) (func(), error) {
	return flock(path, syscall.LOCK_EX)
}

// tryLock is lock that fails at once when the file is locked.
func tryLock(path string) (func(), error) {
	return flock(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

func flock(path string, how int) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
