//go:build !unix

package main

import "os"

// usageOf has no page faults to report here.
func usageOf(st *os.ProcessState) usage {
	return usage{cpu: st.UserTime() + st.SystemTime()}
}
