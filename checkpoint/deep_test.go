package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// deepTree makes depth nested folders d/d/d/... under root, with a file
// f.txt in each, each folder made from its parent's handle (a path from
// root would pass PATH_MAX long before 5,000 levels).
func deepTree(tb testing.TB, root string, depth int) {
	tb.Helper()
	dir, err := os.OpenRoot(root)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range depth {
		if err := dir.Mkdir("d", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := dir.WriteFile("f.txt", fmt.Appendf(nil, "level %d\n", i), 0o644); err != nil {
			tb.Fatal(err)
		}
		next, err := dir.OpenRoot("d")
		dir.Close()
		if err != nil {
			tb.Fatal(err)
		}
		dir = next
	}
	dir.Close()
}

// deepPath is the path below root of a name depth folders down.
func deepPath(depth int, name string) string {
	return strings.Repeat("d"+string(filepath.Separator), depth) + name
}

// TestCheckpointDeepTree: a checkpoint of 5,000 nested folders ends,
// stores the files of the folders above workspace.MaxWalkDepth, names
// the folder at that depth as not stored with a note for the user
// (once), and a restore leaves what is below it alone while it puts
// back what is above.
func TestCheckpointDeepTree(t *testing.T) {
	w := newWS(t, map[string]string{"top.txt": "top\n"})
	deepTree(t, w.dir, 5000)
	info := w.checkpoint("s", 1, nil)
	if !slices.ContainsFunc(info.Notes, func(n string) bool {
		return strings.Contains(n, fmt.Sprint(workspace.MaxWalkDepth, " levels"))
	}) {
		t.Fatalf("notes = %q, want the depth note", info.Notes)
	}
	snap, err := w.s.readTrees(w.s.records[len(w.s.records)-1].Roots)
	if err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(w.dir, deepPath(workspace.MaxWalkDepth-1, "f.txt"))
	if st, ok := snap[last]; !ok || st.Hash == "" {
		t.Errorf("the file %d folders down is not stored: %+v", workspace.MaxWalkDepth-1, st)
	}
	capped := filepath.Join(w.dir, deepPath(workspace.MaxWalkDepth-1, "d"))
	if st := snap[capped]; !st.Dir || st.Skip != tooDeepNote {
		t.Errorf("the folder %d down is %+v, want it named as not stored", workspace.MaxWalkDepth, st)
	}
	for p := range snap {
		if workspace.WalkDepth(w.dir, p) > workspace.MaxWalkDepth {
			t.Fatalf("%s is in the checkpoint", p)
		}
	}
	if again := w.checkpoint("s", 2, nil); len(again.Notes) != 0 {
		t.Errorf("the second checkpoint's notes = %q: the user was told already", again.Notes)
	}

	// Change a file above the cap and one below it; a restore puts the
	// first back and leaves the second (and its folders) alone.
	root, err := os.OpenRoot(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	above := filepath.ToSlash(deepPath(10, "f.txt"))
	below := filepath.ToSlash(deepPath(workspace.MaxWalkDepth+5, "f.txt"))
	write := func(p, text string) {
		t.Helper()
		// Through the root, component by component: the deep path is
		// longer than PATH_MAX.
		if err := root.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(above, "changed\n")
	write(below, "changed below\n")
	plan, err := w.s.Restore(context.Background(), RestoreRequest{SessionID: "s", CheckpointID: info.ID, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := root.ReadFile(above); string(data) != "level 10\n" {
		t.Errorf("%s = %q after the restore", above, data)
	}
	if data, _ := root.ReadFile(below); string(data) != "changed below\n" {
		t.Errorf("%s = %q after the restore, want it left alone", below, data)
	}
	if !slices.Contains(plan.Skipped, capped) {
		t.Errorf("skipped = %q, want the folder not entered", plan.Skipped)
	}
}
