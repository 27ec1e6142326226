package sandbox

import "os"

// bwrapArgs are bubblewrap's options for a plan: the whole system
// read-only, fresh /dev and /proc (a new PID namespace, so /proc shows
// only the command's own processes and not the daemon's environment),
// the writable folders bound over it, their .git read-only again, each
// denied path covered (an empty read-only folder over a folder,
// /dev/null over a file), and no network but a loopback of its own.
// Capabilities are dropped (a daemon run as root keeps none inside);
// --new-session takes the command off the terminal it could otherwise
// push input into; --die-with-parent ends it with the daemon, besides
// internal/proc's own accounting.
func bwrapArgs(pl plan, dir string) []string {
	a := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if !pl.network {
		a = append(a, "--unshare-net")
	}
	for _, w := range pl.write {
		a = append(a, "--bind", w, w)
	}
	for _, r := range pl.readOnly {
		a = append(a, "--ro-bind", r, r)
	}
	for _, d := range pl.deny {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			a = append(a, "--tmpfs", d, "--remount-ro", d)
		} else {
			a = append(a, "--ro-bind", "/dev/null", d)
		}
	}
	if dir != "" {
		a = append(a, "--chdir", dir)
	}
	return a
}
