//go:build linux

package workspace

import (
	"encoding/binary"
	"io/fs"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// OpenName opens the entry name of the open folder dirfd for reading:
// one name, never a path (a name holding a separator, "." or ".." is
// refused), a symbolic link refused (O_NOFOLLOW), and without blocking
// should it have become a pipe since the folder was listed (the caller
// checks the handle's stat). With dirfd itself opened within the
// workspace, this stays within it as an os.Root open does, at the cost
// of one openat: openat2's RESOLVE_BENEATH cost three to four times as
// much per file here.
func OpenName(dirfd int, name string) (int, error) {
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return -1, &os.PathError{Op: "openat", Path: name, Err: unix.EINVAL}
	}
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return fd, nil
	}
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadDirents reads the entries of the open folder fd with getdents64,
// in 32 KiB batches, and calls each with every entry's name and type as
// the listing gives it (unix.DT_DIR, DT_REG, DT_LNK, …, DT_UNKNOWN where
// the file system does not say), "." and ".." left out. Nothing is
// stat'ed: the walks that need a file's stat ask for it on one name
// (fstatat relative to fd), and only for the files they keep.
func ReadDirents(fd int, each func(name string, typ uint8)) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			nameb := b[19:reclen]
			for i, c := range nameb {
				if c == 0 {
					nameb = nameb[:i]
					break
				}
			}
			b = b[reclen:]
			if string(nameb) == "." || string(nameb) == ".." {
				continue
			}
			each(string(nameb), typ)
		}
	}
}

// direntMode is the fs.FileMode type bits of a getdents64 type, and
// false for DT_UNKNOWN.
func direntMode(typ uint8) (fs.FileMode, bool) {
	switch typ {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// listRoot lists the folder dir is a handle of, unsorted, and returns
// the folder opened, for DirHandles.AtParent. A folder opened through an
// os.Root is listed by os.File.ReadDir with an lstat of every entry (the
// standard library cannot stat lazily there), which doubled the system
// calls of a search; here the listing's types are used, and an entry is
// stat'ed through dir only when its Info is asked for or the file system
// gives no type.
func listRoot(dir *os.Root) ([]fs.DirEntry, *os.File, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	var entries []fs.DirEntry
	var lerr error
	err = rc.Read(func(fd uintptr) bool {
		lerr = ReadDirents(int(fd), func(name string, typ uint8) {
			mode, ok := direntMode(typ)
			if !ok {
				fi, err := dir.Lstat(name)
				if err != nil {
					return // gone since the listing
				}
				entries = append(entries, &rootEntry{name: name, mode: fi.Mode().Type(), dir: dir, info: fi})
				return
			}
			entries = append(entries, &rootEntry{name: name, mode: mode, dir: dir})
		})
		return true
	})
	if lerr != nil {
		err = &os.PathError{Op: "getdents", Path: dir.Name(), Err: lerr}
	}
	return entries, f, err
}
