//go:build !unix

package checkpoint

import "time"

// cpuTime is not measured where getrusage is missing; the benchmarks'
// cpu-ms-median is then 0.
func cpuTime() time.Duration { return 0 }
