package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// atomicKeep is what a replaced file had that the new one must keep
// beyond its mode: owner, group and user extended attributes.
type atomicKeep struct {
	uid, gid int
	xattrs   []atomicXattr
}

type atomicXattr struct {
	name  string
	value []byte
}

// atomicExamine checks that the existing file name in d may be replaced
// and records what the replacement must keep. dirf is d's folder, opened.
func atomicExamine(d *os.Root, dirf *os.File, path, name string, fi fs.FileInfo) (*atomicKeep, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil
	}
	if os.Geteuid() == 0 {
		// Root may write anything, so access(2) always says yes; a file
		// no one may write is the user saying "leave this alone".
		if fi.Mode().Perm()&0o222 == 0 {
			return nil, &ReadOnlyFileError{Path: path, Reason: fmt.Sprintf(
				"no one has write permission on it (mode %04o); make it writable first if it should change", fi.Mode().Perm())}
		}
	} else if err := unix.Faccessat(int(dirf.Fd()), name, unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return nil, &ReadOnlyFileError{Path: path, Reason: fmt.Sprintf(
				"this process has no write permission on it (mode %04o, owner uid %d); make it writable first if it should change", fi.Mode().Perm(), st.Uid)}
		}
		// ENOSYS and the like: the check cannot be made here; the
		// owner check below still protects other users' files.
	}
	k := &atomicKeep{uid: int(st.Uid), gid: int(st.Gid)}
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer f.Close()
	if cur, err := f.Stat(); err != nil || !os.SameFile(cur, fi) {
		return nil, fmt.Errorf("workspace: write %s: the file was replaced while it was being written; try again", path)
	}
	k.xattrs, err = atomicUserXattrs(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("workspace: write %s: read its extended attributes: %w", path, err)
	}
	return k, nil
}

// atomicUserXattrs lists fd's user.* extended attributes. Others
// (security.*, trusted.*, system.*) belong to the system and are not
// copied: the kernel or the security module sets them on the new file.
func atomicUserXattrs(fd int) ([]atomicXattr, error) {
	size, err := unix.Flistxattr(fd, nil)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
			return nil, nil
		}
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, size)
	n, err := unix.Flistxattr(fd, buf)
	if err != nil {
		return nil, err
	}
	var out []atomicXattr
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		vsize, err := unix.Fgetxattr(fd, name, nil)
		if err != nil {
			return nil, err
		}
		val := make([]byte, vsize)
		if vsize > 0 {
			vn, err := unix.Fgetxattr(fd, name, val)
			if err != nil {
				return nil, err
			}
			val = val[:vn]
		}
		out = append(out, atomicXattr{name: name, value: val})
	}
	return out, nil
}

// apply gives the new file f the old file's owner, group and extended
// attributes. An owner this process may not give is a refusal, not a
// silent change of who owns the file.
func (k *atomicKeep) apply(f *os.File) error {
	if k == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != k.uid || int(st.Gid) != k.gid) {
		if err := f.Chown(k.uid, k.gid); err != nil {
			return fmt.Errorf("the file belongs to uid %d, gid %d, and this process may not give the rewritten file that owner, so it was left as it was: %w", k.uid, k.gid, err)
		}
	}
	for _, x := range k.xattrs {
		if err := unix.Fsetxattr(int(f.Fd()), x.name, x.value, 0); err != nil {
			return fmt.Errorf("keep extended attribute %s: %w", x.name, err)
		}
	}
	return nil
}

// atomicOpenAnonymous opens a file without a name in the folder dirf
// (O_TMPFILE), or returns nil where the file system cannot (FAT, NFS,
// older kernels), and the write falls back to a named temporary file.
func atomicOpenAnonymous(dirf *os.File, perm os.FileMode) *os.File {
	if atomicNamedOnly || !atomicLinkable() {
		return nil
	}
	fd, err := unix.Openat(int(dirf.Fd()), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), dirf.Name()+"/(unnamed)")
}

// atomicNameTemp links the anonymous file f into dirf under a fresh
// temporary name for base, through /proc/self/fd (linkat with
// AT_EMPTY_PATH needs a privilege the daemon should not have).
func atomicNameTemp(dirf, f *os.File, base string) (string, error) {
	from := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for range 100 {
		name := atomicTempFor(base)
		err := unix.Linkat(unix.AT_FDCWD, from, int(dirf.Fd()), name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("name the temporary file: %w", err)
		}
	}
	return "", errors.New("cannot find an unused temporary file name")
}

// atomicNamedOnly makes every write use a named temporary file, as on a
// file system without O_TMPFILE; for tests of that path.
var atomicNamedOnly bool

// atomicLinkable reports whether /proc/self/fd can be linked from: without
// it an anonymous file could never be named, so none is made.
var atomicLinkable = sync.OnceValue(func() bool {
	fi, err := os.Stat("/proc/self/fd")
	return err == nil && fi.IsDir()
})

// processAlive reports whether a process with that id runs (signal 0:
// EPERM means it runs as someone else).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
