package main

import (
	"context"
	"time"
)

// waitGone checks every interval whether process pid still exists and
// reports true once it does not, or false when ctx ends first.
func waitGone(ctx context.Context, pid int, every time.Duration) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	for processExists(pid) {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
