//go:build unix && !linux

package search

import "errors"

// errNoOpenBeneath: only Linux has openat2; the caller uses os.Root.
var errNoOpenBeneath = errors.New("openat2 unavailable")

func openBeneath(int, string) (int, error) { return -1, errNoOpenBeneath }

// openName is never reached here: DirHandles keeps no folder descriptor
// outside Linux.
func openName(int, string) (int, error) { return -1, errNoOpenBeneath }
