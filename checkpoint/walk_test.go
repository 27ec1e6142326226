package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestWalkLeavesLinksAndSpecialFiles: a symbolic link to a file or a
// folder outside the workspace, and a named pipe, are neither recorded
// nor followed (a walk through the link would store outside files; a
// read of the pipe would block).
func TestWalkLeavesLinksAndSpecialFiles(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWS(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), w.abs("link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, w.abs("sub/linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(w.abs("pipe"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	w.checkpoint("s1", 1, nil)
	snap, err := w.s.readTrees(w.s.records[0].Roots)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range snap {
		got = append(got, strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(w.dir)+"/"))
	}
	slices.Sort(got)
	if want := []string{"a.txt", "sub/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
}

// TestWalkStatIsLstat: the stat the walk takes of a file from its
// folder's listing equals the one taken on the opened file (mode bits
// with setgid and sticky, size, mtime, inode), which is what a
// checkpoint records; were they to differ, every checkpoint would read
// every such file again.
func TestWalkStatIsLstat(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n", "x.sh": "#!/bin/sh\n", "y": "y\n"})
	if err := os.Chmod(w.abs("x.sh"), 0o755|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w.abs("y"), 0o700|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	w.checkpoint("s1", 1, nil)
	base, err := w.s.latestDirs()
	if err != nil {
		t.Fatal(err)
	}
	_, sc, err := w.s.scan(t.Context(), false, base, w.s.records[0].Scan)
	if err != nil {
		t.Fatal(err)
	}
	if sc.read != 0 {
		t.Errorf("a scan of an unchanged tree read %d files, want 0", sc.read)
	}
}
