package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestEditor runs, in a child process, a test that asks for the editor
// "fake-editor-cline", named by CLINE_TEST_FAKE-EDITOR-CLINE or not: the
// one named is used and its version logged; one named that does not run
// fails the test even outside CI; none named and none on PATH skips.
func TestEditor(t *testing.T) {
	const name = "fake-editor-cline"
	env := "CLINE_TEST_" + strings.ToUpper(name)
	if os.Getenv("TESTENV_CHILD") != "" {
		t.Logf("Editor returned %s", Editor(t, name, "the child needs it"))
		return
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "editor")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf 'Fake Editor 1.2\\nbuilt today\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(dir, "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		named    string
		exitCode int
		says     []string
	}{
		{fake, 0, []string{"--- PASS: TestEditor", name + ": Fake Editor 1.2 (" + fake + ")", "Editor returned " + fake}},
		{filepath.Join(dir, "absent"), 1, []string{"--- FAIL: TestEditor", env + "=" + filepath.Join(dir, "absent") + " does not run"}},
		{silent, 1, []string{"--- FAIL: TestEditor", "its --version printed nothing"}},
		{"", 0, []string{"--- SKIP: TestEditor", name + " is not installed (the child needs it)"}},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEditor$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI=", env+"="+c.named)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("running the child: %v", err)
		}
		if code != c.exitCode {
			t.Errorf("%s=%q: exit %d, want %d; output:\n%s", env, c.named, code, c.exitCode, out)
		}
		for _, s := range c.says {
			if !strings.Contains(string(out), s) {
				t.Errorf("%s=%q: the output does not say %q:\n%s", env, c.named, s, out)
			}
		}
		if c.exitCode != 0 && strings.Contains(string(out), "Editor returned") {
			t.Errorf("%s=%q: the test went on past an editor that does not run:\n%s", env, c.named, out)
		}
	}
}
