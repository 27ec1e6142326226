//go:build unix

package search

import (
	"os"
	"syscall"
)

// openBase keeps the search folder open for openBeneath.
func (s *searcher) openBase(within *os.Root, base string) error {
	f, err := within.Open(".")
	if err != nil {
		return err
	}
	s.within, s.base, s.basef = within, base, f
	return nil
}

func (s *searcher) closeBase() { s.basef.Close() }

// openFd opens the file at path, under the search folder, for reading.
// Where the kernel can (openat2 with RESOLVE_BENEATH) it is one system
// call that cannot leave the folder nor follow a link; when the walk
// keeps the file's folder open it is one openat of the name alone in that
// folder (workspace.OpenName), which costs less again; elsewhere the open
// goes through the folder's os.Root.
func (s *searcher) openFd(path string) (fd int, done func(), err error) {
	rel := s.rel(path)
	// Through the folder's handle when the walk keeps it: one name to
	// resolve instead of the whole path.
	err = errNoOpenBeneath
	if s.dirs.AtParent(rel, func(dirfd uintptr, name string) { fd, err = openName(int(dirfd), name) }) && err == nil {
		return fd, func() { syscall.Close(fd) }, nil
	}
	fd, err = openBeneath(int(s.basef.Fd()), rel)
	if err == nil {
		return fd, func() { syscall.Close(fd) }, nil
	}
	if err != errNoOpenBeneath {
		return -1, nil, err
	}
	f, err := s.within.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return -1, nil, err
	}
	return int(f.Fd()), func() { f.Close() }, nil
}

// readInto reads the regular file at path into buf (grown as needed),
// refusing one over max bytes. It reads the first firstRead bytes alone
// and stops there when stop says so (a binary file), so a file that will
// be skipped is not read whole. It uses the system calls directly: os.Open
// would also try to register each file with the network poller, a wasted
// system call per file that shows in a search of many small files.
func (s *searcher) readInto(path string, buf []byte, max int64, firstRead int, stop func(head []byte) bool) (data, grown []byte, refused readRefusal, err error) {
	fd, done, err := s.openFd(path)
	if err != nil {
		return nil, buf, 0, err
	}
	defer done()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, buf, 0, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, buf, 0, syscall.EINVAL
	}
	size := st.Size
	if size > max {
		return nil, buf, refusedLarge, nil
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size+size/4)
	}
	n := 0
	for int64(n) < size {
		end := size
		if n == 0 {
			end = min(size, int64(firstRead))
		}
		m, err := syscall.Read(fd, buf[n:end])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, 0, err
		}
		if m == 0 {
			break // the file shrank meanwhile: search what was read
		}
		if n == 0 && stop(buf[:min(m, firstRead)]) {
			return nil, buf, refusedStop, nil
		}
		n += m
	}
	return buf[:n], buf, 0, nil
}
