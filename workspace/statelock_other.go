//go:build !unix

package workspace

import "os"

// lockFile takes no lock where there is no flock: two daemons sharing a
// state directory there are not kept apart.
func flockExclusive(*os.File) error { return nil }
