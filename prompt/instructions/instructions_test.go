package instructions

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/cline-ls/cline-ls/workspace"
)

var _ Index = (*workspace.Watcher)(nil)

// unpack writes a txtar workspace from testdata into a new folder and
// returns its path, symlinks evaluated as the server's folders are.
func unpack(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		write(t, filepath.Join(dir, f.Name), string(f.Data))
	}
	return dir
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newLoader is a loader over one workspace folder with its ignore rules
// and no file index (sub-folders are walked).
func newLoader(dir string) *Loader {
	m := workspace.NewIgnoreMatcher([]string{dir})
	return NewLoader(Config{
		Folders: func() []string { return []string{dir} },
		CWD:     dir,
		Ignore:  func() Ignorer { return m },
	})
}

// inOrder checks that text holds each of want, in that order.
func inOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("text lacks %q after offset %d:\n%s", w, at, text)
		}
		at += i + len(w)
	}
}

func lacks(t *testing.T, text string, not ...string) {
	t.Helper()
	for _, n := range not {
		if strings.Contains(text, n) {
			t.Errorf("text has %q:\n%s", n, text)
		}
	}
}

func paths(set Set) []string {
	var out []string
	for _, f := range set.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestNestedPrecedence(t *testing.T) {
	dir := unpack(t, "nested.txtar")
	want := []string{"AGENTS.md", ".clinerules/01-style.md", ".clinerules/02-tests.md", "server/AGENTS.md", "server/http/CLAUDE.md"}
	check := func(t *testing.T, set Set) {
		inOrder(t, set.Text,
			"where two disagree, the later one wins, and a sub-folder's file applies only to the files under that folder",
			"## AGENTS.md\nRoot rule: use tabs.\n",
			"## .clinerules/01-style.md\nRule one: short names.\n",
			"## .clinerules/02-tests.md\nRule two: table tests.\n",
			"## server/AGENTS.md (applies to files under server/)\nServer rule: spaces, not tabs.\n",
			"## server/http/CLAUDE.md (applies to files under server/http/)\nHTTP rule: no globals.\n")
		lacks(t, set.Text, "must not be read", "Not a rule")
		got := paths(set)
		if len(got) != len(want) {
			t.Fatalf("files %v, want %v", got, want)
		}
		for i, w := range want {
			if got[i] != filepath.Join(dir, w) {
				t.Errorf("files[%d] = %s, want %s", i, got[i], filepath.Join(dir, w))
			}
			if set.Files[i].Truncated || set.Files[i].Chars == 0 {
				t.Errorf("files[%d] = %+v: want it whole", i, set.Files[i])
			}
		}
	}
	t.Run("walked", func(t *testing.T) { check(t, newLoader(dir).Load()) })
	t.Run("from the watcher's index", func(t *testing.T) {
		m := workspace.NewIgnoreMatcher([]string{dir})
		w, err := workspace.NewWatcher([]string{dir}, workspace.WatchOptions{Ignore: m})
		if err != nil {
			t.Skipf("no file watcher here (%v); the walked case covers discovery", err)
		}
		defer w.Close()
		l := NewLoader(Config{
			Folders: func() []string { return []string{dir} }, CWD: dir,
			Ignore: func() Ignorer { return m }, Index: func() Index { return w },
		})
		check(t, l.Load())
	})
}

func TestClineRulesFileAndFallback(t *testing.T) {
	dir := unpack(t, "fallback.txtar")
	set := newLoader(dir).Load()
	inOrder(t, set.Text, "## CLAUDE.md\nClaude rule.\n", "## .clinerules\nOne rules file.\n")
	lacks(t, set.Text, "Gemini rule")

	// Once AGENTS.md exists at that level, CLAUDE.md no longer counts.
	write(t, filepath.Join(dir, "AGENTS.md"), "Agents rule.\n")
	set = newLoader(dir).Load()
	inOrder(t, set.Text, "## AGENTS.md\nAgents rule.\n", "## .clinerules\n")
	lacks(t, set.Text, "Claude rule", "Gemini rule")

	// GEMINI.md alone counts too.
	os.Remove(filepath.Join(dir, "AGENTS.md"))
	os.Remove(filepath.Join(dir, "CLAUDE.md"))
	inOrder(t, newLoader(dir).Load().Text, "## GEMINI.md\nGemini rule.\n")
}

func TestUserRulesComeFirst(t *testing.T) {
	dir := unpack(t, "fallback.txtar")
	user := t.TempDir()
	write(t, filepath.Join(user, "AGENTS.md"), "User rule.\n")
	write(t, filepath.Join(user, "rules", "b.md"), "User rule b.\n")
	write(t, filepath.Join(user, "rules", "a.md"), "User rule a.\n")
	l := newLoader(dir)
	l.cfg.UserDir = user
	set := l.Load()
	inOrder(t, set.Text,
		"## "+filepath.Join(user, "AGENTS.md")+" (the user's own rules, for every project)\nUser rule.\n",
		"## "+filepath.Join(user, "rules", "a.md")+" (the user's own rules", "User rule a.",
		"User rule b.", "## CLAUDE.md\nClaude rule.\n")
}

func TestCaps(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	write(t, filepath.Join(dir, "AGENTS.md"), strings.Repeat(line, 200))                // 20,000 bytes: cut
	write(t, filepath.Join(dir, "a", "AGENTS.md"), strings.Repeat(line, 150))           // 15,000: fits whole
	write(t, filepath.Join(dir, "b", "AGENTS.md"), "b rule\n"+strings.Repeat(line, 50)) // cut by the total
	write(t, filepath.Join(dir, "c", "AGENTS.md"), "c rule\n"+line)                     // left out, named
	set := newLoader(dir).Load()

	total := 0
	for _, f := range set.Files {
		total += f.Chars
	}
	if total > MaxTotalBytes {
		t.Errorf("%d characters of file text, over the cap of %d", total, MaxTotalBytes)
	}
	want := []File{
		{Path: filepath.Join(dir, "AGENTS.md"), Chars: MaxFileBytes / 100 * 100, Truncated: true},
		{Path: filepath.Join(dir, "a", "AGENTS.md"), Chars: 15000},
		{Path: filepath.Join(dir, "b", "AGENTS.md"), Chars: 7 + (MaxTotalBytes-MaxFileBytes/100*100-15000-7)/100*100, Truncated: true},
		{Path: filepath.Join(dir, "c", "AGENTS.md"), Truncated: true},
	}
	if fmt.Sprint(set.Files) != fmt.Sprint(want) {
		t.Errorf("files\n%+v\nwant\n%+v", set.Files, want)
	}
	inOrder(t, set.Text,
		fmt.Sprintf("[cut here: the file has 20000 bytes and only the first %d fit; read the file for the rest]", MaxFileBytes/100*100),
		"## a/AGENTS.md", "## b/AGENTS.md", "b rule", "[cut here: the file has 5007 bytes",
		"Left out for size, read each before working in its folder:\n- c/AGENTS.md (applies to files under c/)\n")
	lacks(t, set.Text, "c rule")
}

func TestReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	agents := filepath.Join(dir, "AGENTS.md")
	write(t, agents, "first\n")
	l := newLoader(dir)
	inOrder(t, l.Load().Text, "first")

	write(t, agents, "second, longer\n")
	inOrder(t, l.Load().Text, "second, longer")

	// A new sub-folder file is found at the next load.
	write(t, filepath.Join(dir, "sub", "AGENTS.md"), "sub rule\n")
	inOrder(t, l.Load().Text, "second, longer", "sub rule")

	// Nothing is reread while sizes and times stay: the same bytes with
	// the old time back are not seen, which shows Load goes by the stat.
	fi, err := os.Stat(agents)
	if err != nil {
		t.Fatal(err)
	}
	write(t, agents, "SECOND, LONGER\n")
	if err := os.Chtimes(agents, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	inOrder(t, l.Load().Text, "second, longer")

	os.Remove(agents)
	set := l.Load()
	lacks(t, set.Text, "second")
	if len(set.Files) != 1 {
		t.Errorf("after the removal, files %v", paths(set))
	}
}

func TestClineIgnoredNotRead(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".clineignore"), "AGENTS.md\nsecret/\n")
	write(t, filepath.Join(dir, "AGENTS.md"), "hidden root rule\n")
	write(t, filepath.Join(dir, "secret", "AGENTS.md"), "hidden sub rule\n")
	write(t, filepath.Join(dir, ".clinerules"), "visible rule\n")
	set := newLoader(dir).Load()
	inOrder(t, set.Text, "visible rule")
	lacks(t, set.Text, "hidden")
	if len(set.Files) != 1 {
		t.Errorf("files %v, want only .clinerules", paths(set))
	}
}

func TestSymlinkOutOfTheWorkspaceRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "private.txt"), "private key\n")
	if err := os.Symlink(filepath.Join(outside, "private.txt"), filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	write(t, filepath.Join(dir, "CLAUDE.md"), "the real rules\n")
	if err := os.Symlink("CLAUDE.md", filepath.Join(dir, ".clinerules")); err != nil {
		t.Fatal(err)
	}
	set := newLoader(dir).Load()
	lacks(t, set.Text, "private key")
	inOrder(t, set.Text, "## .clinerules\nthe real rules") // a link inside the folder is fine
}

func TestFIFONamedAgentsDoesNotHang(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs on Windows")
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "AGENTS.md"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".clinerules"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub", "AGENTS.md"), "sub rule\n")
	done := make(chan Set, 1)
	go func() { done <- newLoader(dir).Load() }()
	select {
	case set := <-done:
		inOrder(t, set.Text, "sub rule")
		if len(set.Files) != 1 {
			t.Errorf("files %v, want only sub/AGENTS.md", paths(set))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Load blocked on a FIFO named AGENTS.md")
	}
}

func TestNoInstructions(t *testing.T) {
	set := newLoader(t.TempDir()).Load()
	if set.Text != "" || set.Files == nil || len(set.Files) != 0 {
		t.Errorf("empty workspace: %+v, want no text and an empty file list", set)
	}
}

func TestCutKeepsCharacters(t *testing.T) {
	text := strings.Repeat("é", 10) // 20 bytes, no line breaks
	for n := range 20 {
		got := cut(text, n)
		if len(got) > n || !strings.HasPrefix(text, got) || strings.ToValidUTF8(got, "?") != got {
			t.Errorf("cut(%d) = %q", n, got)
		}
	}
	if got := cut("aaaa\nbbbbbbbb", 10); got != "aaaa\nbbbbb" {
		t.Errorf("a line break too early is not used: %q", got)
	}
	if got := cut("aaaaaaaaa\nbbbb", 12); got != "aaaaaaaaa\n" {
		t.Errorf("a line break near the cap is used: %q", got)
	}
}
