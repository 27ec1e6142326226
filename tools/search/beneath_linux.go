package search

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/cline-ls/cline-ls/workspace"
)

// openName opens the entry name of the open folder dirfd: one openat of
// one name, no link followed.
func openName(dirfd int, name string) (int, error) { return workspace.OpenName(dirfd, name) }

// errNoOpenBeneath means the kernel has no openat2 (before Linux 5.6, or
// a sandbox that blocks it): the caller falls back to os.Root.
var errNoOpenBeneath = errors.New("openat2 unavailable")

// openBeneath opens rel under the folder dirfd for reading, refusing any
// path that leaves the folder or passes through a symbolic link.
func openBeneath(dirfd int, rel string) (int, error) {
	fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return -1, errNoOpenBeneath
	}
	return fd, err
}
