package proc

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestNothingStartsBeforeTheFirstChild: becoming a subreaper starts no
// goroutine (and so no locked thread) of this package; the spawning
// thread and the reaper come with the first child, which still gets the
// parent-death signal. It runs in a fresh process of the test binary, so
// that no earlier test has started a child.
func TestNothingStartsBeforeTheFirstChild(t *testing.T) {
	if os.Getenv("CLINE_LS_PROC_FRESH") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNothingStartsBeforeTheFirstChild$", "-test.v")
		cmd.Env = append(os.Environ(), "CLINE_LS_PROC_FRESH=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("in a fresh process: %v\n%s", err, out)
		}
		return
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	if g := ours(); g != "" {
		t.Fatalf("before any child, goroutines of this package run:\n%s", g)
	}
	cmd := exec.Command("true")
	g, err := Start(cmd, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	g.Cleanup()
	if cmd.SysProcAttr.Pdeathsig == 0 {
		t.Error("the child was started without a parent-death signal")
	}
	got := ours()
	for _, want := range []string{"proc.platformSetup", "proc.startReaper"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the first child, no goroutine from %s:\n%s", want, got)
		}
	}
}

// ours returns the stacks of the running goroutines started by this
// package, the test's own aside.
func ours() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "created by github.com/cline-ls/cline-ls/internal/proc.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
