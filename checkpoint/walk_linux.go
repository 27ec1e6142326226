//go:build linux

package checkpoint

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cline-ls/cline-ls/workspace"
)

// dirHandle is an open folder of the walk. On Linux the walk works on
// file descriptors itself: a folder is opened with openat on one name
// from its parent's listing, refusing a symbolic link (O_NOFOLLOW), and
// files are stat'ed with fstatat on one name without following links,
// so no path can leave the workspace, as with os.Root; but a folder
// costs one open and one close, its listing is read in 32 KiB batches,
// and only regular files are stat'ed (the listing gives the type).
type dirHandle struct{ fd int }

// openTop opens the folder r is a handle of.
func openTop(r *os.Root) (dirHandle, error) {
	f, err := r.Open(".")
	if err != nil {
		return dirHandle{}, err
	}
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return dirHandle{}, &os.PathError{Op: "dup", Path: r.Name(), Err: err}
	}
	return dirHandle{fd: fd}, nil
}

// sub opens the subfolder name.
func (d dirHandle) sub(name string) (dirHandle, error) {
	for {
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dirHandle{}, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return dirHandle{fd: fd}, nil
	}
}

func (d dirHandle) close() { unix.Close(d.fd) }

// list reads the folder's entries: folders and regular files, the
// latter with their stat; other kinds are left out.
func (d dirHandle) list() ([]listed, error) {
	var out []listed
	err := workspace.ReadDirents(d.fd, func(name string, typ uint8) {
		switch typ {
		case unix.DT_DIR:
			out = append(out, listed{name: name, dir: true})
		case unix.DT_REG, unix.DT_UNKNOWN:
			var st unix.Stat_t
			if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return // gone since the listing
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				out = append(out, listed{name: name, dir: true})
			case unix.S_IFREG:
				out = append(out, listed{name: name, st: statOfUnix(&st)})
			}
		}
	})
	return out, err
}

// statOfUnix is statOf for a stat the walk made itself: the same values
// os.Lstat's FileInfo gives.
func statOfUnix(st *unix.Stat_t) fileState {
	m := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return fileState{
		Mode:  m,
		Size:  st.Size,
		MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		Ino:   st.Ino,
	}
}

// open opens the regular file name of the folder for reading, refusing
// a symbolic link, and without blocking should it have become a pipe
// since the listing (the caller checks the handle's stat).
func (d dirHandle) open(name string) (*os.File, error) {
	fd, err := workspace.OpenName(d.fd, name)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
