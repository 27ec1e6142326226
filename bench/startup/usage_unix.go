//go:build unix

package main

import (
	"os"
	"syscall"
)

func usageOf(st *os.ProcessState) usage {
	u := usage{cpu: st.UserTime() + st.SystemTime()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.faults = ru.Minflt + ru.Majflt
	}
	return u
}
