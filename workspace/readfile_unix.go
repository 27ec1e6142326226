//go:build unix

package workspace

import "syscall"

// readOpenFlags makes opening a FIFO return at once instead of waiting
// for a writer; on a regular file it changes nothing.
const readOpenFlags = syscall.O_NONBLOCK
