package instructions

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/workspace"
)

// StatusTimeout bounds `git status`: past it the turn starts without the
// status rather than wait on a huge or slow repository.
const StatusTimeout = 2 * time.Second

// maxStatusBytes bounds what is read of `git status` output.
const maxStatusBytes = 64 << 10

// Probe gathers the facts of the moment for a turn's context block: the
// date from now, and for the repository holding dir its branch (read
// from .git/HEAD, no process needed) and a short status (`git status
// --porcelain`, when git is installed, within StatusTimeout). Outside a
// repository there is no Git part; nothing here fails a turn.
func Probe(ctx context.Context, dir string, now func() time.Time) prompt.Environment {
	var env prompt.Environment
	if now != nil {
		env.Date = now()
	}
	root, gitDir := findRepo(dir)
	if root == "" {
		return env
	}
	g := &prompt.GitState{Branch: headBranch(gitDir)}
	if g.Branch == "" {
		return env // not a repository we can read
	}
	if root != filepath.Clean(dir) {
		g.Root = root
	}
	g.Status, g.More, g.StatusKnown = gitStatus(ctx, root)
	env.Git = g
	return env
}

// findRepo returns the top folder of the repository holding dir and its
// git folder, following a .git file ("gitdir: …", as worktrees and
// submodules have); "" when dir is in none.
func findRepo(dir string) (root, gitDir string) {
	if dir == "" {
		return "", ""
	}
	for d := filepath.Clean(dir); ; {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return d, p
			}
			data, err := workspace.ReadTextFile(p, workspace.ReadOptions{MaxBytes: 4 << 10})
			if err == nil {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
					g := strings.TrimSpace(rest)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					return d, g
				}
			}
			return "", ""
		}
		up := filepath.Dir(d)
		if up == d {
			return "", ""
		}
		d = up
	}
}

// headBranch reads the checked-out branch from the git folder's HEAD: the
// branch name, "detached at <short commit>", or "" if HEAD is unreadable.
func headBranch(gitDir string) string {
	data, err := workspace.ReadTextFile(filepath.Join(gitDir, "HEAD"), workspace.ReadOptions{MaxBytes: 4 << 10})
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(data))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		return strings.TrimPrefix(ref, "refs/heads/")
	}
	if len(head) >= 7 && strings.Trim(head, "0123456789abcdef") == "" {
		return "detached at " + head[:7]
	}
	return ""
}

// gitStatus runs `git status --porcelain` in root and returns up to
// prompt.MaxStatusLines lines and how many more there were. ok is false
// when git is missing, fails or runs out of time.
func gitStatus(ctx context.Context, root string) (lines []string, more int, ok bool) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, StatusTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "-c", "core.quotepath=off", "status", "--porcelain")
	cmd.Dir = root
	cmd.Env = gitEnv()
	ownGroup(cmd)
	out := &cappedBuffer{max: maxStatusBytes}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	// Through proc like every child: git runs the repository's hooks and
	// fsmonitor, which must not read the daemon's keys either.
	g, err := proc.Start(cmd, true, nil)
	if err != nil {
		return nil, 0, false
	}
	err = cmd.Wait()
	g.Cleanup()
	if err != nil {
		return nil, 0, false
	}
	all := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(all) == 1 && all[0] == "" {
		return nil, 0, true
	}
	if out.cut {
		all = all[:len(all)-1] // the last line may be partial
	}
	n := min(len(all), prompt.MaxStatusLines)
	return all[:n], len(all) - n, true
}

// gitEnv is the environment git status runs in: only what git needs to
// find its configuration (the child never sees the daemon's provider
// keys), no prompts, and no optional locks, so it never competes with
// the user's own git commands for the index.
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"}
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "USER", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// cappedBuffer keeps the first max bytes written and drops the rest.
type cappedBuffer struct {
	bytes.Buffer
	max int
	cut bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.cut = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// Environment is the facts of the moment for a turn of the session the
// loader reads for: probed in its folder, or in the first workspace
// folder for a session with none.
func (l *Loader) Environment(ctx context.Context) prompt.Environment {
	dir := l.cfg.CWD
	if dir == "" {
		if f := l.cfg.Folders(); len(f) > 0 {
			dir = f[0]
		}
	}
	return Probe(ctx, dir, time.Now)
}
