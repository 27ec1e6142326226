// Package testenv is what tests know of the process they run in. It
// holds the one rule for a test whose prerequisite (a program, an editor,
// installed packages) is missing: on a developer's machine it is skipped,
// saying what is missing and how to get it; in CI (the CI environment
// variable set) it fails, since CI installs all of them and a skip there
// would hide the test for good. Editor, the one way the end-to-end tests
// find the editor they drive (or the one the environment names). And Parked, which tells a test that a
// call it started has got as far as blocking.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Parked reports whether a goroutine is blocked (neither running nor
// runnable) with the function fn (package-qualified, as a stack trace
// names it: "workspace.(*Watcher).Close") on its stack. A test that
// claims a call blocks waits until Parked before it checks that the call
// has not returned: checked at once, the call may not have run yet.
func Parked(fn string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for n == len(buf) { // cut short: all of them, or fn may be missed
		buf = make([]byte, 2*len(buf))
		n = runtime.Stack(buf, true)
	}
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(g, fn+"(") && !strings.Contains(header, "[running]") && !strings.Contains(header, "[runnable]") {
			return true
		}
	}
	return false
}

// InCI reports whether the tests run in CI: CI is set to anything but
// "0" or "false".
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// Missing ends the test for a missing prerequisite: t.Skipf outside CI,
// t.Fatalf in it. format says what is missing and how to install it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf(format+" (CI is set, and CI installs it: a skip would hide the test)", args...)
	}
	t.Skipf(format, args...)
}

// LookPath returns the path of the program name, or ends the test through
// Missing with why, which says what the test needs it for or how to
// install it.
func LookPath(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not on PATH: %s", name, why)
	}
	return p
}

// Editor returns the editor program name ("nvim", "emacs") that an
// end-to-end test drives: the one the environment variable CLINE_TEST_<NAME>
// names (CLINE_TEST_NVIM, CLINE_TEST_EMACS), which is how CI runs the
// same tests on another generation of the editor, else name on PATH. A
// missing editor ends the test through Missing, with install saying how to
// install it; one named by the variable that does not run fails the test,
// even outside CI, since whoever set it meant that one. The editor's version
// (the first line of its --version) goes to the test's log, so that a
// failure says which editor it was.
func Editor(t testing.TB, name, install string) string {
	t.Helper()
	env := "CLINE_TEST_" + strings.ToUpper(name)
	path := os.Getenv(env)
	if path == "" {
		var err error
		if path, err = exec.LookPath(name); err != nil {
			Missing(t, "%s is not installed (%s)", name, install)
		}
	}
	v, _ := versions.LoadOrStore(path, sync.OnceValues(func() (string, error) { return version(path) }))
	ver, err := v.(func() (string, error))()
	if err != nil {
		if os.Getenv(env) != "" {
			t.Fatalf("%s=%s does not run: %v", env, path, err)
		}
		t.Fatalf("%s (%s) does not run: %v", name, path, err)
	}
	t.Logf("%s: %s (%s)", name, ver, path)
	return path
}

// versions holds, per editor path, the one run of its --version that
// the tests of a process share.
var versions sync.Map

var errNoVersion = errors.New("its --version printed nothing")

// version is the first line of what path --version prints.
func version(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return "", fmt.Errorf("%v: %s", err, ee.Stderr)
	} else if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if first == "" {
		return "", errNoVersion
	}
	return first, nil
}
