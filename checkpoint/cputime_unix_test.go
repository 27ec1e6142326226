//go:build unix

package checkpoint

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time: on a machine
// shared with other builds, wall time says more about the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
