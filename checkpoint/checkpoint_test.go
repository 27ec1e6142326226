package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ws is a workspace folder and a store over it.
type ws struct {
	t     *testing.T
	dir   string
	state string
	now   time.Time
	opts  Options
	s     *Store
}

func newWS(t *testing.T, files map[string]string) *ws {
	t.Helper()
	w := &ws{t: t, dir: t.TempDir(), state: t.TempDir(), now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	for p, text := range files {
		w.write(p, text)
	}
	// No grace for unnamed blobs: these tests count what a prune removes
	// (TestPruneKeepsYoungBlobs has the grace).
	w.opts = Options{StateDir: w.state, Folders: []string{w.dir}, Now: func() time.Time { return w.now }, BlobGrace: -1}
	w.open()
	return w
}

func (w *ws) open() {
	w.t.Helper()
	s, err := Open(w.opts)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close() })
	w.s = s
}

func (w *ws) abs(p string) string { return filepath.Join(w.dir, filepath.FromSlash(p)) }

func (w *ws) write(p, text string) {
	w.t.Helper()
	abs := w.abs(p)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *ws) read(p string) (string, bool) {
	data, err := os.ReadFile(w.abs(p))
	if err != nil {
		return "", false
	}
	return string(data), true
}

func (w *ws) mode(p string) fs.FileMode {
	w.t.Helper()
	fi, err := os.Stat(w.abs(p))
	if err != nil {
		w.t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func (w *ws) checkpoint(session string, turn int, overlay map[string]string) Info {
	w.t.Helper()
	w.now = w.now.Add(time.Minute)
	info, err := w.s.Checkpoint(context.Background(), Request{SessionID: session, Turn: turn, Title: "turn", Overlay: overlay})
	if err != nil {
		w.t.Fatal(err)
	}
	return info
}

func (w *ws) restore(session, id string, open map[string]string, force bool) *Plan {
	w.t.Helper()
	p, err := w.s.Restore(context.Background(), RestoreRequest{SessionID: session, CheckpointID: id, Open: open, Force: force})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// blobCount counts the stored blobs (file contents and trees).
func (w *ws) blobCount() int {
	w.t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(w.s.dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}

func (w *ws) want(p, text string) {
	w.t.Helper()
	got, ok := w.read(p)
	if !ok {
		w.t.Errorf("%s is missing, want %q", p, text)
	} else if got != text {
		w.t.Errorf("%s = %q, want %q", p, got, text)
	}
}

func (w *ws) wantGone(p string) {
	w.t.Helper()
	if _, err := os.Lstat(w.abs(p)); err == nil {
		w.t.Errorf("%s exists, want it removed", p)
	}
}

func TestRestoreFiles(t *testing.T) {
	w := newWS(t, map[string]string{
		"a.txt":      "one\ntwo\n",
		"b.txt":      "bee\n",
		"run.sh":     "#!/bin/sh\necho hi\n",
		"sub/c.txt":  "sea\n",
		"secret.txt": "private\n",
	})
	os.Chmod(w.abs("run.sh"), 0o755)
	os.Chmod(w.abs("secret.txt"), 0o600)
	before := w.checkpoint("s1", 1, nil)

	// The agent's turn: an edit, a new file in a new folder, a deletion,
	// a mode change, and a file a command wrote.
	w.write("a.txt", "one\nTWO\n")
	w.write("new/deep/n.txt", "new\n")
	os.Remove(w.abs("b.txt"))
	os.Chmod(w.abs("run.sh"), 0o644)
	w.write("sub/c.txt", "sea, rewritten with another size\n")
	os.Chmod(w.abs("sub/c.txt"), 0o700)
	w.write("build.log", "made by a command\n")
	after := w.checkpoint("s1", 1, nil)
	wantFiles := []string{w.abs("a.txt"), w.abs("b.txt"), w.abs("build.log"), w.abs("new/deep/n.txt"), w.abs("run.sh"), w.abs("sub/c.txt")}
	if !slices.Equal(after.Files, wantFiles) {
		t.Errorf("Files = %v, want %v", after.Files, wantFiles)
	}

	plan := w.restore("s1", before.ID, nil, false)
	if len(plan.Conflicts) > 0 || len(plan.Failed) > 0 {
		t.Fatalf("conflicts %v, failures %v", plan.Conflicts, plan.Failed)
	}
	if !slices.Equal(plan.Restored(), wantFiles) {
		t.Errorf("Restored = %v, want %v", plan.Restored(), wantFiles)
	}
	if plan.Turn != 1 {
		t.Errorf("Turn = %d, want 1", plan.Turn)
	}
	w.want("a.txt", "one\ntwo\n")
	w.want("b.txt", "bee\n")
	w.want("sub/c.txt", "sea\n")
	w.want("secret.txt", "private\n")
	w.wantGone("new/deep/n.txt")
	w.wantGone("new")
	w.wantGone("build.log")
	for p, m := range map[string]fs.FileMode{"run.sh": 0o755, "secret.txt": 0o600, "sub/c.txt": 0o644, "b.txt": 0o644} {
		if got := w.mode(p); got != m {
			t.Errorf("mode of %s = %v, want %v", p, got, m)
		}
	}

	// And forward again to the agent's result.
	plan = w.restore("s1", after.ID, nil, false)
	if len(plan.Conflicts) > 0 || len(plan.Failed) > 0 {
		t.Fatalf("conflicts %v, failures %v", plan.Conflicts, plan.Failed)
	}
	w.want("new/deep/n.txt", "new\n")
	w.want("a.txt", "one\nTWO\n")
	w.wantGone("b.txt")
	if got := w.mode("sub/c.txt"); got != 0o700 {
		t.Errorf("mode of sub/c.txt = %v, want 0700", got)
	}
}

func TestRestoreOpenBuffer(t *testing.T) {
	w := newWS(t, map[string]string{"main.go": "package main\n", "other.go": "package other\n"})
	// The user has unsaved text in main.go when the turn starts.
	unsaved := "package main\n\n// draft\n"
	before := w.checkpoint("s1", 1, map[string]string{w.abs("main.go"): unsaved, w.abs("other.go"): "package other\n"})
	if n := len(w.s.records[0].Overlays); n != 1 {
		t.Errorf("%d overlays stored, want 1 (other.go equals its file)", n)
	}
	// The agent edits the buffer (not the disk) and creates an open file.
	agent := "package main\n\nfunc main() {}\n"
	w.write("added.go", "package added\n")
	open := map[string]string{w.abs("main.go"): agent, w.abs("other.go"): "package other\n", w.abs("added.go"): "package added\n"}
	w.checkpoint("s1", 1, open)
	fi, _ := os.Stat(w.abs("main.go"))

	plan := w.restore("s1", before.ID, open, false)
	if len(plan.Conflicts) > 0 || len(plan.Disk) > 0 {
		t.Fatalf("conflicts %v, disk %v: want buffer edits only", plan.Conflicts, plan.Disk)
	}
	want := []BufferEdit{
		{Path: w.abs("added.go"), Status: Deleted, Remove: true},
		{Path: w.abs("main.go"), Text: unsaved, Status: Modified},
	}
	if !slices.Equal(plan.Buffers, want) {
		t.Errorf("Buffers = %+v, want %+v", plan.Buffers, want)
	}
	w.want("main.go", "package main\n")
	w.want("added.go", "package added\n")
	fi2, _ := os.Stat(w.abs("main.go"))
	if !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("main.go was written on disk")
	}
}

func TestRestoreConflict(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	before := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "agent a\n")
	w.write("b.txt", "agent b\n")
	w.checkpoint("s1", 1, nil)
	// The user edits a.txt after the agent's last checkpoint, and
	// creates a file of their own.
	w.write("a.txt", "user a\n")
	w.write("mine.txt", "user's\n")

	plan := w.restore("s1", before.ID, nil, false)
	var got []string
	for _, c := range plan.Conflicts {
		got = append(got, c.Path)
		if c.Reason == "" {
			t.Errorf("conflict %s has no reason", c.Path)
		}
	}
	if want := []string{w.abs("a.txt"), w.abs("mine.txt")}; !slices.Equal(got, want) {
		t.Errorf("conflicts = %v, want %v", got, want)
	}
	w.want("a.txt", "user a\n")
	w.want("mine.txt", "user's\n")
	w.want("b.txt", "b\n")

	// The preview marks the conflicts too.
	diffs, err := w.s.Diff(context.Background(), RestoreRequest{SessionID: "s1", CheckpointID: before.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].Conflict == "" || diffs[1].Conflict == "" {
		t.Errorf("Diff = %+v, want two conflicts", diffs)
	}

	plan = w.restore("s1", before.ID, nil, true)
	if len(plan.Conflicts) > 0 {
		t.Errorf("forced restore has conflicts %v", plan.Conflicts)
	}
	w.want("a.txt", "a\n")
	w.wantGone("mine.txt")
}

func TestDiffPreview(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "one\ntwo\n", "gone.txt": "g\n"})
	before := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "one\n2\n")
	w.write("new.txt", "n\n")
	os.Remove(w.abs("gone.txt"))
	w.checkpoint("s1", 1, nil)

	diffs, err := w.s.Diff(context.Background(), RestoreRequest{SessionID: "s1", CheckpointID: before.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileDiff{}
	for _, d := range diffs {
		got[filepath.Base(d.Path)] = d
	}
	if d := got["a.txt"]; d.Status != Modified || !strings.Contains(d.Diff, "-2: 2") || !strings.Contains(d.Diff, "+2: two") {
		t.Errorf("a.txt: %+v", d)
	}
	if d := got["new.txt"]; d.Status != Deleted || !strings.Contains(d.Diff, "-1: n") {
		t.Errorf("new.txt: %+v", d)
	}
	if d := got["gone.txt"]; d.Status != Created || !strings.Contains(d.Diff, "+1: g") {
		t.Errorf("gone.txt: %+v", d)
	}
	if len(diffs) != 3 {
		t.Errorf("%d diffs, want 3", len(diffs))
	}
	// A preview changes nothing.
	w.want("a.txt", "one\n2\n")
}

func TestIgnoreRules(t *testing.T) {
	w := newWS(t, map[string]string{
		".gitignore":                "build/\n*.o\n",
		"src/main.c":                "int main;\n",
		"src/main.o":                "object",
		"build/out.bin":             "binary",
		"node_modules/lib/index.js": "module.exports = 1\n",
		".git/config":               "[core]\n",
	})
	w.checkpoint("s1", 1, nil)
	snap, err := w.s.readTrees(w.s.records[0].Roots)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range snap {
		got = append(got, strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(w.dir)+"/"))
	}
	slices.Sort(got)
	if want := []string{".gitignore", "src/main.c"}; !slices.Equal(got, want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	// A restore leaves what the checkpoint does not cover alone.
	w.write("node_modules/new/x.js", "x\n")
	w.write("build/new.bin", "x")
	w.restore("s1", w.s.records[0].ID, nil, true)
	w.want("node_modules/new/x.js", "x\n")
	w.want("build/new.bin", "x")
	w.want(".git/config", "[core]\n")
}

func TestDedup(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "same\n", "b/a.txt": "same\n", "c.txt": "c\n"})
	w.checkpoint("s1", 1, nil)
	n := w.blobCount()
	// Two contents (a.txt and b/a.txt share one) and two trees.
	if n != 4 {
		t.Errorf("%d blobs after the first checkpoint, want 4", n)
	}
	info := w.checkpoint("s1", 2, nil)
	w.checkpoint("s2", 1, nil)
	if got := w.blobCount(); got != n {
		t.Errorf("%d blobs after two checkpoints of an unchanged tree, want %d", got, n)
	}
	if len(info.Files) != 0 {
		t.Errorf("Files = %v for an unchanged tree", info.Files)
	}
}

func TestStatReuse(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	w.checkpoint("s1", 1, nil)
	w.write("b.txt", "changed\n")
	base, _ := w.s.latestDirs()
	_, sc, err := w.s.scan(context.Background(), false, base, w.s.records[0].Scan)
	if err != nil {
		t.Fatal(err)
	}
	if sc.read != 1 {
		t.Errorf("read %d files, want 1 (only b.txt changed)", sc.read)
	}
}

func TestLargeFileSkipped(t *testing.T) {
	w := newWS(t, map[string]string{"small.txt": "s\n", "big.bin": strings.Repeat("x", 100)})
	w.opts.MaxFileBytes = 50
	w.s.Close()
	w.open()
	before := w.checkpoint("s1", 1, nil)
	snap, _ := w.s.readTrees(w.s.records[0].Roots)
	if st := snap[w.abs("big.bin")]; st.Hash != "" || !strings.Contains(st.Skip, "larger than 50 bytes") {
		t.Errorf("big.bin recorded as %+v, want a note and no content", st)
	}
	w.write("big.bin", strings.Repeat("y", 100))
	w.write("small.txt", "changed\n")
	w.checkpoint("s1", 1, nil)
	plan := w.restore("s1", before.ID, nil, false)
	if !slices.Equal(plan.Skipped, []string{w.abs("big.bin")}) {
		t.Errorf("Skipped = %v", plan.Skipped)
	}
	w.want("big.bin", strings.Repeat("y", 100))
	w.want("small.txt", "s\n")
}

func TestReopen(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n"})
	before := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "agent\n")
	w.write("n.txt", "n\n")
	w.checkpoint("s1", 1, nil)
	w.checkpoint("other", 3, nil)
	w.s.Close()

	w.open() // a new Store, as after a daemon restart
	list := w.s.List("s1")
	if len(list) != 2 || list[0].ID != before.ID || list[0].Turn != 1 {
		t.Fatalf("List after reopen = %+v", list)
	}
	if got := w.s.List("other"); len(got) != 1 || got[0].Turn != 3 {
		t.Errorf("List(other) = %+v", got)
	}
	plan := w.restore("s1", before.ID, nil, false)
	if len(plan.Conflicts) > 0 || len(plan.Failed) > 0 {
		t.Fatalf("conflicts %v, failures %v", plan.Conflicts, plan.Failed)
	}
	w.want("a.txt", "a\n")
	w.wantGone("n.txt")
}

// TestUnknownCheckpoint: a session cannot restore another session's
// checkpoint, nor one that does not exist; the refusal is ErrNotFound and
// leaves the files as they are.
func TestUnknownCheckpoint(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n"})
	info := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "changed since\n")
	w.checkpoint("s1", 2, nil) // so that a restore of the first would undo the change without a conflict
	if _, err := w.s.Restore(context.Background(), RestoreRequest{SessionID: "s2", CheckpointID: info.ID}); !errors.Is(err, ErrNotFound) {
		t.Errorf("restore of another session's checkpoint: err = %v, want ErrNotFound", err)
	}
	w.want("a.txt", "changed since\n")
	if _, err := w.s.Restore(context.Background(), RestoreRequest{SessionID: "s1", CheckpointID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("restore of a checkpoint that does not exist: err = %v, want ErrNotFound", err)
	}
}

func TestPruneByAge(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "old content\n"})
	w.checkpoint("s1", 1, nil)
	w.write("a.txt", "new content\n")
	old := w.blobCount()
	w.now = w.now.Add(8 * 24 * time.Hour)
	w.checkpoint("s1", 2, nil)
	if got := w.s.List("s1"); len(got) != 1 || got[0].Turn != 2 {
		t.Fatalf("List = %+v, want only the new checkpoint", got)
	}
	// The old content and the old tree are gone, the new ones stored.
	if got := w.blobCount(); got != old {
		t.Errorf("%d blobs, want %d", got, old)
	}
	if _, err := os.Stat(w.s.blobs.path(hashOf([]byte("old content\n")))); err == nil {
		t.Error("the old content's blob is still stored")
	}
}

func TestPruneBySize(t *testing.T) {
	w := newWS(t, nil)
	w.opts.MaxStoreBytes = 3000
	w.s.Close()
	w.open()
	for i := range 5 {
		w.write("f.txt", strings.Repeat(string(rune('a'+i)), 1000))
		w.checkpoint("s1", i, nil)
	}
	st, err := w.s.Prune()
	if err != nil {
		t.Fatal(err)
	}
	list := w.s.List("s1")
	// Each checkpoint holds 1000 bytes of content and a small tree.
	if len(list) != 2 || list[1].Turn != 4 {
		t.Errorf("kept %+v, want the two newest", list)
	}
	if st.KeptBytes > 3000 {
		t.Errorf("kept %d bytes, cap 3000", st.KeptBytes)
	}
	// The newest stays even over the cap.
	w.opts.MaxStoreBytes = 10
	w.s.Close()
	w.open()
	if _, err := w.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if list := w.s.List("s1"); len(list) != 1 || list[0].Turn != 4 {
		t.Errorf("kept %+v, want the newest", list)
	}
	w.write("f.txt", "x")
	plan := w.restore("s1", w.s.List("s1")[0].ID, nil, true)
	if len(plan.Failed) > 0 {
		t.Fatalf("restore after pruning failed: %v", plan.Failed)
	}
	w.want("f.txt", strings.Repeat("e", 1000))
}

// storedPaths lists the files the newest checkpoint holds, relative.
func (w *ws) storedPaths() []string {
	w.t.Helper()
	snap, err := w.s.readTrees(w.s.records[len(w.s.records)-1].Roots)
	if err != nil {
		w.t.Fatal(err)
	}
	var got []string
	for p := range snap {
		got = append(got, strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(w.dir)+"/"))
	}
	slices.Sort(got)
	return got
}

func TestIgnoreFileChanges(t *testing.T) {
	w := newWS(t, map[string]string{"a.log": "l\n", "sub/b.log": "l\n", "sub/c.txt": "c\n"})
	w.checkpoint("s1", 1, nil)
	if got, want := w.storedPaths(), []string{"a.log", "sub/b.log", "sub/c.txt"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	// The scans keep the matcher and its answers: a new ignore file,
	// a changed one and a removed one must each be seen.
	w.write("sub/.gitignore", "*.log\n")
	w.checkpoint("s1", 2, nil)
	if got, want := w.storedPaths(), []string{"a.log", "sub/.gitignore", "sub/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("after a new .gitignore: stored %v, want %v", got, want)
	}
	w.write("sub/.gitignore", "*.txt\n")
	w.checkpoint("s1", 3, nil)
	if got, want := w.storedPaths(), []string{"a.log", "sub/.gitignore", "sub/b.log"}; !slices.Equal(got, want) {
		t.Errorf("after a changed .gitignore: stored %v, want %v", got, want)
	}
	os.Remove(w.abs("sub/.gitignore"))
	w.write(".clineignore", "sub/\n")
	w.checkpoint("s1", 4, nil)
	if got, want := w.storedPaths(), []string{".clineignore", "a.log"}; !slices.Equal(got, want) {
		t.Errorf("after a new .clineignore: stored %v, want %v", got, want)
	}
	os.Remove(w.abs(".clineignore"))
	w.checkpoint("s1", 5, nil)
	if got, want := w.storedPaths(), []string{"a.log", "sub/b.log", "sub/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("after removing the ignore files: stored %v, want %v", got, want)
	}
}

func TestCheckpointCap(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": strings.Repeat("a", 60), "b.txt": strings.Repeat("b", 60)})
	w.opts.MaxCheckpointBytes = 100
	w.s.Close()
	w.open()
	before := w.checkpoint("s1", 1, nil)
	snap, _ := w.s.readTrees(w.s.records[0].Roots)
	var stored, noted int
	for _, st := range snap {
		switch {
		case st.Hash != "":
			stored++
		case strings.Contains(st.Skip, "cap of 100 bytes"):
			noted++
		}
	}
	if stored != 1 || noted != 1 {
		t.Errorf("%d files stored, %d noted over the cap; want 1 and 1", stored, noted)
	}
	// A restore leaves the file it could not store alone.
	w.write("a.txt", "x")
	w.write("b.txt", "y")
	w.checkpoint("s1", 1, nil)
	plan := w.restore("s1", before.ID, nil, false)
	if len(plan.Skipped) != 1 || len(plan.Disk) != 1 {
		t.Errorf("plan = %+v, want one file restored and one skipped", plan)
	}
}

func TestPrime(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	if err := w.s.Prime(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	w.write("b.txt", "changed\n")
	_, sc, err := w.s.scan(context.Background(), false, w.s.trees, w.s.latestScan)
	if err != nil {
		t.Fatal(err)
	}
	if sc.read != 1 {
		t.Errorf("after Prime a scan read %d files, want 1", sc.read)
	}
	before := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "agent\n")
	w.checkpoint("s1", 1, nil)
	plan := w.restore("s1", before.ID, nil, false)
	if len(plan.Failed) > 0 || len(plan.Conflicts) > 0 {
		t.Fatalf("plan = %+v", plan)
	}
	w.want("a.txt", "a\n")
	w.want("c.txt", "c\n")
}

// TestSetLimits: limits changed on an open store (the settings changed)
// prune at its next checkpoint.
func TestSetLimits(t *testing.T) {
	w := newWS(t, nil)
	for i := range 4 {
		w.write("f.txt", strings.Repeat(string(rune('a'+i)), 1000))
		w.checkpoint("s1", i, nil)
	}
	if _, err := w.s.Prune(); err != nil {
		t.Fatal(err)
	}
	if n := len(w.s.List("s1")); n != 4 {
		t.Fatalf("%d checkpoints under the default limits, want 4", n)
	}
	// Nothing changed: the checkpoint writes no blob, and prunes only
	// because the limits did.
	w.s.SetLimits(0, 3000)
	w.checkpoint("s1", 4, nil)
	if list := w.s.List("s1"); len(list) != 3 || list[0].Turn != 2 {
		t.Errorf("kept %+v, want the three newest (two contents) under a 3000-byte cap", list)
	}
	w.now = w.now.Add(2 * time.Hour)
	w.s.SetLimits(time.Hour, 0)
	w.write("f.txt", "y")
	w.checkpoint("s1", 5, nil)
	if list := w.s.List("s1"); len(list) != 1 || list[0].Turn != 5 {
		t.Errorf("kept %+v, want only the checkpoint younger than an hour", list)
	}
}

// TestShortBlobReplaced: a blob a crash cut short is not trusted as the
// content it is named for: the next checkpoint holding that content
// writes it again, and a restore gets the whole file.
func TestShortBlobReplaced(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "the whole content\n"})
	h := hashOf([]byte("the whole content\n"))
	p := w.s.blobs.path(h)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("the wh"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := w.checkpoint("s1", 1, nil)
	w.write("a.txt", "changed\n")
	w.checkpoint("s1", 2, nil)
	plan := w.restore("s1", before.ID, nil, false)
	if len(plan.Failed) > 0 {
		t.Fatalf("restore failed: %+v", plan.Failed)
	}
	w.want("a.txt", "the whole content\n")
}

// TestFilesSinceSessionsPrevious: a checkpoint lists the files changed
// since its session's previous checkpoint even when another session's
// checkpoints came between (the trees compared are then not the latest
// ones), deletions and new folders included.
func TestFilesSinceSessionsPrevious(t *testing.T) {
	w := newWS(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n", "d/e/c.txt": "c\n"})
	w.checkpoint("s1", 1, nil)
	w.write("a.txt", "a2\n")
	w.checkpoint("s2", 1, nil)
	if err := os.RemoveAll(w.abs("d/e")); err != nil {
		t.Fatal(err)
	}
	w.write("n/new.txt", "n\n")
	w.checkpoint("s2", 2, nil)
	info := w.checkpoint("s1", 2, nil)
	var got []string
	for _, p := range info.Files {
		got = append(got, strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(w.dir)+"/"))
	}
	if want := []string{"a.txt", "d/e/c.txt", "n/new.txt"}; !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
}
