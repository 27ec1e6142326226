//go:build unix

package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Two opens in one process exclude each other, as two daemons do; the
// stores' tests of two windows rely on it.
func TestStateLockExcludesASecondOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, err := TryLockStateFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := TryLockStateFile(p); !errors.Is(err, ErrLocked) {
		b.Unlock()
		t.Fatalf("second lock while the first is held: %v, want ErrLocked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := LockStateFile(ctx, p); !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting lock given up: %v, want ErrLocked and the context's cause", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := LockStateFile(context.Background(), p)
		l.Unlock()
		got <- err
	}()
	a.Unlock()
	if err := <-got; err != nil {
		t.Errorf("waiting lock after release: %v", err)
	}
	if err := a.Unlock(); err != nil {
		t.Errorf("second unlock: %v", err)
	}
}

func TestStateLockRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, dir} {
		if l, err := TryLockStateFile(p); !errors.As(err, new(*NotRegularFileError)) {
			l.Unlock()
			t.Errorf("lock of %s: %v, want *NotRegularFileError", p, err)
		}
	}
}
