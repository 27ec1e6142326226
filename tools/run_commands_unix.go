//go:build unix

package tools

import (
	"os"
	"os/exec"
	"syscall"
)

// cmdOwnGroup puts the command in a process group of its own, so that it
// and everything it starts can be stopped together.
func cmdOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// cmdKillGroup sends SIGKILL to the process group the command leads and
// reports whether any process was left in it. Once the shell has been
// reaped its process ID could in principle name a new group, but only
// after the kernel wrapped around its whole PID space in between, and
// while members remain the ID stays reserved for the group.
func cmdKillGroup(p *os.Process) bool {
	return syscall.Kill(-p.Pid, syscall.SIGKILL) == nil
}
