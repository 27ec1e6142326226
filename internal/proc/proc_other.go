//go:build !unix

package proc

import "os/exec"

// Without process groups a Group is its one process: what it starts may
// outlive it.

// BecomeSubreaper does nothing here: the system has no such attribute.
func BecomeSubreaper() error { return nil }

func platformSetup()          {}
func beforeStart()            {}
func watch(int, bool)         {}
func onSpawnThread(f func())  { f() }
func sweep(string) bool       { return false }
func prepare(*exec.Cmd, bool) {}

// Kill kills the child.
func (g *Group) Kill() {
	if g.cmd.Process != nil {
		g.cmd.Process.Kill()
	}
}

func (g *Group) killGroup() bool { return false }
