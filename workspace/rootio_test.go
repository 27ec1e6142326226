package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rootioFixture is a workspace folder ws and a folder out beside it
// holding secret.txt.
func rootioFixture(t *testing.T) (r *Roots, ws, out string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{ws, out, filepath.Join(out, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = NewRoots(ws)
	if err != nil {
		t.Fatal(err)
	}
	return r, ws, out
}

// TestRootsRefuseLinkSwappedIn: a path Resolve accepted is later made a
// symbolic link out of the workspace; every operation refuses it.
func TestRootsRefuseLinkSwappedIn(t *testing.T) {
	r, ws, out := rootioFixture(t)
	file, err := r.Resolve("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := r.Resolve("d/new.txt")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(file)
	if err := os.Symlink("../out/secret.txt", file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../out/sub", filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	wantEscape := func(op string, err error) {
		t.Helper()
		var pe *PathError
		if !errors.As(err, &pe) || pe.Kind != PathSymlinkEscape {
			t.Errorf("%s: error %v, want a symlink escape", op, err)
		}
	}
	_, _, err = r.Open(file)
	wantEscape("Open", err)
	_, _, err = r.ReadFile(file, 1<<20)
	wantEscape("ReadFile", err)
	_, err = r.ReadTextFile(file, ReadOptions{})
	wantEscape("ReadTextFile", err)
	_, err = r.Stat(file)
	wantEscape("Stat", err)
	_, err = r.ReadDir(filepath.Dir(dir))
	wantEscape("ReadDir", err)
	wantEscape("MkdirParents", r.MkdirParents(filepath.Join(ws, "d", "deeper", "x.txt")))
	wantEscape("WriteFile in a linked folder", r.WriteFile(dir, []byte("x"), 0o644))
	wantEscape("Rename", r.Rename(filepath.Join(ws, "d", "x"), filepath.Join(ws, "y")))
	if err := r.WriteFile(file, []byte("overwritten"), 0o644); err == nil {
		t.Error("WriteFile over a link swapped in succeeded")
	}
	if got, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(got) != "secret" {
		t.Errorf("the file outside was changed: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "sub")); len(entries) != 0 {
		t.Errorf("files were created outside: %v", entries)
	}
	// Removing the link removes the link, never what it points to.
	if err := r.Remove(file); err != nil {
		t.Errorf("Remove of the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "secret.txt")); err != nil {
		t.Errorf("the file outside is gone: %v", err)
	}
}

// TestRootsFlipRace flips a path between a regular file and a link out
// of the workspace as fast as it can while edits and reads run: none may
// read the secret or change the file outside.
func TestRootsFlipRace(t *testing.T) {
	r, ws, out := rootioFixture(t)
	target := filepath.Join(ws, "f.txt")
	// The other state waits under a second name; one renameat2 exchange
	// flips the two, so the path spends as long as a link as a file.
	other := filepath.Join(ws, ".other")
	if err := os.Symlink("../out/secret.txt", other); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, target, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not supported here: %v", err)
	}
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	isLink := func(p string) bool { fi, err := os.Lstat(p); return err == nil && fi.Mode()&fs.ModeSymlink != 0 }
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			if unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, target, unix.RENAME_EXCHANGE) == nil {
				flips.Add(1)
			}
			if i%16 == 0 && !isLink(other) && !isLink(target) {
				// A write replaced the link with a file: put it back.
				os.Remove(other)
				os.Symlink("../out/secret.txt", other)
			}
			time.Sleep(20 * time.Microsecond)
		}
	})
	const rounds = 1000
	escapes, reads, writes, refused := 0, 0, 0, 0
	for i := range rounds {
		data, _, err := r.ReadFile(target, 1<<20)
		var pe *PathError
		switch {
		case err == nil:
			reads++
			if strings.Contains(string(data), "secret") {
				escapes++
			}
		case errors.As(err, &pe) && pe.Kind == PathSymlinkEscape:
			refused++
		}
		if err := r.WriteFile(target, []byte("edit "+string(rune('a'+i%26))), 0o644); err == nil {
			writes++
		}
	}
	stop.Store(true)
	wg.Wait()
	if got, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(got) != "secret" {
		t.Errorf("the file outside was changed: %q", got)
	}
	if escapes > 0 {
		t.Errorf("%d of %d reads returned the file outside", escapes, rounds)
	}
	t.Logf("flip test: %d reads and %d writes tried, %d reads and %d writes done, %d reads refused at the link, %d flips, %d escapes", rounds, rounds, reads, writes, refused, flips.Load(), escapes)
	// The race was run only if the reads met both states of the path.
	if flips.Load() == 0 || reads == 0 || refused == 0 {
		t.Errorf("the reads did not meet both states (%d flips, %d reads of the file, %d refused at the link): the test proved nothing", flips.Load(), reads, refused)
	}
}

// rootioAnswers fails the test rather than hang when f does not return.
func rootioAnswers(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not answer: it is stuck (in open(2) on a FIFO, or reading without end)", what)
		return nil
	}
}

func TestRootsRefuseSpecialFiles(t *testing.T) {
	r, ws, _ := rootioFixture(t)
	fifo := filepath.Join(ws, "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	for name, op := range map[string]func() error{
		"ReadFile": func() error { _, _, err := r.ReadFile(fifo, 1<<20); return err },
		"WriteFile": func() error {
			return r.WriteFile(fifo, []byte("x"), 0o644)
		},
	} {
		err := rootioAnswers(t, name+" of a FIFO", op)
		var nr *NotRegularFileError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("%s of a FIFO: error %v, want one naming a named pipe", name, err)
		}
	}
	// A FIFO a writer keeps full is refused too, not read without end.
	wf, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	wf.Write([]byte(strings.Repeat("y\n", 1000)))
	// Refused as a pipe: a read that took the fed bytes and then failed
	// (EAGAIN on the non-blocking descriptor) is no refusal.
	err = rootioAnswers(t, "ReadFile of a fed FIFO", func() error { _, _, err := r.ReadFile(fifo, 1<<20); return err })
	if nr := (*NotRegularFileError)(nil); !errors.As(err, &nr) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadFile of a fed FIFO: error %v, want one naming a named pipe", err)
	}

	sock := filepath.Join(ws, "s.sock")
	if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err == nil {
			err := rootioAnswers(t, "ReadFile of a socket", func() error { _, _, err := r.ReadFile(sock, 1<<20); return err })
			if !strings.Contains(errString(err), "socket") {
				t.Errorf("ReadFile of a socket: %v, want a refusal naming a socket", err)
			}
		}
		unix.Close(fd)
	}

	dev := filepath.Join(ws, "zero")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5))); err != nil {
		t.Logf("character device not tested: mknod needs root (or is not allowed here): %v", err)
		return
	}
	err = rootioAnswers(t, "ReadFile of /dev/zero's twin", func() error { _, _, err := r.ReadFile(dev, 1<<20); return err })
	if !strings.Contains(errString(err), "character device") {
		t.Errorf("ReadFile of a character device: %v, want a refusal naming it", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestAtomicWriteRefusesReadOnly(t *testing.T) {
	r, ws, _ := rootioFixture(t)
	p := filepath.Join(ws, "ro.txt")
	if err := os.WriteFile(p, []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	err := r.WriteFile(p, []byte("changed"), 0o644)
	var ro *ReadOnlyFileError
	if !errors.As(err, &ro) || !strings.Contains(err.Error(), "read-only file") {
		t.Errorf("write of a 0444 file: %v, want a read-only refusal", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "keep" {
		t.Errorf("the read-only file holds %q", got)
	}
}

func TestAtomicWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can make a file another user's")
	}
	r, ws, _ := rootioFixture(t)
	p := filepath.Join(ws, "theirs.txt")
	if err := os.WriteFile(p, []byte("old"), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 4242, 4343); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 4242 || st.Gid != 4343 {
		t.Errorf("owner %d:%d after the write, want 4242:4343", st.Uid, st.Gid)
	}
	if fi.Mode().Perm() != 0o664 {
		t.Errorf("mode %v after the write, want 0664", fi.Mode().Perm())
	}
}

func TestAtomicWriteKeepsUserXattrs(t *testing.T) {
	r, ws, _ := rootioFixture(t)
	p := filepath.Join(ws, "tagged.txt")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.cline-test", []byte("kept"), 0); err != nil {
		t.Skipf("user extended attributes are not supported on this file system: %v", err)
	}
	if err := r.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.cline-test", buf)
	if err != nil || string(buf[:n]) != "kept" {
		t.Errorf("user.cline-test after the write: %q, %v; want \"kept\"", buf[:max(n, 0)], err)
	}
}

func TestCleanStaleTemps(t *testing.T) {
	r, ws, _ := rootioFixture(t)
	old := time.Now().Add(-time.Hour)
	mk := func(rel string, mtime time.Time) string {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk("src/.main.go.cline-ls-3k9x2a.tmp", old)
	fresh := mk(".f.txt.cline-ls-abc.tmp", time.Now().Add(time.Hour)) // a write in progress
	user := mk(".env.local.tmp", old)                                 // not ours
	inGit := mk(".git/.x.cline-ls-abc.tmp", old)
	start := time.Now()
	removed := r.CleanStaleTemps(t.Context(), start, nil)
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, p := range []string{fresh, user, inGit} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	// A real write's temporary file follows the pattern.
	var tmpName string
	err := atomicWrite(filepath.Join(ws, "f.txt"), []byte("x"), 0o644, &atomicHooks{beforeRename: func(tmp string) error {
		tmpName = filepath.Base(tmp)
		return errors.New("stop")
	}})
	if err == nil || !atomicTempName().MatchString(tmpName) {
		t.Errorf("temporary file %q does not match the cleaning pattern", tmpName)
	}
}

func TestFileLocks(t *testing.T) {
	var l FileLocks
	ctx := context.Background()
	if err := l.Lock(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if l.TryLock("a") {
		t.Fatal("TryLock of a held lock succeeded")
	}
	if !l.TryLock("b") {
		t.Fatal("TryLock of a free lock failed")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := l.Lock(cctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held lock with a deadline: %v", err)
	}
	l.Unlock("a")
	l.Unlock("b")
	if !l.TryLock("a") {
		t.Fatal("lock not released")
	}
	l.Unlock("a")
	if len(l.held) != 0 {
		t.Errorf("%d lock entries left", len(l.held))
	}
}

// TestFileKeyFollowsIdentity: two names of one file share a key, and a
// file that does not exist is keyed by its path.
func TestFileKeyFollowsIdentity(t *testing.T) {
	r, ws, _ := rootioFixture(t)
	a := filepath.Join(ws, "f.txt")
	b := filepath.Join(ws, "hard.txt")
	if err := os.Link(a, b); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if r.FileKey(a) != r.FileKey(b) {
		t.Errorf("hard links keyed apart: %s, %s", r.FileKey(a), r.FileKey(b))
	}
	if k := r.FileKey(filepath.Join(ws, "missing.txt")); !strings.HasPrefix(k, "path:") {
		t.Errorf("missing file keyed %q", k)
	}
}

// nobodyBinary copies the test binary into a fresh folder that every user
// may enter and write, as may its parent, so that a test running as root
// can run it again as nobody (asNobody); it returns the copy and the
// folder.
func nobodyBinary(t *testing.T) (bin, base string) {
	t.Helper()
	base = t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(base, "workspace.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, base
}

// asNobody runs a child as the user and group nobody (65534).
func asNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

const rootioOtherUserEnv = "CLINE_LS_ROOTIO_OTHER_USER_TARGET"

// TestRootioOtherUserHelper is not a test on its own: the tests below run
// the test binary again as another user with only this function, which
// tries to write the file named in the environment and prints the error.
func TestRootioOtherUserHelper(t *testing.T) {
	target := os.Getenv(rootioOtherUserEnv)
	if target == "" {
		t.Skip("helper process for TestAtomicWriteAsOtherUser")
	}
	r, err := NewRoots(filepath.Dir(target))
	if err != nil {
		t.Fatal(err)
	}
	err = r.WriteFile(target, []byte("changed"), 0o644)
	os.Stdout.WriteString("RESULT " + errString(err) + "\n")
}

// TestAtomicWriteAsOtherUser: a process that is not the file's owner,
// in a folder it may write, must not replace a file it has no write
// permission on, nor give a file it may write a new owner (itself).
func TestAtomicWriteAsOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the helper as another user")
	}
	bin, base := nobodyBinary(t)
	dir := filepath.Join(base, "shared")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	run := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("root's"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^TestRootioOtherUserHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), rootioOtherUserEnv+"="+p)
		cmd.Dir = base
		cmd.SysProcAttr = asNobody()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		if got, _ := os.ReadFile(p); string(got) != "root's" {
			t.Errorf("%s was replaced by another user: %q", name, got)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
				return rest
			}
		}
		t.Fatalf("helper printed no result:\n%s", out)
		return ""
	}
	if got := run("protected.txt", 0o644); !strings.Contains(got, "read-only file") {
		t.Errorf("write of another user's 0644 file: %q, want a read-only refusal", got)
	}
	if got := run("open.txt", 0o666); !strings.Contains(got, "belongs to uid 0") {
		t.Errorf("write of another user's 0666 file: %q, want a refusal to change its owner", got)
	}
}
