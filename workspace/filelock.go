package workspace

import (
	"context"
	"path/filepath"
	"sync"
)

// FileLocks serialises the read → plan → write of an edit per file, across
// every session and tool call of a connection: two edits of one file that
// each read it, change a line and write it back would otherwise both
// succeed with the second one erasing the first. Keys come from
// Roots.FileKey. The zero value is ready to use.
type FileLocks struct {
	mu   sync.Mutex
	held map[string]*fileLock // guarded by mu
}

// fileLock is one key's lock: a one-slot semaphore, so that waiting can
// be cancelled, and the number of holders and waiters, so that the entry
// is dropped when nobody needs it.
type fileLock struct {
	sem   chan struct{}
	users int // guarded by FileLocks.mu
}

func (l *FileLocks) entry(key string) *fileLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = make(map[string]*fileLock)
	}
	e := l.held[key]
	if e == nil {
		e = &fileLock{sem: make(chan struct{}, 1)}
		l.held[key] = e
	}
	e.users++
	return e
}

func (l *FileLocks) release(key string, e *fileLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.users--
	if e.users == 0 {
		delete(l.held, key)
	}
}

// Lock takes the lock of key, waiting for it until ctx ends.
func (l *FileLocks) Lock(ctx context.Context, key string) error {
	e := l.entry(key)
	select {
	case e.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.release(key, e)
		return ctx.Err()
	}
}

// TryLock takes the lock of key if it is free.
func (l *FileLocks) TryLock(key string) bool {
	e := l.entry(key)
	select {
	case e.sem <- struct{}{}:
		return true
	default:
		l.release(key, e)
		return false
	}
}

// Len is how many keys are locked or waited for.
func (l *FileLocks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// Unlock releases the lock of key, which the caller holds.
func (l *FileLocks) Unlock(key string) {
	l.mu.Lock()
	e := l.held[key]
	l.mu.Unlock()
	if e == nil {
		panic("workspace: unlock of a file lock not held: " + key)
	}
	<-e.sem
	l.release(key, e)
}

// FileKey names the file at abs for FileLocks: its device and inode when
// it exists, so that two names of one file (hard links) share a lock,
// else its path. An edit that replaces the file gives it a new inode, so
// a holder re-reads the key after locking and starts over if it moved.
func (r *Roots) FileKey(abs string) string {
	if fi, err := r.Stat(abs); err == nil {
		if id, ok := fileID(fi); ok {
			return id
		}
	}
	return "path:" + filepath.Clean(abs)
}
