package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How left-behind processes are found: by walking /proc, not with a
// cgroup per command. A cgroup v2 subtree is writable only when the
// service manager delegated one to the daemon, which an editor-launched
// process normally lacks (and a v1 or mixed hierarchy never offers), so
// it would be a second path that most installs never run. The walk works
// for any process of ours: the process group catches pipelines and jobs,
// the daemon as child subreaper receives every orphan (setsid, double
// forks), and the OwnerVar mark tells which group an orphan came from.
// A descendant that both clears its environment and escapes to a
// subreaper of its own is the one case it misses.

// BecomeSubreaper makes the daemon the parent of every orphan among its
// descendants (PR_SET_CHILD_SUBREAPER), so that Cleanup can find and kill
// them, and reaps those that end on their own. The daemon calls it once,
// at start, before its first child. It sets the attribute only: the rest
// (the owner token, the spawning thread, the reaper) waits for the first
// child, before which there is no orphan to have and no process to reap.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	owner.mu.Lock()
	subreaper = true
	owner.mu.Unlock()
	return nil
}

// startReaper reaps, at each SIGCHLD, the orphans that ended on their
// own. It starts with the first child of a subreaper: only processes a
// sweep has marked are reaped, and a sweep follows a child's end.
func startReaper() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() { // lives as long as the process, like the attribute
		for range sigs {
			reapOrphans()
		}
	}()
}

var spawn = make(chan func())

// marked holds the processes seen alive carrying one of the daemon's
// owner tokens: only those are reaped by the daemon (a zombie's
// environment can no longer be read), so it never takes the exit status
// of a child someone else waits for. Guarded by owner.mu.
var marked = map[int]bool{}

// subreaper is set once the daemon is the parent of its orphans: every
// process whose parent it is then came through Start, or is an orphan.
// Guarded by owner.mu.
var subreaper bool

// watchdog is the write end of the watchdog's input. Guarded by wmu.
var (
	wmu      sync.Mutex
	watchdog *os.File
)

// platformSetup runs once, at the first child (setup): children are
// forked from one goroutine locked to its thread. Pdeathsig fires when
// the thread that forked the child ends, not the process, and Go ends a
// thread only when a goroutine locked to it exits; this one never
// returns, so the signal comes only with the daemon's death. A daemon
// that runs no command never pays for the thread.
//
// The thread also leaves CAP_SYS_PTRACE out of its bounding set, which a
// child inherits at the fork: a child of a root daemon then has no way
// around the daemon being not dumpable (HideKeys), and cannot read its
// memory. Only this thread changes (bounding sets are per thread, and Go
// starts no thread from one locked by LockOSThread), so the daemon keeps
// its own capabilities. Without CAP_SETPCAP (not root) the drop fails,
// and there is nothing to drop.
func platformSetup() {
	go func() {
		runtime.LockOSThread()
		unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0)
		for f := range spawn {
			f()
		}
	}()
	owner.mu.Lock()
	reaps := subreaper
	owner.mu.Unlock()
	if reaps {
		startReaper()
	}
}

// watchdogOnce starts the watchdog with the first child: until then
// there is nothing for it to kill, and a daemon that runs no command
// (most start-ups: initialize is answered before any tool runs) forks no
// shell.
var watchdogOnce sync.Once

// beforeStart starts the watchdog, from the spawning thread like every
// child.
func beforeStart() { watchdogOnce.Do(func() { onSpawnThread(startWatchdog) }) }

// watchdogScript runs beside the daemon, outside its groups. It reads
// "+pgid" and "-pgid" lines while the daemon lives; at end of input (the
// daemon exited or was killed, even by SIGKILL, which no code of ours
// survives) it kills the groups still listed and every process marked
// with one of the daemon's tokens. The shell's Pdeathsig handles the
// shell itself; this handles its pipeline and what escaped it.
const watchdogScript = `tok=$1; groups=
while read -r op id; do
	case $op in
	+) groups="$groups $id" ;;
	-) n=; for g in $groups; do [ "$g" = "$id" ] || n="$n $g"; done; groups=$n ;;
	esac
done
for round in 1 2 3; do
	for g in $groups; do kill -9 -$g 2>/dev/null; done
	for p in /proc/[0-9]*; do
		grep -qa "` + OwnerVar + `=$tok/" "$p/environ" 2>/dev/null && kill -9 "${p#/proc/}" 2>/dev/null
	done
done
`

func startWatchdog() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "cline-ls-watchdog", owner.prefix)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	owner.mu.Lock()
	err = cmd.Start()
	if err == nil {
		owner.children[cmd.Process.Pid] = true
	}
	owner.mu.Unlock()
	if err != nil {
		w.Close()
		return
	}
	go cmd.Wait() // it ends when the daemon does
	watchdog = w
}

func watch(pgid int, add bool) {
	op := "-"
	if add {
		op = "+"
	}
	wmu.Lock()
	defer wmu.Unlock()
	if watchdog != nil {
		fmt.Fprintf(watchdog, "%s %d\n", op, pgid)
	}
}

func prepare(cmd *exec.Cmd, ownGroup bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = ownGroup
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

func onSpawnThread(f func()) {
	done := make(chan struct{})
	spawn <- func() {
		defer close(done)
		f()
	}
	<-done
}

// Kill kills the child and its process group at once (a timeout, a
// cancel); Cleanup, after the wait, gets the rest.
func (g *Group) Kill() {
	if g.pgid != 0 {
		syscall.Kill(-g.pgid, syscall.SIGKILL)
	}
	syscall.Kill(g.pid, syscall.SIGKILL)
}

// killGroup kills what is left in the child's process group and reports
// whether anything was. While members remain, the group's ID stays
// reserved for it, so this never reaches a stranger.
func (g *Group) killGroup() bool {
	return g.pgid != 0 && syscall.Kill(-g.pgid, syscall.SIGKILL) == nil
}

type procInfo struct {
	ppid   int
	zombie bool
}

// scan reads the parent and state of every process.
func scan() map[int]procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make(map[int]procInfo, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if info, ok := stat(pid); ok {
			out[pid] = info
		}
	}
	return out
}

// children lists the children of pid from the kernel's per-thread lists;
// ok is false when the kernel keeps none.
func children(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			if os.IsNotExist(err) && len(kids) == 0 {
				return nil, false
			}
			continue
		}
		for f := range bytes.FieldsSeq(data) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// stat reads a process's parent and whether it has ended.
func stat(pid int) (procInfo, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parens.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 2 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return procInfo{ppid: ppid, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// subtree reads the descendants of root; ok is false when the kernel
// keeps no children lists (then scan is the way).
func subtree(root int) (map[int]procInfo, bool) {
	out := map[int]procInfo{}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids, ok := children(pid)
		if !ok && pid == root {
			return nil, false
		}
		for _, k := range kids {
			if _, seen := out[k]; seen {
				continue
			}
			if info, ok := stat(k); ok {
				out[k] = info
				stack = append(stack, k)
			}
		}
	}
	return out, true
}

// ownerToken reads the OwnerVar a process started with.
func ownerToken(pid int) (string, bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	key := []byte(OwnerVar + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, key); ok {
			return string(v), true
		}
	}
	return "", false
}

// sweep kills, until none is left, the processes that carry token and
// the orphans re-parented to the daemon whose owner is not running, with
// all their descendants, and reaps those that were ours. It reports
// whether it found any.
func sweep(token string) bool {
	self := os.Getpid()
	found, quiet := false, 0
	owner.mu.Lock()
	below := subreaper
	owner.mu.Unlock()
	for range 100 {
		// As subreaper the daemon is an ancestor of all it left behind,
		// so only its own subtree is read; otherwise a leftover may have
		// gone to init, and every process is looked at.
		var procs map[int]procInfo
		ok := false
		if below {
			procs, ok = subtree(self)
		}
		if !ok {
			procs = scan()
		}
		kids := map[int][]int{}
		for pid, p := range procs {
			kids[p.ppid] = append(kids[p.ppid], pid)
		}
		var roots []int
		owner.mu.Lock()
		for pid, p := range procs {
			if pid == self || owner.children[pid] {
				continue
			}
			if p.zombie {
				if p.ppid == self && marked[pid] {
					unix.Wait4(pid, nil, unix.WNOHANG, nil)
					delete(marked, pid)
				}
				continue
			}
			tok, ours := ownerToken(pid)
			if ours {
				marked[pid] = true
			}
			// Only a process that carries one of our tokens is ours to
			// kill: a child the daemon started some other way (git for
			// the turn's context, a test harness's command) is its
			// starter's to wait for, and so is its exit status.
			orphan := subreaper && p.ppid == self && ours && !owner.live[tok]
			if ours && tok == token || orphan {
				roots = append(roots, pid)
			}
		}
		owner.mu.Unlock()
		targets := map[int]bool{}
		for len(roots) > 0 {
			pid := roots[len(roots)-1]
			roots = roots[:len(roots)-1]
			if targets[pid] || pid == self || procs[pid].zombie {
				continue
			}
			targets[pid] = true
			roots = append(roots, kids[pid]...)
		}
		if len(targets) == 0 {
			// A double fork may be between its middle process's exit and
			// the grandchild's re-parenting: look once more before
			// believing nothing is left.
			quiet++
			if quiet == 2 {
				return found
			}
			time.Sleep(2 * time.Millisecond)
			continue
		}
		quiet = 0
		found = true
		for pid := range targets {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond) // let the kills land before looking again
	}
	return found
}

// reapOrphans collects the exit status of orphans re-parented to the
// daemon that ended on their own, so none stays a zombie.
func reapOrphans() {
	self := os.Getpid()
	kids, ok := children(self)
	if !ok {
		for pid, p := range scan() {
			if p.ppid == self {
				kids = append(kids, pid)
			}
		}
	}
	owner.mu.Lock()
	defer owner.mu.Unlock()
	for _, pid := range kids {
		if p, ok := stat(pid); ok && p.zombie && !owner.children[pid] && marked[pid] {
			unix.Wait4(pid, nil, unix.WNOHANG, nil)
			delete(marked, pid)
		}
	}
}
