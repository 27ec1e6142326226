//go:build unix

package search

import (
	"syscall"
)

// readInto reads the regular file at path into buf (grown as needed),
// refusing one over max bytes. It uses the system calls directly: os.Open
// would also try to register each file with the network poller, a wasted
// system call per file that shows in a search of many small files.
func readInto(path string, buf []byte, max int64) (data, grown []byte, tooLarge bool, err error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, buf, false, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, buf, false, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, buf, false, syscall.EINVAL
	}
	size := st.Size
	if size > max {
		return nil, buf, true, nil
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size+size/4)
	}
	n := 0
	for int64(n) < size {
		m, err := syscall.Read(fd, buf[n:size])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, false, err
		}
		if m == 0 {
			break // the file shrank meanwhile: search what was read
		}
		n += m
	}
	return buf[:n], buf, false, nil
}
