package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenNameStaysInTheFolder: OpenName opens a regular file by its name
// in the folder and nothing else: not a symbolic link (to a file outside
// or not), not a path of several names, not the folder or its parent.
func TestOpenNameStaysInTheFolder(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o600)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f.txt"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ok"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink("ok.txt", filepath.Join(dir, "in"))
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	fd, err := OpenName(dfd, "ok.txt")
	if err != nil {
		t.Fatalf("ok.txt: %v", err)
	}
	unix.Close(fd)
	for _, name := range []string{"out", "in", "sub/f.txt", "../" + filepath.Base(dir), ".", "..", ""} {
		if fd, err := OpenName(dfd, name); err == nil {
			unix.Close(fd)
			t.Errorf("OpenName(%q) opened it", name)
		}
	}
}
