// Package proctest helps tests find the processes a test started by a
// unique marker, to check none outlives what should have ended it.
package proctest

import (
	"bytes"
	"os"
	"strconv"
)

// MarkerPIDs finds the processes whose argv ends in "sleep N": tests run
// `sleep N` with an N of their own, and kill what they find by PID only.
func MarkerPIDs(n int) []int {
	want := []byte("sleep\x00" + strconv.Itoa(n) + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.HasSuffix(b, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}
