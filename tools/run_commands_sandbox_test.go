//go:build linux

package tools_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/tools"
)

// sandboxBackends runs f under each backend that works here (bubblewrap
// missing: testenv's rule; a kernel without Landlock: skipped).
func sandboxBackends(t *testing.T, f func(t *testing.T, b sandbox.Backend)) {
	for _, b := range []sandbox.Backend{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(string(b), func(t *testing.T) {
			if st := sandbox.Detect(b, ""); st.Backend != b {
				if b == sandbox.BackendBwrap {
					testenv.Missing(t, "bubblewrap cannot run here (%s); apt-get install bubblewrap", st.Detail)
				}
				t.Skipf("no %s: %s", b, st.Detail)
			}
			f(t, b)
		})
	}
}

func sandboxedRun(t *testing.T, files tools.Files, args string, sandboxed bool, opts ...tools.WorkspaceOption) tools.Result {
	t.Helper()
	inv, err := wsBuild(t, files, tools.NameRunCommands, args, opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{Sandboxed: sandboxed})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunCommandsSandboxed(t *testing.T) {
	sandboxBackends(t, func(t *testing.T, b sandbox.Backend) {
		files := wsTree(t, map[string]string{"a.txt": "hello\n"})
		var rnd [6]byte
		rand.Read(rnd[:])
		outside := "/tmp/outside-" + hex.EncodeToString(rnd[:])
		pol := tools.SandboxPolicy(func() sandbox.Policy { return sandbox.Policy{Backend: b, Write: []string{files.Root()}} })
		sh := tools.CommandShell("/bin/sh")

		res := sandboxedRun(t, files, `{"commands":["echo in > new.txt && cat a.txt new.txt","touch `+outside+`"]}`, true, pol, sh)
		wsWant(t, res.Content, "hello\nin\n[exit code 0", "[sandbox: the command ran in the sandbox", "sandbox: false")
		if !res.IsError {
			t.Error("a command the sandbox stopped is no error")
		}
		if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
			os.Remove(outside)
			t.Fatalf("%s was written from the sandbox", outside)
		}
		// Failures that are not the sandbox's get no note.
		res = sandboxedRun(t, files, `{"commands":["exit 3"]}`, true, pol, sh)
		wsWantNot(t, res.Content, "[sandbox:")

		// Background commands are confined the same way.
		bg := tools.NewBackground(0)
		defer bg.Close()
		res = sandboxedRun(t, files, `{"commands":["echo started; touch `+outside+`"],"background":true}`, true, pol, sh, tools.BackgroundCommands(bg))
		for i := 0; bg.Running() > 0 && i < 400; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
			os.Remove(outside)
			t.Fatalf("%s was written from a background command in the sandbox: %s", outside, res.Content)
		}
		read := wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg1"}`, tools.BackgroundCommands(bg))
		if !strings.Contains(res.Content+read.Content, "[sandbox:") {
			t.Errorf("the background command's failure is not put down to the sandbox: %s / %s", res.Content, read.Content)
		}
		if data, _ := os.ReadFile(filepath.Join(files.Root(), "new.txt")); string(data) != "in\n" {
			t.Errorf("the workspace write from the sandbox = %q", data)
		}
	})
}

// A call the policy allowed only in the sandbox never runs unconfined:
// with no sandbox set up, or one that cannot confine, it is not run.
func TestRunCommandsSandboxedNeverRunsUnconfined(t *testing.T) {
	files := wsTree(t, nil)
	mark := filepath.Join(files.Root(), "ran")
	args := `{"commands":["touch ` + mark + `"]}`
	res := sandboxedRun(t, files, args, true)
	wsWant(t, res.Content, "[not run: the sandbox is not set up")
	none := tools.SandboxPolicy(func() sandbox.Policy {
		return sandbox.Policy{Backend: sandbox.BackendBwrap, Write: []string{files.Root()}}
	})
	t.Setenv("PATH", t.TempDir()) // no bubblewrap to find
	res = sandboxedRun(t, files, args, true, none, tools.CommandEnv([]string{"PATH=" + os.Getenv("PATH")}))
	wsWant(t, res.Content, "[not run: the command may run only in the sandbox")
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the command ran unconfined")
	}
}

// A confined command is owned like any other: what it leaves behind, in
// its process group or escaped from it, is gone when the call ends, by
// its own end or by the timeout.
func TestSandboxedCommandsLeaveNoOrphans(t *testing.T) {
	forms := map[string]string{"background job": orphanForms["background job"], "setsid -f": orphanForms["setsid -f"],
		"double fork": orphanForms["double fork"]}
	sandboxBackends(t, func(t *testing.T, b sandbox.Backend) {
		files := wsTree(t, nil)
		sh := tools.CommandShell("/bin/sh")
		pol := tools.SandboxPolicy(func() sandbox.Policy { return sandbox.Policy{Backend: b, Write: []string{files.Root()}} })
		base := 5_000_000 + int(time.Now().UnixNano()%1_000_000)*10
		n := 0
		for name, form := range forms {
			for _, timeout := range []bool{false, true} {
				n++
				marker := base + n
				t.Run(fmt.Sprintf("%s/timeout=%v", name, timeout), func(t *testing.T) {
					command := fmt.Sprintf(form, marker)
					opts := []tools.WorkspaceOption{sh, pol}
					if timeout {
						command += "\nsleep 30"
						opts = append(opts, tools.CommandTimeout(time.Second))
					}
					// With a timeout the orphan must have run before it, or
					// finding none after proves nothing; a normal end may
					// sweep it before anyone looks.
					started := make(chan bool, 1)
					go func() { started <- !timeout || waitMarker(t, marker) }()
					res := sandboxedRun(t, files, fmt.Sprintf(`{"commands":[%q]}`, command), true, opts...)
					if !<-started {
						t.Fatalf("the marked process never started: %s", res.Content)
					}
					wantNoMarker(t, marker, command)
				})
			}
		}
	})
}
