//go:build unix

package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// TestEditTurnDeepTree: with 5,000 nested folders in the workspace and
// checkpoints on, an edit turn ends (the checkpoint before its first
// change used to wait behind the start-up scan, which walked the whole
// chain opening each file from the workspace folder), its edits are
// made, it has its checkpoints, and the user is told once that the
// folders past workspace.MaxWalkDepth are not in them.
func TestEditTurnDeepTree(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root, state := stateWorkspace(t), t.TempDir()
	dir, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		// Each level from its parent's handle: a path from root would
		// pass PATH_MAX long before the bottom.
		if err := dir.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := dir.WriteFile("f.txt", fmt.Appendf(nil, "level %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
		next, err := dir.OpenRoot("d")
		dir.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir = next
	}
	dir.Close()

	ed := stateEditor(t, root, state)
	id := editTurn(t, ctx, ed, root)
	if got := readFile(t, filepath.Join(root, "b.txt")); got != "BETA\n" {
		t.Errorf("b.txt = %q after the turn", got)
	}
	var list checkpointList
	if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Checkpoints) < 2 {
		t.Fatalf("checkpoints = %+v, want the one before the turn and those after its edits", list.Checkpoints)
	}
	note := fmt.Sprint(workspace.MaxWalkDepth, " levels below")
	if got := shown(ed, note); len(got) != 1 || !strings.Contains(got[0], "not entered") {
		t.Errorf("warnings %q, want one saying the folders past %d levels are not in the checkpoints", got, workspace.MaxWalkDepth)
	}
}
