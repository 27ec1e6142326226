package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// atomicDirNames lists a folder, to catch temporary files left behind.
func atomicDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func atomicCheckFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s holds %q, want %q", filepath.Base(path), got, want)
	}
}

func TestAtomicWriteKeepsMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o755, 0o600, 0o750 | os.ModeSetgid} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.txt")
		watchWriteFile(t, path, "old content that is longer")
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(path, []byte("new"), 0o644); err != nil {
			t.Fatalf("WriteFileAtomic: %v", err)
		}
		atomicCheckFile(t, path, "new")
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSetgid); got != mode {
			t.Errorf("mode %v after the write, want %v", got, mode)
		}
		if names := atomicDirNames(t, dir); len(names) != 1 {
			t.Errorf("folder holds %q after the write, want only f.txt", names)
		}
	}
}

func TestAtomicWriteNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.txt")
	if err := WriteFileAtomic(path, []byte("hello"), 0o640); err != nil {
		t.Fatal(err)
	}
	atomicCheckFile(t, path, "hello")
	fi, _ := os.Stat(path)
	if perm := fi.Mode().Perm(); perm&^0o640 != 0 || perm&0o600 != 0o600 {
		t.Errorf("new file mode %v, want 0640 less the umask", perm)
	}

	// No folder is created unless asked for.
	deep := filepath.Join(dir, "a", "b", "c.txt")
	if err := WriteFileAtomic(deep, []byte("x"), 0o644); err == nil {
		t.Error("WriteFileAtomic created missing folders")
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a failed write left a folder behind")
	}
	if err := MkdirParents(deep); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(deep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	atomicCheckFile(t, deep, "x")
}

func TestAtomicWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	watchWriteFile(t, real, "old")
	if err := os.Chmod(real, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	atomicCheckFile(t, real, "new")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced instead of its target")
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want 0600 kept", fi.Mode().Perm())
	}

	// A dangling link names the file to create.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("sub/created.txt", dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dangling, []byte("made"), 0o644); err != nil {
		t.Fatal(err)
	}
	atomicCheckFile(t, filepath.Join(dir, "sub", "created.txt"), "made")

	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(loop, []byte("x"), 0o644); err == nil {
		t.Error("writing through a symlink loop succeeded")
	}
}

func TestAtomicWriteRefusesFolder(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(sub, []byte("x"), 0o644); err == nil {
		t.Error("WriteFileAtomic replaced a folder")
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Error("the folder is gone")
	}
	if names := atomicDirNames(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want only sub", names)
	}
}

func TestAtomicWriteCleansUpOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	watchWriteFile(t, path, "original")

	// A failure after the temporary file is complete.
	var tmpSeen string
	boom := errors.New("injected failure")
	err := atomicWrite(path, []byte("new"), 0o644, &atomicHooks{beforeRename: func(tmp string) error {
		tmpSeen = tmp
		if _, err := os.Stat(tmp); err != nil {
			t.Errorf("temporary file missing before the rename: %v", err)
		}
		return boom
	}})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the injected one", err)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary file %s left behind", tmpSeen)
	}
	atomicCheckFile(t, path, "original")

	// A real failure of the rename: the target became a folder meanwhile.
	newPath := filepath.Join(dir, "raced")
	err = atomicWrite(newPath, []byte("new"), 0o644, &atomicHooks{beforeRename: func(string) error {
		return os.MkdirAll(filepath.Join(newPath, "child"), 0o755)
	}})
	if err == nil {
		t.Fatal("rename over a folder succeeded")
	}
	if names := atomicDirNames(t, dir); len(names) != 2 {
		t.Errorf("folder holds %q, want f.txt and raced only", names)
	}
}

// TestAtomicWriteReadOnlyFolder: a write into a folder the process may
// not write is refused for that reason and leaves the folder as it was.
// Root ignores folder permissions, so as root (as in CI) the test runs
// itself again as nobody.
func TestAtomicWriteReadOnlyFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		bin, base := nobodyBinary(t)
		cmd := exec.Command(bin, "-test.run=^TestAtomicWriteReadOnlyFolder$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "TMPDIR="+base)
		cmd.Dir = base
		cmd.SysProcAttr = asNobody()
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestAtomicWriteReadOnlyFolder") {
			t.Fatalf("the test as nobody: %v\n%s", err, out)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	watchWriteFile(t, path, "original")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if err := WriteFileAtomic(path, []byte("new"), 0o644); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("write into a read-only folder: %v, want a permission error", err)
	}
	atomicCheckFile(t, path, "original")
	if names := atomicDirNames(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want only f.txt", names)
	}
}

// A reader polling the file while it is rewritten must only ever see one
// complete version: never a missing, empty or half-written file.
func TestAtomicWriteConcurrentReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	versions := [][]byte{
		bytes.Repeat([]byte("a"), 64<<10),
		bytes.Repeat([]byte("b"), 192<<10),
	}
	if err := os.WriteFile(path, versions[0], 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 200 {
			if err := WriteFileAtomic(path, versions[i%2], 0o644); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	})
	reads := 0
	for {
		select {
		case <-done:
			wg.Wait()
			if reads == 0 {
				t.Error("the reader never ran")
			}
			if names := atomicDirNames(t, dir); len(names) != 1 {
				t.Errorf("folder holds %q after the writes", names)
			}
			return
		default:
		}
		got, err := os.ReadFile(path)
		reads++
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
			t.Fatalf("read %d saw a torn file of %d bytes", reads, len(got))
		}
	}
}

const atomicCrashEnv = "CLINE_LS_ATOMIC_CRASH_TARGET"

// TestAtomicCrashHelper is not a test on its own: TestAtomicCrashKeepsOriginal
// runs the test binary again with only this function, which stops a write
// between writing the temporary file and renaming it, to be killed there.
func TestAtomicCrashHelper(t *testing.T) {
	target := os.Getenv(atomicCrashEnv)
	if target == "" {
		t.Skip("helper process for TestAtomicCrashKeepsOriginal")
	}
	err := atomicWrite(target, []byte("new content"), 0o644, &atomicHooks{beforeRename: func(tmp string) error {
		os.Stdout.WriteString("READY " + tmp + "\n")
		time.Sleep(time.Minute) // the parent kills us here
		return errors.New("helper was not killed")
	}})
	t.Fatalf("helper finished its write: %v", err)
}

func TestAtomicCrashKeepsOriginal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	watchWriteFile(t, path, "original")

	cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), atomicCrashEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tmp := ""
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "READY "); ok {
			tmp = rest
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if tmp == "" {
		t.Fatalf("helper never reached the rename; stderr:\n%s", stderr.String())
	}

	atomicCheckFile(t, path, "original")
	// The kill hit between the complete temporary file and the rename.
	atomicCheckFile(t, tmp, "new content")
	if filepath.Dir(tmp) != dir || !strings.HasPrefix(filepath.Base(tmp), ".f.txt.") || !strings.HasSuffix(tmp, ".tmp") {
		t.Errorf("temporary file %s is not a hidden sibling of the target", tmp)
	}
}
