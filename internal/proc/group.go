package proc

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
)

// Group is one child process and everything it starts. Start it with
// Start; after the child has been waited for, Cleanup kills what it left.
type Group struct {
	cmd   *exec.Cmd
	token string // this group's value of OwnerVar
	pid   int
	pgid  int // the child's own process group, or 0
}

// owner is the state every Group of this process shares.
var owner struct {
	once   sync.Once
	prefix string // this daemon's part of every token
	seq    atomic.Uint64

	mu sync.Mutex
	// children are the processes this package started and whose parent
	// (os/exec, the MCP SDK) waits for them: never reaped here. Guarded
	// by mu, which is held from fork to registration so that no sweep
	// can reap a child between the two.
	children map[int]bool
	// live are the tokens of the groups still running. Guarded by mu.
	live map[string]bool
}

func setup() {
	owner.once.Do(func() {
		var b [6]byte
		rand.Read(b[:])
		owner.prefix = fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
		owner.children = map[int]bool{}
		owner.live = map[string]bool{}
		platformSetup()
	})
}

// Start starts cmd as a Group: in a process group of its own when
// ownGroup, killed by the kernel if the daemon dies, and marked with a
// token its descendants inherit. start does the starting (cmd.Start, or a
// library's Connect that calls it); nil means cmd.Start. cmd.Env should
// come from Env; nil means Env(nil, nil, nil).
func Start(cmd *exec.Cmd, ownGroup bool, start func() error) (*Group, error) {
	setup()
	beforeStart()
	if start == nil {
		start = cmd.Start
	}
	if cmd.Env == nil {
		cmd.Env = Env(nil, nil, nil)
	}
	g := &Group{cmd: cmd, token: fmt.Sprintf("%s/%d", owner.prefix, owner.seq.Add(1))}
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], OwnerVar+"="+g.token)
	prepare(cmd, ownGroup)
	var err error
	onSpawnThread(func() {
		owner.mu.Lock()
		defer owner.mu.Unlock()
		if err = start(); err != nil || cmd.Process == nil {
			return
		}
		g.pid = cmd.Process.Pid
		owner.children[g.pid] = true
		owner.live[g.token] = true
	})
	if err != nil {
		return nil, err
	}
	if ownGroup {
		g.pgid = g.pid
		watch(g.pgid, true)
	}
	return g, nil
}

// Cleanup, called once the child has been waited for, kills every
// process the group left: its process group, and the processes that carry
// its token or were re-parented to the daemon without a running owner.
// It reports whether there were any.
func (g *Group) Cleanup() bool {
	found := g.killGroup()
	if sweep(g.token) {
		found = true
	}
	owner.mu.Lock()
	delete(owner.children, g.pid)
	delete(owner.live, g.token)
	owner.mu.Unlock()
	if g.pgid != 0 {
		watch(g.pgid, false)
	}
	return found
}
