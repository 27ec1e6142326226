package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// probes caches, per bubblewrap program, whether it can make the
// namespaces the sandbox needs: a kernel or a security module may forbid
// unprivileged user namespaces, and bubblewrap installed is not
// bubblewrap usable.
var probes sync.Map // path → probeResult

type probeResult struct {
	ok     bool
	detail string
}

// Detect says which backend confines commands, given the backend asked
// for and the PATH bubblewrap is looked for in (the daemon's own when
// empty). An asked-for backend that cannot work is reported as
// BackendNone with why, never replaced by the other.
func Detect(want Backend, path string) Status {
	var why []string
	if want == BackendAuto || want == BackendBwrap {
		st, reason := detectBwrap(path)
		if st.Backend != BackendNone || want == BackendBwrap {
			if st.Backend == BackendNone {
				st.Detail = reason
			}
			return st
		}
		why = append(why, reason)
	}
	st := detectLandlock()
	if st.Backend == BackendNone {
		why = append(why, st.Detail)
		st.Detail = strings.Join(why, "; ")
	}
	return st
}

func detectBwrap(path string) (Status, string) {
	if path == "" {
		path = os.Getenv("PATH")
	}
	prog := ""
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the folder a command runs in
		}
		p := filepath.Join(dir, "bwrap")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			prog = p
			break
		}
	}
	if prog == "" {
		return Status{Backend: BackendNone}, "bubblewrap (bwrap) is not installed"
	}
	r, _ := probes.Load(prog)
	res, ok := r.(probeResult)
	if !ok {
		res = probeBwrap(prog)
		probes.Store(prog, res)
	}
	if !res.ok {
		return Status{Backend: BackendNone}, res.detail
	}
	return Status{Backend: BackendBwrap, Detail: res.detail, path: prog}, ""
}

// probeBwrap runs the namespaces of a confined command once around
// true(1): the user may not be allowed to make them.
func probeBwrap(prog string) probeResult {
	out, err := exec.Command(prog, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "--", "/bin/sh", "-c", "exit 0").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return probeResult{detail: fmt.Sprintf("%s cannot make namespaces here (%v: %s)", prog, err, msg)}
	}
	ver, _ := exec.Command(prog, "--version").Output()
	v := strings.TrimSpace(string(ver))
	if v == "" {
		v = "bubblewrap"
	}
	return probeResult{ok: true, detail: v + ", " + prog}
}

func detectLandlock() Status {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return Status{Backend: BackendNone, Detail: "Landlock is not enabled in this kernel"}
	}
	if _, ok := filterArch(); !ok {
		return Status{Backend: BackendNone, Detail: fmt.Sprintf("Landlock ABI %d, but no socket filter for %s to keep commands off the network", abi, runtime.GOARCH)}
	}
	d := fmt.Sprintf("Landlock ABI %d; Internet sockets refused by a seccomp filter", abi)
	if abi < 9 {
		d += ", Unix sockets too"
	}
	return Status{Backend: BackendLandlock, Detail: d}
}
