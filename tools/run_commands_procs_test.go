//go:build linux

package tools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/tools"
)

// TestMain makes the test binary a child subreaper, as the daemon is.
func TestMain(m *testing.M) {
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// orphanForms are the ways a command leaves a process behind; %d is the
// process's unique marker, the number of seconds it sleeps, which shows
// in its argv.
var orphanForms = map[string]string{
	"background job":       "sleep %d &",
	"nohup":                "nohup sleep %d >/dev/null 2>&1 &",
	"pipeline job":         "sleep %d | cat &",
	"subshell job":         "(sleep %d &)",
	"setsid job":           "setsid sleep %d &",
	"setsid -f":            "setsid -f sleep %d",
	"setsid in a subshell": "( setsid sh -c 'sleep %d &' & )",
	"job control":          "set -m; sleep %d &",
	"bash job control":     "bash -c 'set -m; sleep %d &'",
	"double fork":          `perl -e 'exit if fork; POSIX::setsid(); exit if fork; exec "sleep", "%d"' -MPOSIX`,
}

// wantNoMarker fails if a marked process is still there after a bounded
// wait, and kills any it finds, by PID.
func wantNoMarker(t *testing.T, marker int, what string) {
	t.Helper()
	var left []int
	for range 100 {
		if left = proctest.MarkerPIDs(marker); len(left) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Errorf("%s: processes %v outlived the call", what, left)
}

// waitMarker waits until the marked process runs, so that a test does not
// pass only because it looked too early.
func waitMarker(t *testing.T, marker int) bool {
	for range 200 {
		if len(proctest.MarkerPIDs(marker)) > 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func TestRunCommandsLeaveNoOrphans(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		testenv.Missing(t, "setsid is not installed (Debian: util-linux); the orphan forms need it")
	}
	if _, err := exec.LookPath("perl"); err != nil {
		testenv.Missing(t, "perl is not installed (Debian: perl-base); the double-fork form needs it")
	}
	files := wsTree(t, nil)
	sh := tools.CommandShell("/bin/sh")
	base := 3_000_000 + rand.IntN(1_000_000)*10
	n := 0
	for name, form := range orphanForms {
		for _, end := range []string{"normal end", "timeout", "cancel"} {
			n++
			marker := base + n
			t.Run(name+"/"+end, func(t *testing.T) {
				command := fmt.Sprintf(form, marker)
				switch end {
				case "normal end":
					res := wsRun(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q]}`, command), sh)
					wsWant(t, res.Content, "[exit code 0")
				case "timeout":
					// The orphan must have run before the timeout, or
					// finding none after it proves nothing.
					started := make(chan bool, 1)
					go func() { started <- waitMarker(t, marker) }()
					res := wsRun(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q]}`, command+"\nsleep 30"), sh,
						tools.CommandTimeout(time.Second))
					wsWant(t, res.Content, "[timed out")
					if !<-started {
						t.Error("the marked process never started")
					}
				case "cancel":
					inv, err := wsBuild(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q]}`, command+"\nsleep 30"), sh)
					if err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithCancel(context.Background())
					started := make(chan bool, 1)
					go func() {
						started <- waitMarker(t, marker)
						cancel()
					}()
					res, err := inv.Execute(ctx, tools.ExecOptions{})
					cancel()
					if !<-started {
						t.Error("the marked process never started")
					}
					if err != nil {
						t.Fatal(err)
					}
					wsWant(t, res.Content, "[cancelled")
				}
				wantNoMarker(t, marker, command)
			})
		}
	}
}

// TestRunCommandsPipeHolderEndsTheRead: a process that left the group but
// holds the output pipe is killed when the shell exits, so the read ends
// with it (it used to wait out the drain bound); the output written
// before that is kept.
func TestRunCommandsPipeHolderEndsTheRead(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		testenv.Missing(t, "setsid is not installed (Debian: util-linux)")
	}
	files := wsTree(t, nil)
	marker := 4_000_000 + rand.IntN(1_000_000)
	res := wsRun(t, files, tools.NameRunCommands,
		fmt.Sprintf(`{"commands":["echo before; setsid -f sleep %d"]}`, marker), tools.CommandShell("/bin/sh"))
	wsWant(t, res.Content, "before\n[exit code 0", "processes it left running in the background were stopped")
	wantNoMarker(t, marker, "setsid -f holding the pipe")
}

func TestRunCommandsHideAPIKeys(t *testing.T) {
	t.Setenv("CLINE_TEST_API_KEY", "sk-test-abcdef123456")
	t.Setenv("MY_PROVIDER_SECRET", "sk-other-654321fedcba")
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands,
		`{"commands":["printenv CLINE_TEST_API_KEY | rev; printenv MY_PROVIDER_SECRET | rev; echo done"]}`,
		tools.CommandShell("/bin/sh"), tools.HideEnv("MY_PROVIDER_SECRET"))
	wsWant(t, res.Content, "done\n")
	for _, secret := range []string{"654321fedcba-ks-tset-ks", "abcdef123456-rehto-ks"} {
		wsWantNot(t, res.Content, secret)
	}
	if strings.Contains(res.Content, "abcdef") {
		t.Errorf("a key reached the command: %s", res.Content)
	}
}

// BenchmarkRunCommands measures one command end to end, the sweep for
// leftovers included: a command that leaves nothing, and one whose
// setsid'd child holds the output pipe (which used to cost the 2 s drain
// bound).
func BenchmarkRunCommands(b *testing.B) {
	files := wsTree(b, nil)
	for name, command := range map[string]string{
		"true":             "true",
		"setsid-pipe-hold": "setsid -f sleep 300",
	} {
		b.Run(name, func(b *testing.B) {
			inv, err := wsBuild(b, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q]}`, command), tools.CommandShell("/bin/sh"))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := inv.Execute(context.Background(), tools.ExecOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestShellForIsTheShellCommandsRunIn: the shell the prompt names
// (ShellFor with no option) is the one a command finds itself in.
func TestShellForIsTheShellCommandsRunIn(t *testing.T) {
	for _, shell := range []string{"/bin/bash", "/bin/sh"} {
		if _, err := os.Stat(shell); err != nil {
			continue
		}
		t.Setenv("SHELL", shell)
		files := wsTree(t, nil)
		res := wsRun(t, files, tools.NameRunCommands, `{"commands":["echo \"shell=$0\""]}`)
		wsWant(t, res.Content, "shell="+tools.ShellFor("")+"\n")
		if got := tools.ShellFor(""); got != shell {
			t.Errorf("SHELL=%s: ShellFor = %s", shell, got)
		}
	}
}
