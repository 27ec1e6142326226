//go:build unix

package checkpoint

import (
	"io/fs"
	"syscall"
)

// inode returns the file's inode number: a file replaced by a rename has
// a new one even when its size and mtime match the old file's.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
