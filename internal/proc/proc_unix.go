//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// Without Linux's subreaper, parent-death signal and /proc, a Group is
// its process group: what leaves the group may outlive the command.

// BecomeSubreaper does nothing here: the kernel has no such attribute.
func BecomeSubreaper() error { return nil }

func platformSetup()         {}
func beforeStart()           {}
func watch(int, bool)        {}
func onSpawnThread(f func()) { f() }
func sweep(string) bool      { return false }
func prepare(cmd *exec.Cmd, ownGroup bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = ownGroup
}

// Kill kills the child and its process group.
func (g *Group) Kill() {
	if g.pgid != 0 {
		syscall.Kill(-g.pgid, syscall.SIGKILL)
	}
	syscall.Kill(g.pid, syscall.SIGKILL)
}

func (g *Group) killGroup() bool {
	return g.pgid != 0 && syscall.Kill(-g.pgid, syscall.SIGKILL) == nil
}
