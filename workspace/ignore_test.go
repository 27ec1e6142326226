package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ignoreWriteTree creates files (path → content) under root; a path
// ending in "/" is an empty folder.
func ignoreWriteTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIgnoreRealTree(t *testing.T) {
	ws := t.TempDir()
	ignoreWriteTree(t, ws, map[string]string{
		".gitignore": strings.Join([]string{
			"# a comment, and a blank line",
			"",
			"*.log",
			"!keep.log",
			"build/",
			"!build/keep.txt", // cannot re-include: build/ is excluded
			"/root-only.txt",
			"docs/**/*.tmp",
			"*.dat",
			"!data", // re-includes the folder, not what *.dat matches inside it
			"temp[0-9].txt",
			"[!k]eep.cfg",
			`\#hash.txt`,
			`\!bang.txt`,
			"space.txt   ",
			"out/**",
			"!out/kept.txt",
		}, "\n"),
		".clineignore":           "private/\n*.key\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/info/exclude":      "excluded-locally.txt\n",
		"keep.log":               "",
		"debug.log":              "",
		"build/out.bin":          "",
		"build/keep.txt":         "",
		"src/build":              "", // a file: "build/" only matches folders
		"root-only.txt":          "",
		"src/root-only.txt":      "",
		"docs/x.tmp":             "",
		"docs/a/b/x.tmp":         "",
		"x.tmp":                  "",
		"data/x.dat":             "",
		"data/y.txt":             "",
		"temp1.txt":              "",
		"tempx.txt":              "",
		"deep.cfg":               "",
		"keep.cfg":               "",
		"#hash.txt":              "",
		"!bang.txt":              "",
		"space.txt":              "",
		"out/a/b.txt":            "",
		"out/kept.txt":           "",
		"excluded-locally.txt":   "",
		"src/.gitignore":         "generated/\r\n!important.log\r\nlocal.txt\r\n!*.key\r\n",
		"src/important.log":      "",
		"src/other.log":          "",
		"src/local.txt":          "",
		"local.txt":              "",
		"src/generated/x.go":     "",
		"private/notes.md":       "",
		"src/id.key":             "",
		"src/sub/.clineignore":   "*.gen.go\n",
		"src/sub/a.gen.go":       "",
		"src/a.gen.go":           "",
		"node_modules/pkg/i.js":  "",
		"src/node_modules/m.js":  "",
		"src/main.go":            "",
		"src/sub/.git/config":    "",
		"docs/ünïcödé.md":        "",
		"a/deep/nest/ok/file.go": "",
	})
	m := NewIgnoreMatcher([]string{ws}, "node_modules/")

	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{".git", true, true},
		{".git/HEAD", false, true},
		{"src/sub/.git/config", false, true},
		{"debug.log", false, true},
		{"keep.log", false, false}, // negation
		{"build", true, true},      // dir-only
		{"build/out.bin", false, true},
		{"build/keep.txt", false, true}, // parent excluded wins over negation
		{"src/build", false, false},     // dir-only pattern, but a file
		{"root-only.txt", false, true},  // anchored
		{"src/root-only.txt", false, false},
		{"docs/x.tmp", false, true}, // "**" matches zero folders
		{"docs/a/b/x.tmp", false, true},
		{"x.tmp", false, false},
		{"data", true, false},
		{"data/x.dat", false, true},
		{"data/y.txt", false, false},
		{"temp1.txt", false, true},
		{"tempx.txt", false, false},
		{"deep.cfg", false, true},
		{"keep.cfg", false, false},
		{"#hash.txt", false, true},
		{"!bang.txt", false, true},
		{"space.txt", false, true},
		{"out", true, false}, // "out/**" is what is inside, not out itself
		{"out/a/b.txt", false, true},
		{"out/kept.txt", false, false},
		{"excluded-locally.txt", false, true},
		{"src/important.log", false, false}, // deeper negation overrides
		{"src/other.log", false, true},
		{"src/local.txt", false, true}, // nested, CRLF lines
		{"local.txt", false, false},    // nested rules stay in their folder
		{"src/generated", true, true},
		{"src/generated/x.go", false, true},
		{"private", true, true}, // .clineignore
		{"private/notes.md", false, true},
		{"src/id.key", false, true}, // a .gitignore negation cannot reveal it
		{"src/sub/a.gen.go", false, true},
		{"src/a.gen.go", false, false},
		{"node_modules", true, true}, // extra pattern
		{"node_modules/pkg/i.js", false, true},
		{"src/node_modules/m.js", false, true},
		{"src/main.go", false, false},
		{"src", true, false},
		{"docs/ünïcödé.md", false, false},
		{"a/deep/nest/ok/file.go", false, false},
		{"new/not/yet/created.log", false, true},
	}
	for _, tc := range tests {
		if got := m.Ignored(filepath.Join(ws, tc.path), tc.isDir); got != tc.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
	if m.Ignored(ws, true) {
		t.Error("the workspace folder itself is ignored")
	}
	if m.Ignored(filepath.Join(filepath.Dir(ws), "debug.log"), false) {
		t.Error("a path outside the workspace is ignored")
	}
}

func TestIgnoreInvalidate(t *testing.T) {
	ws := t.TempDir()
	ignoreWriteTree(t, ws, map[string]string{
		"README.md":      "",
		"src/x.gen":      "",
		"src/.gitignore": "*.gen\n",
	})
	m := NewIgnoreMatcher([]string{ws})
	readme := filepath.Join(ws, "README.md")
	gen := filepath.Join(ws, "src/x.gen")
	if m.Ignored(readme, false) || !m.Ignored(gen, false) {
		t.Fatal("unexpected initial state")
	}

	// A new root .gitignore, seen after Invalidate.
	ignoreWriteTree(t, ws, map[string]string{".gitignore": "*.md\n", ".clineignore": "src/\n"})
	m.Invalidate(ws)
	if !m.Ignored(readme, false) {
		t.Error("README.md not ignored after a new .gitignore and Invalidate")
	}
	if !m.Ignored(gen, false) || !m.Ignored(filepath.Join(ws, "src"), true) {
		t.Error("src not ignored after a new .clineignore and Invalidate")
	}

	// Removing the nested file and the root .clineignore.
	for _, name := range []string{"src/.gitignore", ".clineignore"} {
		if err := os.Remove(filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	m.Invalidate(filepath.Join(ws, "src"))
	m.Invalidate(ws)
	if m.Ignored(gen, false) {
		t.Error("src/x.gen still ignored after its rules were removed")
	}

	// Reload rereads everything.
	ignoreWriteTree(t, ws, map[string]string{".gitignore": "*.gen\n"})
	m.Reload()
	if !m.Ignored(gen, false) || m.Ignored(readme, false) {
		t.Error("Reload did not pick up the new rules")
	}
}

func TestIgnoreSymlinkedRulesNotFollowed(t *testing.T) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	ignoreWriteTree(t, tmp, map[string]string{"rules": "*.go\n", "ws/main.go": ""})
	if err := os.Symlink(filepath.Join(tmp, "rules"), filepath.Join(ws, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	m := NewIgnoreMatcher([]string{ws})
	if m.Ignored(filepath.Join(ws, "main.go"), false) {
		t.Error("rules were read through a symlinked .gitignore")
	}
}

func TestIgnorePatterns(t *testing.T) {
	tests := []struct {
		pattern, path string
		isDir         bool
		want          bool
	}{
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "x/a/b", false, false},
		{"**/foo", "foo", false, true},
		{"**/foo", "x/y/foo", false, true},
		{"**/foo/bar", "x/foo/bar", false, true},
		{"foo/**", "foo", true, false},
		{"foo/**", "foo/a/b", false, true},
		{"/a", "a", false, true},
		{"/a", "b/a", false, false},
		{"a/b", "x/a/b", false, false},
		{"doc/*.txt", "doc/x.txt", false, true},
		{"doc/*.txt", "doc/sub/x.txt", false, false},
		{"*.txt", "doc/sub/x.txt", false, true},
		{"dir/", "dir", false, false},
		{"dir/", "x/dir", true, true},
		{"**", "any/thing", false, true},
		{"a/**/**/b", "a/q/b", false, true},
		{"*", ".hidden", false, true},
		{"[", "[", false, false}, // malformed: matches nothing
		{`foo\ `, "foo ", false, true},
	}
	for _, tc := range tests {
		r, ok := parseIgnoreLine(tc.pattern)
		if !ok {
			t.Errorf("parseIgnoreLine(%q) rejected the pattern", tc.pattern)
			continue
		}
		if got := r.match(tc.path, tc.isDir); got != tc.want {
			t.Errorf("pattern %q on %q (dir=%v) = %v, want %v", tc.pattern, tc.path, tc.isDir, got, tc.want)
		}
	}
	for _, blank := range []string{"", "# comment", "   ", "/", "!", "\r"} {
		if _, ok := parseIgnoreLine(blank); ok {
			t.Errorf("parseIgnoreLine(%q) accepted a line with no pattern", blank)
		}
	}
}

func TestIgnoreFileNames(t *testing.T) {
	for name, want := range map[string]bool{".gitignore": true, ".clineignore": true, "gitignore": false, ".gitignore.bak": false} {
		if IsIgnoreFile(name) != want {
			t.Errorf("IsIgnoreFile(%q) = %v", name, !want)
		}
	}
}

// FuzzIgnorePattern feeds arbitrary lines and paths to the pattern parser
// and matcher, which must neither panic nor hang, and must agree with
// themselves: a negated pattern matches exactly where the plain one does.
func FuzzIgnorePattern(f *testing.F) {
	for _, seed := range [][2]string{
		{"*.log", "a/b.log"}, {"/a/**/b/", "a/x/b"}, {"!x", "x"}, {"[!a-", "b"},
		{`\#c`, "#c"}, {"**/**/**", "a/b/c/d"}, {"a/**", "a"}, {"\\", "x"},
	} {
		f.Add(seed[0], seed[1], false)
	}
	f.Fuzz(func(t *testing.T, line, path string, isDir bool) {
		r, ok := parseIgnoreLine(line)
		if !ok || strings.HasPrefix(line, "!") {
			return
		}
		neg, nok := parseIgnoreLine("!" + line)
		if !nok || !neg.negate {
			t.Fatalf("%q parses but !%q does not negate", line, line)
		}
		if r.match(path, isDir) != neg.match(path, isDir) {
			t.Fatalf("%q and its negation disagree on %q", line, path)
		}
	})
}

func TestClineIgnoredIsTheClineLayerOnly(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".clineignore"), []byte("private/\n*.pem\n!public.pem\n"), 0o644)
	m := NewIgnoreMatcher([]string{root})
	for p, want := range map[string]bool{
		"private/notes.md": true, "keys/server.pem": true, "public.pem": false,
		"build/out.bin": false, "src/main.go": false,
	} {
		if got := m.ClineIgnored(filepath.Join(root, p), false); got != want {
			t.Errorf("ClineIgnored(%s) = %v, want %v", p, got, want)
		}
	}
	if !m.Ignored(filepath.Join(root, "build/out.bin"), false) {
		t.Error("gitignored file not Ignored")
	}
}
