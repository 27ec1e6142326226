//go:build !linux

package workspace

import (
	"fmt"
	"io/fs"
	"os"
)

// atomicKeep is what a replaced file had that the new one must keep
// beyond its mode. Owner and extended attributes are kept on Linux only.
type atomicKeep struct{}

// atomicExamine refuses a file no one may write.
func atomicExamine(d *os.Root, dirf *os.File, path, name string, fi fs.FileInfo) (*atomicKeep, error) {
	if fi.Mode().Perm()&0o222 == 0 {
		return nil, &ReadOnlyFileError{Path: path, Reason: fmt.Sprintf(
			"no one has write permission on it (mode %04o); make it writable first if it should change", fi.Mode().Perm())}
	}
	return &atomicKeep{}, nil
}

func (k *atomicKeep) apply(*os.File) error { return nil }

// atomicOpenAnonymous makes no anonymous file here: the write uses a
// named temporary file.
func atomicOpenAnonymous(*os.File, os.FileMode) *os.File { return nil }

// atomicNameTemp is never called without an anonymous file.
func atomicNameTemp(*os.File, *os.File, string) (string, error) {
	return "", fmt.Errorf("no anonymous temporary files on this system")
}

// processAlive cannot tell here; the cleaning relies on the file's age.
func processAlive(int) bool { return false }
