//go:build !unix

package search

import (
	"errors"
	"io"
	"os"
)

// readInto reads the regular file at path into buf (grown as needed),
// refusing one over max bytes.
func readInto(path string, buf []byte, max int64) (data, grown []byte, tooLarge bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, buf, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, buf, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, buf, false, errors.New("not a regular file")
	}
	size := fi.Size()
	if size > max {
		return nil, buf, true, nil
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size+size/4)
	}
	n, err := io.ReadFull(f, buf[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, buf, false, err
	}
	return buf[:n], buf, false, nil
}
