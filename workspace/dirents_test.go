//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirHandlesListWithoutStat: a listing gives each entry's type from
// the folder itself and stats an entry only when its Info is asked for,
// through the folder's handle. Before, a folder opened through os.Root
// was listed with an lstat of every entry, as many system calls again as
// the search's opens; so a file removed after the listing still had the
// size it was listed with.
func TestDirHandlesListWithoutStat(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("soon gone"), 0o644)
	os.WriteFile(filepath.Join(dir, "kept.txt"), []byte("kept"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("kept.txt", filepath.Join(dir, "link"))
	fifo := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644) == nil
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	h := NewDirHandles(root)
	defer h.Close()
	entries, err := h.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]fs.FileMode{}
	byName := map[string]fs.DirEntry{}
	for _, e := range entries {
		types[e.Name()], byName[e.Name()] = e.Type(), e
	}
	want := map[string]fs.FileMode{"gone.txt": 0, "kept.txt": 0, "sub": fs.ModeDir, "link": fs.ModeSymlink}
	if fifo {
		want["pipe"] = fs.ModeNamedPipe
	}
	if len(types) != len(want) {
		t.Fatalf("listed %v, want %v", types, want)
	}
	for name, typ := range want {
		if got, ok := types[name]; !ok || got != typ {
			t.Errorf("%s: type %v (listed %v), want %v", name, got, ok, typ)
		}
	}
	if fi, err := byName["kept.txt"].Info(); err != nil || fi.Size() != 4 || !fi.Mode().IsRegular() {
		t.Errorf("kept.txt: Info = %v, %v; want a regular file of 4 bytes", fi, err)
	}
	if fi, err := byName["link"].Info(); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link: Info = %v, %v; want the link itself, not followed", fi, err)
	}
	os.Remove(filepath.Join(dir, "gone.txt"))
	if fi, err := byName["gone.txt"].Info(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("gone.txt, removed after the listing: Info = %v, %v; want it not found (the listing stat'ed it)", fi, err)
	}
}

// BenchmarkDirHandlesReadDir lists a folder of 2,000 files through a
// fresh DirHandles, as each search and listing does.
func BenchmarkDirHandlesReadDir(b *testing.B) {
	dir := b.TempDir()
	for i := range 2000 {
		os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)+".go"), nil, 0o644)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	b.ReportAllocs()
	for b.Loop() {
		h := NewDirHandles(root)
		if entries, err := h.ReadDir("."); err != nil || len(entries) != 2000 {
			b.Fatalf("%d entries, %v", len(entries), err)
		}
		h.Close()
	}
}

// TestDirHandlesAtParent: a file of a folder the handles listed is
// reached through the folder's descriptor by its name alone; a folder not
// listed gives no descriptor, and neither does a path that names no file
// in a folder.
func TestDirHandlesAtParent(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "f.txt"), []byte("in b"), 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	h := NewDirHandles(root)
	defer h.Close()
	at := func(rel string) (string, bool) {
		var got string
		ok := h.AtParent(rel, func(dirfd uintptr, name string) {
			fd, err := unix.Openat(int(dirfd), name, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
			if err != nil {
				got = "error: " + err.Error()
				return
			}
			defer unix.Close(fd)
			b := make([]byte, 64)
			n, _ := unix.Read(fd, b)
			got = string(b[:n])
		})
		return got, ok
	}
	if _, ok := at("a/b/f.txt"); ok {
		t.Error("a/b was not listed yet, but AtParent gave its descriptor")
	}
	if _, err := h.ReadDir("a/b"); err != nil {
		t.Fatal(err)
	}
	got, ok := at("a/b/f.txt")
	if runtime.GOOS != "linux" {
		if ok {
			t.Error("AtParent gave a descriptor where listRoot keeps none")
		}
		return
	}
	if !ok || got != "in b" {
		t.Errorf("a/b/f.txt through its folder: %q, %v; want its text", got, ok)
	}
	for _, rel := range []string{"a/b", "a/b/..", "."} {
		if _, ok := at(rel); ok {
			t.Errorf("AtParent(%q) gave a descriptor of a folder not listed or of no file", rel)
		}
	}
}
