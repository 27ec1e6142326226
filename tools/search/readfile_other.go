//go:build !unix

package search

import (
	"errors"
	"io"
	"os"
)

// openBase records the search folder.
func (s *searcher) openBase(within *os.Root, base string) error {
	s.within, s.base = within, base
	return nil
}

func (s *searcher) closeBase() {}

// readInto reads the regular file at path into buf (grown as needed),
// refusing one over max bytes. It reads the first firstRead bytes alone
// and stops there when stop says so (a binary file), so a file that will
// be skipped is not read whole.
func (s *searcher) readInto(path string, buf []byte, max int64, firstRead int, stop func(head []byte) bool) (data, grown []byte, refused readRefusal, err error) {
	f, err := s.within.Open(s.rel(path))
	if err != nil {
		return nil, buf, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, buf, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, buf, 0, errors.New("not a regular file")
	}
	size := fi.Size()
	if size > max {
		return nil, buf, refusedLarge, nil
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size+size/4)
	}
	first, err := io.ReadFull(f, buf[:min(size, int64(firstRead))])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, buf, 0, err
	}
	if stop(buf[:first]) {
		return nil, buf, refusedStop, nil
	}
	rest, err := io.ReadFull(f, buf[first:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, buf, 0, err
	}
	return buf[:first+rest], buf, 0, nil
}
