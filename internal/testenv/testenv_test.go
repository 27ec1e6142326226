package testenv

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestMissing runs a test that lacks a program, once with CI set and once
// without, in a child process: skipped outside CI, failed in it.
func TestMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		LookPath(t, "no-such-program-cline-ls-testenv", "the child needs it")
		t.Log("LookPath returned for a program that is not there")
		return
	}
	for _, c := range []struct {
		ci       string
		exitCode int
		says     string
	}{
		{"", 0, "--- SKIP: TestMissing"},
		{"true", 1, "--- FAIL: TestMissing"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("running the child: %v", err)
		}
		if code != c.exitCode || !strings.Contains(string(out), c.says) || !strings.Contains(string(out), "no-such-program-cline-ls-testenv is not on PATH: the child needs it") {
			t.Errorf("CI=%q: exit %d, want %d and %q naming the program; output:\n%s", c.ci, code, c.exitCode, c.says, out)
		}
		if strings.Contains(string(out), "LookPath returned") {
			t.Errorf("CI=%q: the test went on past the missing program:\n%s", c.ci, out)
		}
	}
}

// blockHere blocks until release is closed; Parked must find it.
func blockHere(entered chan<- struct{}, release <-chan struct{}) {
	close(entered)
	<-release
}

func TestParked(t *testing.T) {
	if Parked("testenv.blockHere") {
		t.Fatal("Parked found a function no goroutine has called")
	}
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { blockHere(entered, release); close(done) }()
	<-entered
	for !Parked("testenv.blockHere") {
		select {
		case <-done:
			t.Fatal("blockHere returned before it was released")
		default:
			runtime.Gosched()
		}
	}
	close(release)
	<-done
	if Parked("testenv.blockHere") {
		t.Error("Parked still finds blockHere after it returned")
	}
}
