//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// cmdOwnGroup does nothing where there are no Unix process groups.
func cmdOwnGroup(*exec.Cmd) {}

// cmdKillGroup kills the command's process only: without process groups
// the processes it started cannot be found and may outlive it.
func cmdKillGroup(p *os.Process) bool {
	return p.Kill() == nil
}
