package proc

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	hideKey   = "sk-hidden-by-name-0123456789"
	hideToken = "tok-hidden-as-named-0123456789"
)

// TestHideKeys runs HideKeys in a fresh process of the test binary with
// keys in its environment: after it, the process's environment block
// (what /proc/PID/environ shows, to root too) holds no key, Getenv and
// SecretValues still have them, the process is not dumpable, and its
// children see no key in their environment or the daemon's.
func TestHideKeys(t *testing.T) {
	if os.Getenv("CLINE_LS_PROC_HIDE") != "" {
		hideKeysInThisProcess(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHideKeys$", "-test.v")
	cmd.Env = append(os.Environ(), "CLINE_LS_PROC_HIDE=1", "SOME_API_KEY="+hideKey, "MY_TOKEN="+hideToken)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Errorf("in a fresh process: %v\n%s", err, out)
	}
}

func hideKeysInThisProcess(t *testing.T) {
	if err := HideKeys([]string{"MY_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{hideKey, hideToken} {
		if strings.Contains(string(env), k) {
			t.Errorf("/proc/self/environ still holds %q", k)
		}
	}
	if Getenv("SOME_API_KEY") != hideKey || Getenv("MY_TOKEN") != hideToken || os.Getenv("SOME_API_KEY") != "" {
		t.Errorf("Getenv = %q, %q; os.Getenv = %q", Getenv("SOME_API_KEY"), Getenv("MY_TOKEN"), os.Getenv("SOME_API_KEY"))
	}
	if got := SecretValues(func(string) string { return "" }, nil); !slices.Contains(got, hideKey) || !slices.Contains(got, hideToken) {
		t.Errorf("SecretValues = %q, want both hidden keys", got)
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Errorf("dumpable = %d (%v), want 0", d, err)
	}
	for _, c := range []struct{ script, what string }{
		{"env", "its own environment"},
		{"cat /proc/$PPID/environ /proc/$PPID/task/*/environ", "the daemon's environment"},
	} {
		cmd := exec.Command("/bin/sh", "-c", c.script)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		g, err := Start(cmd, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		g.Cleanup()
		for _, k := range []string{hideKey, hideToken} {
			if strings.Contains(out.String(), k) {
				t.Errorf("a child saw %q in %s:\n%s", k, c.what, out.String())
			}
		}
	}
}
