package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// dialVar makes the test binary a TCP client: it connects to the address
// the variable holds and exits 0 if it could. The tests run it inside
// the sandbox, so that whether a connection is refused depends on the
// sandbox alone and not on which clients the machine has.
const dialVar = "CLINE_LS_SANDBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialVar); addr != "" {
		network := "tcp"
		if a, ok := strings.CutPrefix(addr, "unix:"); ok {
			network, addr = "unix", a
		} else if a, ok := strings.CutPrefix(addr, "udp:"); ok {
			network, addr = "udp", a
		}
		c, err := net.DialTimeout(network, addr, 10*time.Second)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(3)
		}
		if _, err := c.Write([]byte("x")); err != nil && network == "udp" {
			fmt.Println("send:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// eachBackend runs f once under bubblewrap and once under Landlock. A
// missing bubblewrap is a missing prerequisite (testenv: skipped here,
// failed in CI); a kernel without Landlock skips its half.
func eachBackend(t *testing.T, f func(t *testing.T, b Backend)) {
	t.Run("bwrap", func(t *testing.T) {
		if st := Detect(BackendBwrap, ""); st.Backend != BackendBwrap {
			testenv.Missing(t, "bubblewrap cannot run here (%s); apt-get install bubblewrap", st.Detail)
		}
		f(t, BackendBwrap)
	})
	t.Run("landlock", func(t *testing.T) {
		if st := Detect(BackendLandlock, ""); st.Backend != BackendLandlock {
			t.Skipf("no Landlock: %s", st.Detail)
		}
		f(t, BackendLandlock)
	})
}

// fixture is a workspace, a home with planted secrets and a state folder,
// all in the test's own temporary folder.
type fixture struct {
	ws, home, state string
	run             string // the runtime folder, where the session bus would be
	secret          string
	pol             Policy
}

func newFixture(t *testing.T, b Backend) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), state: filepath.Join(root, "state"),
		secret: "SECRET-" + randHex()}
	for _, d := range []string{fx.ws, filepath.Join(fx.ws, "sub"), filepath.Join(fx.home, ".ssh"), filepath.Join(fx.home, ".aws"), fx.state} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(fx.home, ".ssh", "id_ed25519"), []byte(fx.secret), 0o600))
	must(t, os.WriteFile(filepath.Join(fx.home, ".aws", "credentials"), []byte(fx.secret), 0o600))
	must(t, os.WriteFile(filepath.Join(fx.home, ".netrc"), []byte(fx.secret), 0o600))
	must(t, os.WriteFile(filepath.Join(fx.state, "session.json"), []byte(fx.secret), 0o600))
	must(t, os.WriteFile(filepath.Join(fx.ws, "listed.env"), []byte(fx.secret), 0o600))
	must(t, os.WriteFile(filepath.Join(fx.ws, "readme.txt"), []byte("hello\n"), 0o644))
	fx.run = filepath.Join(root, "run")
	must(t, os.MkdirAll(fx.run, 0o700))
	fx.pol = Policy{Backend: b, Write: []string{fx.ws}, Home: fx.home, StateDir: fx.state, RuntimeDir: fx.run,
		DenyRead: []string{filepath.Join(fx.ws, "listed.env")}}
	return fx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// run runs script in sh, confined by pol when confine, the way the tools
// do: environment from proc.Env, started and swept through internal/proc.
// It returns the output and whether the script exited 0.
func (fx *fixture) exec(t *testing.T, pol Policy, confine bool, script string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = fx.ws
	cmd.Env = proc.Env(nil, nil, append([]string{"HOME=" + fx.home}, env...))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release := func() {}
	if confine {
		r, err := Confine(cmd, pol)
		if err != nil {
			t.Fatalf("Confine: %v", err)
		}
		release = r
	}
	defer release()
	g, err := proc.Start(cmd, true, nil)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	err = cmd.Wait()
	g.Cleanup()
	return out.String(), err == nil
}

func absent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			os.Remove(p)
			t.Errorf("%s was created outside the sandbox's folders (%v)", p, err)
		}
	}
}

func TestWritesOutsideAreRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		r := randHex()
		outs := []string{"/tmp/outside-" + r, filepath.Join(fx.home, "outside-"+r), filepath.Join(filepath.Dir(fx.ws), "outside-"+r)}
		for _, o := range outs {
			out, ok := fx.exec(t, fx.pol, true, "touch "+o)
			if ok {
				t.Errorf("touch %s succeeded in the sandbox: %s", o, out)
			}
			if Reason(out, false) == "" {
				t.Errorf("the failure of touch %s is not put down to the sandbox: %q", o, out)
			}
		}
		absent(t, outs...)
	})
}

func TestDescendantsStayConfined(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		r := randHex()
		a, bg, sub := "/tmp/outside-a-"+r, "/tmp/outside-b-"+r, "/tmp/outside-c-"+r
		script := fmt.Sprintf(`sh -c 'sh -c "touch %s"'; touch %s & wait; (sh -c 'touch %s' &) ; sleep 0.2; echo done`, a, bg, sub)
		out, _ := fx.exec(t, fx.pol, true, script)
		if !strings.Contains(out, "done") {
			t.Fatalf("the script did not run to its end: %q", out)
		}
		absent(t, a, bg, sub)
	})
}

func TestWorkspaceAndPrivateTmpWritable(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		script := `set -e
echo one > sub/new.txt; cat sub/new.txt
echo two >> readme.txt
mkdir -p sub/deep/er && mv sub/new.txt sub/deep/er/moved.txt && rm sub/deep/er/moved.txt
[ -n "$TMPDIR" ] && [ "$TMPDIR" != /tmp ]
echo three > "$TMPDIR/t"; cat "$TMPDIR/t"
echo "tmp=$TMPDIR"`
		out, ok := fx.exec(t, fx.pol, true, script)
		if !ok || !strings.Contains(out, "one") || !strings.Contains(out, "three") {
			t.Fatalf("writing the workspace or $TMPDIR failed in the sandbox: %s", out)
		}
		if data, _ := os.ReadFile(filepath.Join(fx.ws, "readme.txt")); string(data) != "hello\ntwo\n" {
			t.Errorf("readme.txt = %q, want the appended line", data)
		}
		_, tmp, _ := strings.Cut(out, "tmp=")
		tmp = strings.TrimSpace(tmp)
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the private temporary folder %q outlives its command (%v)", tmp, err)
		}
	})
}

func TestGitStaysReadOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		must(t, os.MkdirAll(filepath.Join(fx.ws, ".git", "hooks"), 0o755))
		must(t, os.WriteFile(filepath.Join(fx.ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		out, ok := fx.exec(t, fx.pol, true, "cat .git/HEAD && echo x > sub/ok.txt")
		if !ok || !strings.Contains(out, "refs/heads/main") {
			t.Fatalf("reading .git or writing the workspace failed: %s", out)
		}
		hook := filepath.Join(fx.ws, ".git", "hooks", "pre-commit")
		for _, s := range []string{"echo evil > .git/hooks/pre-commit", "echo evil >> .git/HEAD", "rm .git/HEAD", "sh -c 'touch .git/hooks/pre-commit'"} {
			if out, ok := fx.exec(t, fx.pol, true, s); ok {
				t.Errorf("%s succeeded in the sandbox: %s", s, out)
			}
		}
		absent(t, hook)
		if data, _ := os.ReadFile(filepath.Join(fx.ws, ".git", "HEAD")); string(data) != "ref: refs/heads/main\n" {
			t.Errorf(".git/HEAD changed: %q", data)
		}

		// A worktree's .git is a file naming its repository: it stays
		// as it is too.
		wt := newFixture(t, b)
		gitFile := filepath.Join(wt.ws, ".git")
		must(t, os.WriteFile(gitFile, []byte("gitdir: /elsewhere\n"), 0o644))
		if out, ok := wt.exec(t, wt.pol, true, "echo 'gitdir: /tmp/evil' > .git"); ok {
			t.Errorf("the worktree's .git file was rewritten in the sandbox: %s", out)
		}
		if data, _ := os.ReadFile(gitFile); string(data) != "gitdir: /elsewhere\n" {
			t.Errorf("the worktree's .git = %q", data)
		}
	})
}

func TestSecretsUnreadable(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		must(t, os.Symlink(filepath.Join(fx.home, ".ssh", "id_ed25519"), filepath.Join(fx.ws, "sub", "key-link")))
		reads := []string{
			`cat "$HOME/.ssh/id_ed25519"`, `cat ~/.aws/credentials`, `cat ~/.netrc`, `cat sub/key-link`,
			"cat " + filepath.Join(fx.state, "session.json"), "cat listed.env", `sh -c 'cat ~/.ssh/*'`,
			fmt.Sprintf("cat /proc/%d/environ", os.Getpid()), `cp ~/.ssh/id_ed25519 sub/copy && cat sub/copy`,
		}
		for _, s := range reads {
			out, ok := fx.exec(t, fx.pol, true, s)
			if ok || strings.Contains(out, fx.secret) || strings.Contains(out, dialVar) {
				t.Errorf("%s read a secret in the sandbox (ok=%v): %q", s, ok, out)
			}
		}
		// The same reads work outside: the refusals are the sandbox's.
		if out, _ := fx.exec(t, fx.pol, false, `cat "$HOME/.ssh/id_ed25519"`); !strings.Contains(out, fx.secret) {
			t.Fatalf("the key cannot be read even outside the sandbox: %q", out)
		}
		if out, ok := fx.exec(t, fx.pol, true, "cat /etc/passwd readme.txt >/dev/null && echo readable"); !ok || !strings.Contains(out, "readable") {
			t.Errorf("the system or the workspace is not readable in the sandbox: %q", out)
		}
	})
}

func TestNetworkRefused(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dial := `"$SELF"`
	accepted := func(t *testing.T) bool {
		t.Helper()
		// A connect that succeeded completed its handshake before the
		// client exited, so the connection already waits to be accepted.
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(200 * time.Millisecond))
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			return true
		}
		return false
	}
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		env := []string{"SELF=" + self, dialVar + "=" + ln.Addr().String()}
		out, ok := fx.exec(t, fx.pol, false, dial, env...)
		if !ok || !accepted(t) {
			t.Fatalf("the client cannot connect even outside the sandbox: %q", out)
		}
		out, ok = fx.exec(t, fx.pol, true, dial, env...)
		if ok || accepted(t) {
			t.Errorf("a connection to %s got through the sandbox: %q", ln.Addr(), out)
		}
		if Reason(out, false) == "" {
			t.Errorf("the refused connection is not put down to the sandbox: %q", out)
		}
		pol := fx.pol
		pol.Network = true
		if out, ok := fx.exec(t, pol, true, dial, env...); !ok || !accepted(t) {
			t.Errorf("with the network allowed, the connection failed: %q", out)
		}
	})
}

// A confined command is owned like any other: killing its group takes
// what it started, whatever namespaces hold them.
func TestConfinedCommandIsKilledWithItsGroup(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		n := 7000 + int(time.Now().UnixNano()%1000)
		cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("sleep %d & sleep %d; wait", n, n))
		cmd.Dir = fx.ws
		cmd.Env = proc.Env(nil, nil, nil)
		release, err := Confine(cmd, fx.pol)
		must(t, err)
		defer release()
		r, w, _ := os.Pipe()
		cmd.Stdout, cmd.Stderr = w, w
		g, err := proc.Start(cmd, true, nil)
		w.Close()
		must(t, err)
		defer r.Close()
		guard := time.Now().Add(20 * time.Second)
		for len(proctest.MarkerPIDs(n)) < 2 && time.Now().Before(guard) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := len(proctest.MarkerPIDs(n)); got < 2 {
			t.Fatalf("%d of the two sleeps started", got)
		}
		g.Kill()
		cmd.Wait()
		g.Cleanup()
		if left := proctest.MarkerPIDs(n); len(left) > 0 {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived their killed group", left)
		}
	})
}

func TestDetect(t *testing.T) {
	noBwrap := t.TempDir() // a PATH where bubblewrap is not
	if st := Detect(BackendBwrap, noBwrap); st.Backend != BackendNone || !strings.Contains(st.Detail, "not installed") {
		t.Errorf("bwrap asked for without one on PATH: %v", st)
	}
	st := Detect(BackendAuto, noBwrap)
	if ll := Detect(BackendLandlock, ""); ll.Backend == BackendLandlock && st.Backend != BackendLandlock {
		t.Errorf("auto without bubblewrap on PATH = %v, want landlock", st)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if st := Detect(BackendAuto, ""); st.Backend == BackendNone {
			t.Errorf("auto with bubblewrap installed = %v", st)
		}
	}
	for in, want := range map[string]Backend{"": BackendAuto, "auto": BackendAuto, "bubblewrap": BackendBwrap, "Landlock": BackendLandlock} {
		if got, err := ParseBackend(in); err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseBackend("docker"); err == nil {
		t.Error("ParseBackend(docker) is no error")
	}
}

// A command without an environment gets proc.Env's, as proc.Start would
// give it, not one of TMPDIR alone.
func TestConfineFillsANilEnvironment(t *testing.T) {
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		cmd := exec.Command("/bin/sh", "-c", "echo path=$PATH tmp=$TMPDIR")
		cmd.Dir = fx.ws
		release, err := Confine(cmd, fx.pol)
		must(t, err)
		defer release()
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "path="+os.Getenv("PATH")) || strings.Contains(string(out), "tmp= ") {
			t.Errorf("the confined command's environment: %q %v", out, err)
		}
	})
}

func TestUnavailableBackendRefusesToConfine(t *testing.T) {
	cmd := exec.Command("/bin/true")
	cmd.Env = []string{"PATH=" + t.TempDir()}
	if _, err := Confine(cmd, Policy{Backend: BackendBwrap}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Confine with no bubblewrap = %v, want ErrUnavailable", err)
	}
	if cmd.Path != "/bin/true" {
		t.Errorf("the refused command was rewritten to %s", cmd.Path)
	}
}

func TestReason(t *testing.T) {
	for _, c := range []struct {
		out     string
		network bool
		want    string
	}{
		{"touch: cannot touch '/x': Read-only file system", false, "writes only"},
		{"open /home/u/.ssh/id: permission denied", false, "cannot read credentials"},
		{"curl: (7) Failed to connect to 127.0.0.1 port 8080: Connection refused", false, "no network"},
		{"dial tcp: lookup example.com: no such host", false, "no network"},
		{"dial tcp: lookup example.com: no such host", true, ""},
		{"--- FAIL: TestX\nexpected 2, got 3", false, ""},
	} {
		got := Reason(c.out, c.network)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Reason(%q, %v) = %q, want one with %q", c.out, c.network, got, c.want)
		}
	}
	// A path the policy hides reads as missing under bubblewrap: naming
	// it is the sign; a missing file elsewhere is none.
	pol := Policy{Home: "/home/u", StateDir: "/home/u/.local/state/cline-ls", DenyRead: []string{"/srv/secrets"}}
	for _, c := range []struct{ out, want string }{
		{"cat: /home/u/.ssh/id_ed25519: No such file or directory", "it hides /home/u/.ssh"},
		{"ls: cannot access '/home/u/.local/state/cline-ls/sessions': No such file or directory", "it hides /home/u/.local/state/cline-ls"},
		{"open /srv/secrets/token: no such file or directory", "it hides /srv/secrets"},
		{"cat: /home/u/notes.txt: No such file or directory", ""},
	} {
		got := pol.Reason(c.out)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Reason(%q) = %q, want one with %q", c.out, got, c.want)
		}
	}
}

// The session bus's socket (in the runtime folder) is out of reach under
// both backends, and under Landlock before ABI 9 any Unix socket outside
// is: connecting to one could have code run outside the sandbox.
func TestUnixSocketsOutsideUnreachable(t *testing.T) {
	self, err := os.Executable()
	must(t, err)
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		socks := []string{filepath.Join(fx.run, "bus")}
		if b == BackendLandlock {
			socks = append(socks, filepath.Join(t.TempDir(), "other.sock"))
		}
		for _, sock := range socks {
			ln, err := net.Listen("unix", sock)
			must(t, err)
			defer ln.Close()
			env := []string{"SELF=" + self, dialVar + "=unix:" + sock}
			if out, ok := fx.exec(t, fx.pol, false, `"$SELF"`, env...); !ok {
				t.Fatalf("the client cannot connect to %s even outside the sandbox: %q", sock, out)
			}
			if out, ok := fx.exec(t, fx.pol, true, `"$SELF"`, env...); ok {
				t.Errorf("a connection to %s got through the sandbox: %q", sock, out)
			}
		}
	})
}

// BenchmarkConfinedTrue is what confinement adds to a command: true(1)
// started, waited for and swept, unconfined and under each backend.
func BenchmarkConfinedTrue(b *testing.B) {
	ws := b.TempDir()
	for _, backend := range []Backend{BackendNone, BackendBwrap, BackendLandlock} {
		b.Run(string(backend), func(b *testing.B) {
			if backend != BackendNone && Detect(backend, "").Backend != backend {
				b.Skip("not available")
			}
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				cmd.Dir = ws
				cmd.Env = proc.Env(nil, nil, nil)
				release := func() {}
				if backend != BackendNone {
					r, err := Confine(cmd, Policy{Backend: backend, Write: []string{ws}, Home: os.Getenv("HOME")})
					if err != nil {
						b.Fatal(err)
					}
					release = r
				}
				g, err := proc.Start(cmd, true, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				g.Cleanup()
				release()
			}
		})
	}
}

// A datagram does not leave the sandbox either: Landlock's network rules
// cover TCP only, so the helper refuses Internet sockets; bubblewrap's
// network namespace has nowhere to send it.
func TestUDPRefused(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	must(t, err)
	defer pc.Close()
	self, err := os.Executable()
	must(t, err)
	received := func() bool {
		// A datagram sent on loopback is queued before its send returns.
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		buf := make([]byte, 16)
		_, _, err := pc.ReadFrom(buf)
		return err == nil
	}
	eachBackend(t, func(t *testing.T, b Backend) {
		fx := newFixture(t, b)
		env := []string{"SELF=" + self, dialVar + "=udp:" + pc.LocalAddr().String()}
		if out, ok := fx.exec(t, fx.pol, false, `"$SELF"`, env...); !ok || !received() {
			t.Fatalf("the datagram does not arrive even outside the sandbox: %q", out)
		}
		out, _ := fx.exec(t, fx.pol, true, `"$SELF"`, env...)
		if received() {
			t.Errorf("a datagram got out of the sandbox: %q", out)
		}
		pol := fx.pol
		pol.Network = true
		if out, ok := fx.exec(t, pol, true, `"$SELF"`, env...); !ok || !received() {
			t.Errorf("with the network allowed, the datagram did not arrive: %q", out)
		}
	})
}
