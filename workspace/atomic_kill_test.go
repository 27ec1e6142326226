//go:build linux

package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killWriterEnv makes the test binary a writer that stops at a point of
// an atomic write (its value: "write" or "rename") until it is killed;
// killTargetEnv names the file it writes.
const (
	killWriterEnv = "WORKSPACE_TEST_KILL_WRITER"
	killTargetEnv = "WORKSPACE_TEST_KILL_TARGET"
	// killNamedEnv set makes the writer use a named temporary file.
	killNamedEnv = "WORKSPACE_TEST_KILL_NAMED"
)

func TestMain(m *testing.M) {
	if at := os.Getenv(killWriterEnv); at != "" {
		os.Exit(killedWriter(at, os.Getenv(killTargetEnv)))
	}
	os.Exit(m.Run())
}

// killedWriter writes 8 MiB to target atomically and, at the point at
// says, tells its parent (a line on stdout) and waits to be killed.
func killedWriter(at, target string) int {
	atomicNamedOnly = os.Getenv(killNamedEnv) != ""
	wait := func(tmp string) {
		fmt.Printf("stopped %q\n", tmp)
		select {}
	}
	hooks := &atomicHooks{}
	switch at {
	case "write":
		hooks.beforeWrite = wait
	case "rename":
		hooks.beforeRename = func(tmp string) error { wait(filepath.Base(tmp)); return nil }
	}
	if err := atomicWrite(target, make([]byte, 8<<20), 0o644, hooks); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// killWriter runs a writer of target stopped at at, SIGKILLs it there
// and returns what it said when it stopped.
func killWriter(t *testing.T, at, target string, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), killWriterEnv+"="+at, killTargetEnv+"="+target, "GORACE=atexit_sleep_ms=0"), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := out.Read(buf)
		line <- string(buf[:n])
	}()
	var said string
	select {
	case said = <-line:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the writer never stopped")
	}
	if !strings.HasPrefix(said, "stopped ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the writer said %q", said)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return said
}

// others lists what is in dir besides target's own name.
func others(t *testing.T, dir, target string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != filepath.Base(target) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestWriterKilledMidWrite: a process killed while it writes the data
// leaves nothing in the folder (an anonymous temporary file, where the
// file system has them), and the target as it was.
func TestWriterKilledMidWrite(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	said := killWriter(t, "write", target)
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("target after the kill: %d bytes, want the old content", len(b))
	}
	left := others(t, dir, target)
	if said != "stopped \"\"\n" {
		// No anonymous files on this file system: the named leftover
		// is the next daemon's to clean (TestLeftoverOfKilledWriterCleaned).
		t.Logf("the writer used a named temporary file (%s): %v", strings.TrimSpace(said), left)
		return
	}
	if len(left) != 0 {
		t.Errorf("a writer killed mid-write left %v", left)
	}
}

// TestLeftoverOfKilledWriterCleaned: a process killed between naming its
// temporary file and the rename leaves that file, named with its pid; the
// ignore rules hide it, and the next daemon's cleaning of the folder
// removes it, while the file of a live writer stays.
func TestLeftoverOfKilledWriterCleaned(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "big.bin")
	killWriter(t, "rename", target)
	left := others(t, dir, target)
	if len(left) != 1 || !IsAtomicTemp(left[0]) || atomicTempPID(left[0]) == 0 {
		t.Fatalf("after a kill before the rename the folder holds %v, want one temporary file named with its writer's pid", left)
	}
	leftover := filepath.Join(dir, left[0])
	if fi, err := os.Stat(leftover); err != nil || fi.Size() != 8<<20 {
		t.Fatalf("leftover: %v %v", fi, err)
	}
	// A live writer's file (our parent's pid, which runs), as old.
	live := filepath.Join(dir, ".other.txt"+atomicTempMarker+strconv.Itoa(os.Getppid())+"-abc.tmp")
	if err := os.WriteFile(live, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(live, old, old)

	ign := NewIgnoreMatcher([]string{dir})
	if !ign.Ignored(leftover, false) || !ign.Ignored(live, false) {
		t.Error("the ignore rules show a temporary file")
	}
	r, err := NewRoots(dir)
	if err != nil {
		t.Fatal(err)
	}
	removed := r.CleanStaleTemps(t.Context(), time.Now(), nil)
	if len(removed) != 1 || removed[0] != leftover {
		t.Errorf("removed %v, want only %s", removed, leftover)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
}

// TestNamedLeftoverCleaned: where the file system has no anonymous files,
// a writer killed mid-write leaves its named temporary file, which the
// ignore rules hide and the next cleaning removes.
func TestNamedLeftoverCleaned(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "big.bin")
	said := killWriter(t, "write", target, killNamedEnv+"=1")
	left := others(t, dir, target)
	if len(left) != 1 || !IsAtomicTemp(left[0]) || !strings.Contains(said, left[0]) {
		t.Fatalf("the writer said %q and left %v; want its one named temporary file", said, left)
	}
	if !NewIgnoreMatcher([]string{dir}).Ignored(filepath.Join(dir, left[0]), false) {
		t.Error("the ignore rules show the leftover")
	}
	r, err := NewRoots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if removed := r.CleanStaleTemps(t.Context(), time.Now(), nil); len(removed) != 1 {
		t.Errorf("removed %v, want the leftover", removed)
	}
	if left := others(t, dir, target); len(left) != 0 {
		t.Errorf("left after the cleaning: %v", left)
	}
}

// TestNamedTempPath: the named path of a write still keeps the target
// whole on failure and names its file with the pattern and the pid.
func TestNamedTempPath(t *testing.T) {
	atomicNamedOnly = true
	defer func() { atomicNamedOnly = false }()
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	var tmp string
	err := atomicWrite(target, []byte("new"), 0o644, &atomicHooks{beforeRename: func(p string) error {
		tmp = filepath.Base(p)
		return fmt.Errorf("stop")
	}})
	if err == nil || !IsAtomicTemp(tmp) || atomicTempPID(tmp) != os.Getpid() {
		t.Fatalf("err %v, temporary file %q; want a stopped write through a file named with our pid", err, tmp)
	}
	if left := others(t, dir, target); len(left) != 0 {
		t.Errorf("a failed write left %v", left)
	}
	if err := atomicWrite(target, []byte("new"), 0o644, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target = %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
}
