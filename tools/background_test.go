//go:build linux

package tools_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/tools"
)

// bgMarker is a marker of this test's own: the seconds its sleep asks for.
func bgMarker() int { return 6_000_000 + rand.IntN(1_000_000) }

func TestBackgroundCommandStartReadStop(t *testing.T) {
	files := wsTree(t, nil)
	bg := tools.NewBackground(0)
	defer bg.Close()
	opts := []tools.WorkspaceOption{tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg)}
	marker := bgMarker()
	command := fmt.Sprintf("echo ready; sleep 1; echo later; sleep %d", marker)
	res := wsRun(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q],"background":true}`, command), opts...)
	if res.IsError {
		t.Fatalf("start failed:\n%s", res.Content)
	}
	wsWant(t, res.Content, "$ "+command+"\nready\n", "[bg1 is running in the background")
	wsWantNot(t, res.Content, "\nlater\n")
	if bg.Len() != 1 {
		t.Errorf("Len() = %d after one start, want 1", bg.Len())
	}
	if !waitMarker(t, marker) {
		t.Fatal("the marked process never started")
	}
	// The next output comes a second later; read until it is there.
	var got string
	for range 100 {
		r := wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg1"}`, opts...)
		if r.IsError {
			t.Fatalf("read failed:\n%s", r.Content)
		}
		wsWant(t, r.Content, "bg1 is running")
		wsWantNot(t, r.Content, "\nready\n") // read once already
		if strings.Contains(r.Content, "\nlater\n") {
			got = r.Content
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got == "" {
		t.Fatal("the output printed after the start never showed")
	}
	r := wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg1"}`, opts...)
	wsWant(t, r.Content, "(no new output)", "bg1 is running")

	stop := wsRun(t, files, tools.NameStopCommand, `{"id":"bg1"}`, opts...)
	wsWant(t, stop.Content, "[stopped: the command and the processes it started were killed; bg1 is gone]")
	wsWantNot(t, stop.Content, "killed by a signal")
	wantNoMarker(t, marker, "a stopped background command")
	if bg.Len() != 0 {
		t.Errorf("Len() = %d after the stop, want 0", bg.Len())
	}
	again := wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg1"}`, opts...)
	if !again.IsError {
		t.Errorf("reading a stopped command succeeded:\n%s", again.Content)
	}
	wsWant(t, again.Content, `no background command "bg1"`)
}

func TestBackgroundCommandThatExits(t *testing.T) {
	files := wsTree(t, nil)
	bg := tools.NewBackground(0)
	defer bg.Close()
	opts := []tools.WorkspaceOption{tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg)}
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["echo done","exit 3"],"background":true}`, opts...)
	wsWant(t, res.Content, "$ echo done\ndone\n[exit code 0", "bg1 is gone]", "$ exit 3\n(no new output)\n[exit code 3", "bg2 is gone]")
	if !res.IsError {
		t.Error("a background command that failed at once did not fail the call")
	}
	if bg.Len() != 0 {
		t.Errorf("Len() = %d, want 0: exited commands read to their end leave the set", bg.Len())
	}
}

func TestBackgroundCommandsCap(t *testing.T) {
	files := wsTree(t, nil)
	bg := tools.NewBackground(2)
	opts := []tools.WorkspaceOption{tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg)}
	m1, m2, m3 := bgMarker(), bgMarker(), bgMarker()
	res := wsRun(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":["echo up; sleep %d","echo up; sleep %d","echo up; sleep %d"],"background":true}`, m1, m2, m3), opts...)
	if !res.IsError {
		t.Errorf("a start past the cap succeeded:\n%s", res.Content)
	}
	wsWant(t, res.Content, "bg1 is running", "bg2 is running",
		fmt.Sprintf("$ echo up; sleep %d\n[not started: 2 background commands running already (bg1, bg2), the most a session may have; stop one with stop_command first]", m3))
	if !waitMarker(t, m1) || !waitMarker(t, m2) {
		t.Fatal("the first two never started")
	}
	wantNoMarker(t, m3, "the command past the cap")
	// The session closing kills what runs.
	bg.Close()
	wantNoMarker(t, m1, "background command after Close")
	wantNoMarker(t, m2, "background command after Close")
	after := wsRun(t, files, tools.NameRunCommands, `{"commands":["true"],"background":true}`, opts...)
	wsWant(t, after.Content, "[not started: the session is closing]")
}

func TestBackgroundCommandsNeedASet(t *testing.T) {
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameRunCommands, `{"commands":["true"],"background":true}`, tools.CommandShell("/bin/sh"))
	if !res.IsError {
		t.Errorf("a background start without a set succeeded:\n%s", res.Content)
	}
	wsWant(t, res.Content, "background commands are not available")
}

func TestBackgroundDescribeSaysBackground(t *testing.T) {
	files := wsTree(t, nil)
	inv, err := wsBuild(t, files, tools.NameRunCommands, `{"commands":["npm run dev"],"background":true}`, tools.BackgroundCommands(tools.NewBackground(0)))
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Describe(t.Context())
	if d.Title != "Run in the background: npm run dev" || d.Command != "npm run dev" {
		t.Errorf("Describe() = %q, %q", d.Title, d.Command)
	}
}

// TestBackgroundForgetsOldExitedCommands: commands that exited unread
// wait for their last read, but at most twice the cap of them are kept.
func TestBackgroundForgetsOldExitedCommands(t *testing.T) {
	files := wsTree(t, nil)
	bg := tools.NewBackground(1)
	defer bg.Close()
	opts := []tools.WorkspaceOption{tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg)}
	for i := range 5 {
		// Its first line comes at once and the rest once the test has
		// made its flag file, after the start returned: so the start
		// returns before it exits, and it then exits unread. With a cap
		// of 1, the next start is refused until it has exited.
		command := fmt.Sprintf("echo hi; while [ ! -f go%d ]; do sleep 0.02; done; echo bye", i+1)
		started := false
		for range 200 { // a failure guard of 10 s
			res := wsRun(t, files, tools.NameRunCommands, fmt.Sprintf(`{"commands":[%q],"background":true}`, command), opts...)
			if !res.IsError {
				wsWant(t, res.Content, fmt.Sprintf("bg%d is running", i+1))
				started = true
				break
			}
			wsWant(t, res.Content, "1 background command running already")
			time.Sleep(20 * time.Millisecond)
		}
		if !started {
			t.Fatalf("start %d was refused for good", i+1)
		}
		if i < 4 { // the last one runs on, for the count below
			if err := os.WriteFile(filepath.Join(files.Root(), fmt.Sprintf("go%d", i+1)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := bg.Len(); n != 2 {
		t.Errorf("Len() = %d after 4 unread exits and a start with a cap of 1, want 2", n)
	}
	r := wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg4"}`, opts...)
	wsWant(t, r.Content, "\nbye\n", "bg4 is gone]")
	r = wsRun(t, files, tools.NameReadCommandOutput, `{"id":"bg1"}`, opts...)
	wsWant(t, r.Content, `no background command "bg1"; the session has bg5`)
}
