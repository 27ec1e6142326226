package instructions

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/prompt"
)

var testNow = func() time.Time { return time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC) }

// gitRepo makes a repository with `git init` on branch trunk, or skips
// the test when git is not installed (fails it in CI).
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, "git is not installed: the status part of the context block is skipped then, and there is nothing to test it against")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"symbolic-ref", "HEAD", "refs/heads/trunk"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestProbeOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	if root, _ := findRepo(dir); root != "" {
		t.Skipf("the temporary folder is inside the repository %s", root)
	}
	env := Probe(context.Background(), dir, testNow)
	if !env.Date.Equal(testNow()) || env.Git != nil {
		t.Errorf("got %+v, want the date and no git part", env)
	}
	block := prompt.TurnContext(env)
	if block != "<environment_details>\nToday's date: Saturday, 14 March 2026\n</environment_details>\n\n" {
		t.Errorf("block %q", block)
	}
}

func TestProbeRepository(t *testing.T) {
	dir := gitRepo(t)
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	env := Probe(context.Background(), dir, testNow)
	g := env.Git
	if g == nil {
		t.Fatal("no git part in a repository")
	}
	if g.Branch != "trunk" || g.Root != "" || !g.StatusKnown || fmt.Sprint(g.Status) != "[?? a.txt]" || g.More != 0 {
		t.Errorf("got %+v, want branch trunk and one untracked file", g)
	}
	block := prompt.TurnContext(env)
	inOrder(t, block, "Today's date: Saturday, 14 March 2026\n", "Git branch: trunk\n", "Changed files (git status --porcelain):\n?? a.txt\n")

	// From a sub-folder the repository is found above it and named.
	write(t, filepath.Join(dir, "sub", "b.txt"), "b\n")
	env = Probe(context.Background(), filepath.Join(dir, "sub"), nil)
	if env.Git == nil || env.Git.Root != dir || !env.Date.IsZero() {
		t.Errorf("from a sub-folder: %+v", env.Git)
	}
}

func TestProbeStatusIsCapped(t *testing.T) {
	dir := gitRepo(t)
	for i := range prompt.MaxStatusLines + 5 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), "x\n")
	}
	g := Probe(context.Background(), dir, nil).Git
	if g == nil || len(g.Status) != prompt.MaxStatusLines || g.More != 5 {
		t.Fatalf("got %+v, want %d lines and 5 more", g, prompt.MaxStatusLines)
	}
	inOrder(t, prompt.TurnContext(prompt.Environment{Git: g}), "?? f00.txt\n", "?? f19.txt\n… and 5 more\n")
}

func TestProbeGitFileAndDetachedHead(t *testing.T) {
	// A worktree's .git is a file naming its git folder; HEAD there holds
	// a commit when detached. The branch needs no git process; the
	// status, which git cannot give for this made-up folder, is left out.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "gd", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	write(t, filepath.Join(dir, "work", ".git"), "gitdir: ../gd\n")
	env := Probe(context.Background(), filepath.Join(dir, "work"), nil)
	if env.Git == nil || env.Git.Branch != "detached at 0123456" || env.Git.StatusKnown {
		t.Fatalf("got %+v", env.Git)
	}
	if b := prompt.TurnContext(env); !strings.Contains(b, "Git branch: detached at 0123456\n") || strings.Contains(b, "clean") {
		t.Errorf("block %q", b)
	}
}

func TestProbeCancelled(t *testing.T) {
	dir := gitRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := Probe(ctx, dir, nil).Git
	if g == nil || g.Branch != "trunk" || g.StatusKnown {
		t.Errorf("a cancelled probe still reads the branch and leaves the status out: %+v", g)
	}
}

func TestLoaderEnvironmentProbesTheSessionsFolder(t *testing.T) {
	repo := gitRepo(t)
	other := t.TempDir()
	if root, _ := findRepo(other); root != "" {
		t.Skipf("the temporary folder is inside the repository %s", root)
	}
	// A session without a folder of its own probes the first workspace
	// folder; one with its own folder probes that.
	l := NewLoader(Config{Folders: func() []string { return []string{repo, other} }})
	if env := l.Environment(context.Background()); env.Git == nil || env.Git.Branch != "trunk" {
		t.Errorf("no folder of its own: %+v", env.Git)
	}
	l = NewLoader(Config{Folders: func() []string { return []string{repo} }, CWD: other})
	if env := l.Environment(context.Background()); env.Git != nil {
		t.Errorf("its own folder, outside the repository: %+v", env.Git)
	}
}
