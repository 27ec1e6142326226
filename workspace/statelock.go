package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrLocked is wrapped by TryLockStateFile's error when another open of the
// file holds its lock: another daemon, or another store of this one.
var ErrLocked = errors.New("locked by another process")

// StateLock is an exclusive advisory lock on a file the daemon keeps in
// its state directory, shared by every daemon of the user. It is held
// by an open file description, not by the process: two opens in one
// process exclude each other as two daemons do, and the lock goes with
// the process however it ends.
type StateLock struct {
	f *os.File
}

// TryLockStateFile takes the lock of the file at path, creating the file if
// need be, or fails at once with an error wrapping ErrLocked. A path
// that is not a regular file (a FIFO or a folder put in its place) is a
// *NotRegularFileError; the open never blocks.
func TryLockStateFile(path string) (*StateLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|readOpenFlags, 0o600)
	if err != nil {
		if fi, lerr := os.Stat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, &NotRegularFileError{Path: path, Mode: fi.Mode()}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if f, _, err = regularOpened(f, path); err != nil {
		return nil, err
	}
	if err := flockExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &StateLock{f: f}, nil
}

// LockStateFile is TryLockStateFile that waits while another holds the lock, until
// ctx ends. The wait polls, backing off to a few times a second: flock
// cannot be interrupted by a context, and a lock is held for the length
// of one store operation.
func LockStateFile(ctx context.Context, path string) (*StateLock, error) {
	wait := time.Millisecond
	for {
		l, err := TryLockStateFile(path)
		if !errors.Is(err, ErrLocked) {
			return l, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (gave up waiting: %w)", err, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// File returns the locked file, for the holder to note who it is.
func (l *StateLock) File() *os.File { return l.f }

// Unlock releases the lock; later calls do nothing.
func (l *StateLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the description releases its lock
	l.f = nil
	return err
}
