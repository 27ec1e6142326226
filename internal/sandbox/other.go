//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// HelperArg is the Landlock helper's argument; there is no helper off
// Linux.
const HelperArg = "__cline-ls-sandbox"

// Detect reports that nothing confines commands off Linux.
func Detect(Backend, string) Status {
	return Status{Backend: BackendNone, Detail: "no sandbox for " + runtime.GOOS + ": bubblewrap and Landlock are Linux's"}
}

func landlockSpec(plan) (string, error) { return "", errors.New("landlock: not on Linux") }
