//go:build unix

package workspace

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileID is a file's device and inode.
func fileID(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("id:%d:%d", uint64(st.Dev), uint64(st.Ino)), true
}
