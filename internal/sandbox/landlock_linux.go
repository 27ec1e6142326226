package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// HelperArg, as the first argument of this binary, makes it the Landlock
// helper: "HelperArg spec program args…" restricts itself by spec and
// execs program. Confine builds that command line; any binary that links
// this package serves it (the daemon, and the test binaries of the
// packages that run confined commands), before its main or tests run.
const HelperArg = "__cline-ls-sandbox"

func init() {
	if len(os.Args) >= 4 && os.Args[1] == HelperArg {
		runHelper(os.Args[2], os.Args[3:])
	}
}

// llSpec is what the helper applies: the folders and files it may read,
// and those it may change, each granting what is beneath it.
type llSpec struct {
	Read       []string `json:"read,omitempty"`
	ReadFiles  []string `json:"readFiles,omitempty"`
	Write      []string `json:"write,omitempty"`
	WriteFiles []string `json:"writeFiles,omitempty"`
	Network    bool     `json:"network,omitempty"`
}

// landlockSpec turns a plan into the helper's rules. Landlock only
// grants, and a grant covers all that is beneath it, so a denied path is
// left out by granting its siblings and its ancestors' siblings one by
// one instead of their parent (split); the same keeps .git out of a
// writable folder. The price: the folders on the way to a denied path
// get no right of their own (no new entry at the top of a workspace
// folder that has a .git, say). Names can still be listed everywhere
// (the read-directory right on /), contents not.
func landlockSpec(pl plan) (string, error) {
	var s llSpec
	s.Read, s.ReadFiles = split("/", pl.deny)
	excl := append(slices.Clone(pl.deny), pl.readOnly...)
	for _, w := range pl.write {
		d, f := split(w, excl)
		s.Write = append(s.Write, d...)
		s.WriteFiles = append(s.WriteFiles, f...)
	}
	s.Network = pl.network
	b, err := json.Marshal(s)
	return string(b), err
}

// split returns what to grant so that all of root but excl is covered:
// root itself when nothing of excl is in it, else each of its entries,
// split in turn. Symbolic links are skipped: what they point to is
// granted, or not, where it lives.
func split(root string, excl []string) (dirs, files []string) {
	if slices.Contains(excl, root) {
		return nil, nil
	}
	inside := slices.ContainsFunc(excl, func(e string) bool {
		return root == "/" || strings.HasPrefix(e, root+"/")
	})
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return nil, nil
	}
	if !inside {
		if fi.IsDir() {
			return []string{root}, nil
		}
		return nil, []string{root}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil // granting nothing is the safe side
	}
	for _, e := range entries {
		d, f := split(filepath.Join(root, e.Name()), excl)
		dirs = append(dirs, d...)
		files = append(files, f...)
	}
	return dirs, files
}

// runHelper is the helper: it restricts this process (every thread; no
// new privileges, so no set-user-ID program regains what it lost) and
// execs argv, which keeps the PID, the process group and the
// parent-death signal internal/proc gave it. It never returns; on any
// failure it exits without running argv.
func runHelper(spec string, argv []string) {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "cline-ls sandbox: "+format+"\n", args...)
		os.Exit(126)
	}
	// The capabilities are dropped on this thread, the one that execs.
	runtime.LockOSThread()
	var s llSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fail("bad rules: %v", err)
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		fail("Landlock is not enabled in this kernel; not running %q unconfined", argv[0])
	}
	cfg := landlock.V11.BestEffort()
	if s.Network {
		cfg.HandledAccessNet = 0
	}
	// What split found may have gone since (another program's
	// temporary folder), which is no reason not to run; and what became
	// a symbolic link since is left out, as split leaves links out.
	err = cfg.Restrict(
		landlock.PathAccess(ll.AccessFSReadDir, "/"),
		landlock.RODirs(noLinks(s.Read)...).IgnoreIfMissing(),
		landlock.ROFiles(noLinks(s.ReadFiles)...).IgnoreIfMissing(),
		landlock.RWDirs(noLinks(s.Write)...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(noLinks(s.WriteFiles)...).IgnoreIfMissing(),
		landlock.RWFiles("/dev"), // /dev/null, /dev/tty: written, never made
	)
	if err != nil {
		fail("applying Landlock: %v", err)
	}
	if err := dropCapabilities(); err != nil {
		fail("dropping capabilities: %v", err)
	}
	// Without the network, no Internet socket at all (Landlock's rules
	// leave UDP and MPTCP out); and before ABI 9, which refuses
	// connecting to Unix sockets outside (RWDirs grants no resolve-unix
	// right), no Unix socket either.
	if !s.Network {
		families := []uint32{unix.AF_INET, unix.AF_INET6}
		if abi < 9 {
			families = append(families, unix.AF_UNIX)
		}
		if err := denySockets(families...); err != nil {
			fail("%v", err)
		}
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	fail("exec %s: %v", argv[0], err)
}

// noLinks drops the paths that are gone or symbolic links now; what is
// swapped for a link between this look and the rule's open is the window
// left.
func noLinks(paths []string) []string {
	out := paths[:0:0]
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}

// dropCapabilities leaves the command no capability, even when the
// daemon runs as root: CAP_SYS_PTRACE would let it read the daemon's
// environment through /proc, CAP_DAC_READ_SEARCH files by handle. The
// bounding set is emptied (what an exec as root would grant again) along
// with the inheritable and ambient sets; an unprivileged daemon has none
// to drop and may not touch the bounding set, which is then empty of use.
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	privileged := data[0].Effective != 0 || data[1].Effective != 0
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && privileged && err != unix.EINVAL {
			return fmt.Errorf("bounding set, capability %d: %w", c, err)
		}
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	data[0].Inheritable, data[1].Inheritable = 0, 0
	data[0].Effective, data[0].Permitted, data[1].Effective, data[1].Permitted = 0, 0, 0, 0
	return unix.Capset(&hdr, &data[0])
}
