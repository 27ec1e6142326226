// Package sandbox confines the commands the daemon runs for a model: they
// write only to the workspace folders and a private temporary folder,
// read the system but not the user's secrets, and reach no network unless
// allowed. Confine is the one function that turns a command into a
// confined one; the caller then starts it through internal/proc like any
// other child, so a confined command is owned, swept and killed the same
// way.
//
// Two backends, chosen by Detect: bubblewrap, when it is installed and
// may make namespaces (a mount namespace gives a read-only view of the
// system with the workspace bound writable, a network namespace leaves no
// way out but loopback); else Landlock, applied by a helper — this
// binary, started with HelperArg — which restricts itself and then execs
// the command, so the rules hold for everything the command starts.
//
// PolicyFor is the one place the user's sandbox settings and a
// session's folders become a Policy.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/internal/proc"
)

// Backend names a way of confining a command.
type Backend string

// Backends. BackendAuto picks bubblewrap when it works, else Landlock;
// BackendNone is what Detect reports when neither does.
const (
	BackendAuto     Backend = ""
	BackendBwrap    Backend = "bwrap"
	BackendLandlock Backend = "landlock"
	BackendNone     Backend = "none"
)

// ParseBackend reads a backend as the settings and CLINE_LS_SANDBOX spell
// it: "", "auto", "bwrap" (or "bubblewrap"), "landlock".
func ParseBackend(s string) (Backend, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return BackendAuto, nil
	case "bwrap", "bubblewrap":
		return BackendBwrap, nil
	case "landlock":
		return BackendLandlock, nil
	}
	return "", fmt.Errorf("unknown sandbox backend %q (auto, bwrap, landlock)", s)
}

// Policy is what a confined command may do.
type Policy struct {
	// Backend forces a backend; BackendAuto lets Detect choose.
	Backend Backend
	// Write are the folders the command may change (the workspace
	// folders, and what the sandbox.allowWrite setting adds), besides its
	// private temporary folder. A .git folder at the top of one stays
	// read-only.
	Write []string
	// Home is the user's home folder, whose secrets (SecretPaths) the
	// command cannot read; StateDir the daemon's state folder (sessions,
	// checkpoints), which it cannot read either.
	Home, StateDir string
	// RuntimeDir is the user's runtime folder ($XDG_RUNTIME_DIR; when
	// empty, /run/user/UID), hidden with the sockets of SocketPaths.
	RuntimeDir string
	// DenyRead are more files and folders it cannot read (the
	// sandbox.denyRead setting), absolute.
	DenyRead []string
	// Network lets the command reach the network.
	Network bool
}

// SecretPaths are the files and folders under home no confined command
// may read: keys and credentials of ssh, the cloud tools, gpg and netrc.
func SecretPaths(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, p := range []string{".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc", ".docker/config.json", ".kube"} {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// SocketPaths are the sockets, and the folders holding them, through
// which a command could have code run outside the sandbox (the session
// bus and its systemd, the system bus, container engines): hidden from
// it like the secrets.
func SocketPaths(runtimeDir string) []string {
	if runtimeDir == "" {
		runtimeDir = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	return []string{runtimeDir, "/run/dbus", "/var/run/dbus", "/run/docker.sock", "/var/run/docker.sock",
		"/run/containerd", "/run/podman", "/run/snapd.socket"}
}

// plan is a policy made concrete for one command: real paths, the
// folders that exist, the private temporary folder.
type plan struct {
	write    []string // writable folders, symbolic links resolved
	readOnly []string // inside write, kept read-only (.git)
	deny     []string // unreadable, existing, symbolic links resolved
	network  bool
}

// hidden are the paths a confined command cannot read, as the policy
// names them: under bubblewrap they read as missing.
func (p Policy) hidden() []string {
	deny := append(SecretPaths(p.Home), SocketPaths(p.RuntimeDir)...)
	deny = append(deny, p.DenyRead...)
	if p.StateDir != "" {
		deny = append(deny, p.StateDir)
	}
	return deny
}

func (p Policy) plan(tmp string) plan {
	var pl plan
	for _, w := range append(slices.Clone(p.Write), tmp) {
		if r, ok := realDir(w); ok && !slices.Contains(pl.write, r) {
			pl.write = append(pl.write, r)
			// A .git folder, or the .git file of a worktree that says
			// where its repository is; a symbolic link there points
			// elsewhere, and what it points to is judged where it is.
			g := filepath.Join(r, ".git")
			if fi, err := os.Lstat(g); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
				pl.readOnly = append(pl.readOnly, g)
			}
		}
	}
	for _, d := range p.hidden() {
		if !filepath.IsAbs(d) {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(pl.deny, r) {
			pl.deny = append(pl.deny, r)
		}
	}
	pl.network = p.Network
	return pl
}

// realDir resolves a folder's symbolic links; ok is false for what is
// not a folder.
func realDir(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return "", false
	}
	return r, true
}

// ErrUnavailable is returned by Confine when no backend can confine a
// command here; Status says why.
var ErrUnavailable = errors.New("no sandbox is available")

// Confine rewrites cmd, not yet started, so that it runs confined by p:
// its Path and Args become the backend's, its environment gets TMPDIR set
// to a private temporary folder, which release removes once the command
// and what it started are gone. cmd.Env is proc.Env's when nil; its
// PATH is where bubblewrap is looked for. The working folder stays
// cmd.Dir.
func Confine(cmd *exec.Cmd, p Policy) (release func(), err error) {
	if cmd.Process != nil {
		return nil, errors.New("sandbox: the command has started already")
	}
	if cmd.Env == nil {
		cmd.Env = proc.Env(nil, nil, nil)
	}
	st := Detect(p.Backend, envValue(cmd.Env, "PATH"))
	if st.Backend == BackendNone {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, st.Detail)
	}
	tmp, err := os.MkdirTemp("", "cline-ls-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temporary folder: %w", err)
	}
	release = func() { os.RemoveAll(tmp) }
	pl := p.plan(tmp)
	env := setEnv(cmd.Env, "TMPDIR", tmp)
	argv := append([]string{cmd.Path}, cmd.Args[1:]...)
	switch st.Backend {
	case BackendBwrap:
		cmd.Path = st.path
		cmd.Args = append([]string{"bwrap"}, bwrapArgs(pl, cmd.Dir)...)
		cmd.Args = append(cmd.Args, "--")
		cmd.Args = append(cmd.Args, argv...)
	case BackendLandlock:
		spec, err := landlockSpec(pl)
		if err != nil {
			release()
			return nil, err
		}
		cmd.Path = "/proc/self/exe" // this binary, even when replaced on disk since
		cmd.Args = append([]string{"cline-ls-sandbox", HelperArg, spec}, argv...)
	}
	cmd.Env = env
	return release, nil
}

// envValue is the value of name in env (KEY=value entries), the last one
// winning as for exec.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// setEnv returns env with name set to value, every earlier entry of it
// dropped.
func setEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// Status is which backend confines commands here, and a line for the
// user: the backend's version, or why none can.
type Status struct {
	Backend Backend
	Detail  string
	path    string // bubblewrap's program
}

func (s Status) String() string {
	if s.Backend == BackendNone {
		return "none (" + s.Detail + ")"
	}
	return string(s.Backend) + " (" + s.Detail + ")"
}

// Reason is Policy.Reason for a policy that knows only whether the
// network is allowed.
func Reason(output string, network bool) string {
	return Policy{Network: network}.Reason(output)
}

// Reason looks at the output of a command confined by p that failed for
// a sign that the sandbox stopped it (a write or read refused, a network
// unreachable, a path the sandbox hides named: under bubblewrap it reads
// as missing), and returns the reason for the model, or "" when the
// output shows none. With the network allowed, a network error is no
// sign. It cannot tell a sandbox's refusal from the same error met
// outside one, so it says "may".
func (p Policy) Reason(output string) string {
	network := p.Network
	var hid []string
	for _, h := range p.hidden() {
		if filepath.IsAbs(h) && strings.Contains(output, h) {
			hid = append(hid, h)
		}
	}
	low := strings.ToLower(output)
	has := func(s ...string) bool {
		return slices.ContainsFunc(s, func(x string) bool { return strings.Contains(low, x) })
	}
	fsSign := has("read-only file system", "permission denied", "operation not permitted", "eacces", "eperm", "erofs")
	netSign := !network && has("network is unreachable", "connection refused", "could not resolve", "temporary failure in name resolution",
		"name or service not known", "no such host", "couldn't connect", "failed to connect", "enetunreach", "econnrefused", "getaddrinfo")
	if !fsSign && !netSign && len(hid) == 0 {
		return ""
	}
	limits := "it writes only to the workspace folders and its private temporary folder ($TMPDIR), cannot read credentials (~/.ssh, ~/.aws, …) or the daemon's state"
	if !network {
		limits += ", and has no network (under Landlock a refused connection reads \"permission denied\")"
	}
	if len(hid) > 0 {
		limits += "; it hides " + strings.Join(hid, ", ") + ", which may read as missing there"
	}
	return "the command ran in the sandbox, which may have stopped it: " + limits
}
