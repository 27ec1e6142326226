// Package testenv is what tests know of the process they run in. It
// holds the one rule for a test whose prerequisite (a program, an editor,
// installed packages) is missing: on a developer's machine it is skipped,
// saying what is missing and how to get it; in CI (the CI environment
// variable set) it fails, since CI installs all of them and a skip there
// would hide the test for good. And Parked, which tells a test that a
// call it started has got as far as blocking.
package testenv

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
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
