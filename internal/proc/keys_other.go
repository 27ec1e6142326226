//go:build !linux

package proc

// HideKeys moves the keys out of the environment the daemon's Go code
// sees (Getenv still finds them); the copy the system keeps stays as it
// was. Without /proc and the dumpable attribute there is nothing more to
// do here: a child's own environment is still built without the keys
// (Env), but where a process may read another's environment (ps -E on
// macOS, for a process of the same user) a command can read them.
func HideKeys(named []string) error { return hide(named) }

// scrub has no environment block to clear here.
func scrub([]string) error { return nil }
