//go:build unix

package instructions

import (
	"os/exec"
	"syscall"
)

// ownGroup runs the command in a process group of its own and makes
// cancelling it kill the whole group, so nothing git starts (a hook, a
// credential helper) outlives the timeout.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
