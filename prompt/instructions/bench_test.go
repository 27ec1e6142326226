package instructions

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// BenchmarkLoadUnchanged is what each turn pays when no instruction file
// changed: the stats of the candidates and a walk for sub-folder files
// (no watcher index), on the nested testdata workspace.
func BenchmarkLoadUnchanged(b *testing.B) {
	dir := unpack(b, "nested.txtar")
	l := newLoader(dir)
	l.Load()
	b.ReportAllocs()
	for b.Loop() {
		l.Load()
	}
}

// BenchmarkLoadUnchangedIndexed is the same with the watcher's index,
// whose generation has not moved: no walk.
func BenchmarkLoadUnchangedIndexed(b *testing.B) {
	dir := unpack(b, "nested.txtar")
	m := workspace.NewIgnoreMatcher([]string{dir})
	w, err := workspace.NewWatcher([]string{dir}, workspace.WatchOptions{Ignore: m})
	if err != nil {
		b.Skipf("no watcher: %v", err)
	}
	defer w.Close()
	l := NewLoader(Config{Folders: func() []string { return []string{dir} }, CWD: dir,
		Ignore: func() Ignorer { return m }, Index: func() Index { return w }})
	l.Load()
	b.ReportAllocs()
	for b.Loop() {
		l.Load()
	}
}

// BenchmarkProbe is the environment of one turn in a small repository:
// HEAD read directly, `git status --porcelain` run once.
func BenchmarkProbe(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	for _, name := range []string{"a.go", "b.go", filepath.Join("sub", "c.go")} {
		write(b, filepath.Join(dir, name), "package x\n")
	}
	for b.Loop() {
		if Probe(context.Background(), dir, nil).Git == nil {
			b.Fatal("no git state")
		}
	}
}
