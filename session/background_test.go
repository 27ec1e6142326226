//go:build linux

package session

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc/proctest"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
)

// TestCloseKillsBackgroundCommands: the session owns its background
// commands; Close kills what still runs, and the tools that reach them
// are offered only while there are some.
func TestCloseKillsBackgroundCommands(t *testing.T) {
	files, err := toolstest.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bg := tools.NewBackground(0)
	policy, _ := NewPolicy(PolicyConfig{Approvals: Approvals{Execute: Allow}})
	s, err := New(Config{ID: "s1", Mode: "act", Impls: tools.WorkspaceTools(files, tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg)),
		Files: files, Policy: policy, Background: bg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := func() bool {
		_, enabled, _ := s.EnabledTools("act")
		_, ok := tools.Pick(enabled, tools.NameReadCommandOutput)
		return ok
	}
	if offered() {
		t.Error("read_command_output is offered before any background command")
	}
	marker := 9_000_000 + rand.IntN(500_000)
	r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(fmt.Sprintf(`{"commands":["echo up; sleep %d"],"background":true}`, marker)))
	if r.Result.IsError || !strings.Contains(r.Result.Content, "bg1 is running") {
		t.Fatalf("start: %+v", r.Result)
	}
	if !offered() {
		t.Error("read_command_output is not offered while a background command runs")
	}
	s.Close()
	for range 200 { // a failure guard of 10 s
		if len(proctest.MarkerPIDs(marker)) == 0 {
			if offered() {
				t.Error("read_command_output is still offered after Close")
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	left := proctest.MarkerPIDs(marker)
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Errorf("the background command %v outlived Close", left)
}
