package workspace

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pathFixture builds a temporary tree with a primary folder ws, a second
// folder ws2, a sibling folder outside the workspace, a symlinked alias
// of ws, and symlinks of every awkward kind inside ws.
type pathFixture struct {
	tmp, ws, ws2, outside string
	roots                 *Roots
}

func newPathFixture(t testing.TB) *pathFixture {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &pathFixture{
		tmp:     tmp,
		ws:      filepath.Join(tmp, "ws"),
		ws2:     filepath.Join(tmp, "ws2"),
		outside: filepath.Join(tmp, "outside"),
	}
	for _, d := range []string{
		"ws/src/inner", "ws/docs", "ws2", "outside/sub",
	} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{
		"ws/src/main.go", "ws/src/inner/deep.txt", "ws/docs/ünïcödé 文件.md",
		"ws/file.txt", "ws2/other.txt", "outside/secret.txt",
	} {
		if err := os.WriteFile(filepath.Join(tmp, file), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/link_in":       "src",
		"ws/link_file_in":  "src/main.go",
		"ws/dangling_in":   "src/new.txt",
		"ws/link_out":      "../outside",
		"ws/link_out_file": "../outside/secret.txt",
		"ws/link_abs_out":  "/etc",
		"ws/dangling_out":  "../outside/newfile.txt",
		"ws/dangling_abs":  "/nonexistent-cline-ls-dir/file",
		"ws/loop_a":        "loop_b",
		"ws/loop_b":        "loop_a",
		"ws/chain1":        "chain2",
		"ws/chain2":        "../outside",
		"ws/link_proc":     "/proc/self/root",
		"ws/src/up":        "..",
		"ws/src/upup":      "../..",
		"ws/src/out_in":    "../../outside/../ws/file.txt", // leaves and comes back
		"alias":            "ws",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tmp, name)); err != nil {
			t.Fatal(err)
		}
	}
	f.roots, err = NewRoots(f.ws, f.ws2)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPathResolveHostile(t *testing.T) {
	f := newPathFixture(t)
	fileURI := func(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

	tests := []struct {
		name string
		path string
		want PathErrorKind
	}{
		{"empty", "", PathEmpty},
		{"nul", "a\x00b", PathNUL},
		{"nul at end", "src/main.go\x00.txt", PathNUL},
		{"invalid utf8", "\xff\xfe.txt", PathInvalidUTF8},
		{"newline", "a\nb", PathControl},
		{"escape sequence", "a\x1b[31m", PathControl},
		{"c1 control", "a\u0085b", PathControl},
		{"tilde", "~", PathExpansion},
		{"tilde home", "~/.ssh/id_rsa", PathExpansion},
		{"tilde user", "~root/.bashrc", PathExpansion},
		{"env var", "$HOME/.bashrc", PathExpansion},
		{"env var braces", "${HOME}/x", PathExpansion},
		{"drive backslash", `C:\Windows\system32`, PathWindows},
		{"drive slash", "c:/windows/win.ini", PathWindows},
		{"drive relative", "D:foo", PathWindows},
		{"unc", `\\server\share\x`, PathWindows},
		{"unc slashes", "//server/share", PathWindows},
		{"backslash dotdot", `src\..\..\outside`, PathWindows},
		{"overlong", strings.Repeat("a/", 2100), PathTooLong},
		{"overlong name", strings.Repeat("n", 300) + ".txt", PathTooLong},
		{"dotdot", "..", PathDotDot},
		{"dotdot sibling", "../outside/secret.txt", PathDotDot},
		{"dotdot nested", "src/../../outside/secret.txt", PathDotDot},
		{"dotdot deep", "./../../../../../../etc/passwd", PathDotDot},
		{"dotdot after symlink", "link_in/../../outside/secret.txt", PathDotDot},
		{"absolute elsewhere", "/etc/passwd", PathOutside},
		{"absolute sibling", filepath.Join(f.outside, "secret.txt"), PathOutside},
		{"absolute dotdot", f.ws + "/../outside/secret.txt", PathOutside},
		{"absolute parent", f.tmp, PathOutside},
		{"absolute prefix trick", f.ws + "-evil/x", PathOutside},
		{"uri elsewhere", "file:///etc/passwd", PathOutside},
		{"uri encoded dotdot", "file://" + f.ws + "/..%2F..%2Foutside/secret.txt", PathOutside},
		{"uri remote host", "file://evil.example/etc/passwd", PathNotFile},
		{"uri http", "https://example.com/x.go", PathNotFile},
		{"uri fragment", fileURI(filepath.Join(f.ws, "src/main.go")) + "#L10", PathNotFile},
		{"uri query", fileURI(filepath.Join(f.ws, "src/main.go")) + "?x=1", PathNotFile},
		{"uri opaque", "file:src/main.go", PathNotFile},
		{"uri nul", "file://" + f.ws + "/a%00b", PathNUL},
		{"uri tilde", "file:///~/x", PathOutside},
		{"uri windows drive", "file:///C:/Windows/win.ini", PathWindows},
		{"uri windows drive bar", "file:///c%7C/Windows/win.ini", PathWindows},
		{"uri windows drive as host", "file://C:/Windows/win.ini", PathWindows},
		{"uri windows drive opaque", "file:C:/Windows/win.ini", PathWindows},
		{"uri unc", "file:////server/share/x", PathWindows},
		{"uri empty", "file:", PathEmpty},
		{"uri bad escape", "file://%2Fetc/x", PathNotFile},
		{"uri other host", "file://server.example" + f.ws + "/file.txt", PathNotFile},
		{"untitled", "untitled:Untitled-1", PathNotFile},
		{"untitled slash", "untitled:/x.txt", PathNotFile},
		{"vscode remote", "vscode-remote://ssh-remote+host" + f.ws + "/file.txt", PathNotFile},
		{"http", "http://example.com/x.go", PathNotFile},
		{"scheme one slash", "https:/example.com/x", PathNotFile},
		{"scheme upper", "HTTP://example.com/x", PathNotFile},
		{"scheme plus", "git+ssh://host/repo", PathNotFile},
		{"scheme colon name", "notes:v2.txt", PathNotFile},
		{"symlinked dir out", "link_out/secret.txt", PathSymlinkEscape},
		{"symlinked dir itself", "link_out", PathSymlinkEscape},
		{"symlink final file", "link_out_file", PathSymlinkEscape},
		{"symlink absolute out", "link_abs_out/passwd", PathSymlinkEscape},
		{"dangling out", "dangling_out", PathSymlinkEscape},
		{"dangling absolute out", "dangling_abs", PathSymlinkEscape},
		{"create under symlinked dir", "link_out/newdir/new.txt", PathSymlinkEscape},
		{"two hop chain", "chain1/secret.txt", PathSymlinkEscape},
		{"link to grandparent", "src/upup/outside/secret.txt", PathSymlinkEscape},
		{"absolute through link", filepath.Join(f.ws, "link_out/sub"), PathSymlinkEscape},
		{"loop", "loop_a", PathSymlinkLoop},
		{"loop below", "loop_a/x", PathSymlinkLoop},
		{"proc self root", "/proc/self/root" + f.ws + "/file.txt", PathSystem},
		{"proc cwd", "/proc/self/cwd", PathSystem},
		{"link into proc", "link_proc/etc/passwd", PathSystem},
		{"dev", "/dev/null", PathSystem},
		{"sys", "/sys/kernel", PathSystem},
		{"file as folder", "file.txt/x", PathNotDir},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d hostile paths", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.roots.Resolve(tc.path)
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want refusal", tc.path, got)
			}
			if got != "" {
				t.Errorf("Resolve(%q) returned %q along with an error", tc.path, got)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve(%q) error %v is %T, want *PathError", tc.path, err, err)
			}
			if pe.Kind != tc.want {
				t.Errorf("Resolve(%q) kind = %d (%v), want %d", tc.path, pe.Kind, err, tc.want)
			}
			if pe.Path != tc.path {
				t.Errorf("PathError.Path = %q, want the path as given", pe.Path)
			}
			if pe.Reason == "" || !strings.Contains(err.Error(), pe.Reason) {
				t.Errorf("error %q lacks a reason", err)
			}
			if strings.Contains(err.Error(), f.outside) && !strings.Contains(tc.path, f.outside) {
				t.Errorf("error %q reveals where the path led", err)
			}
		})
	}
}

func TestPathResolveLegit(t *testing.T) {
	f := newPathFixture(t)
	ws := f.ws
	enc := (&url.URL{Scheme: "file", Path: filepath.Join(ws, "docs/ünïcödé 文件.md")}).String()
	tests := []struct {
		name, path, want string
	}{
		{"nested", "src/main.go", ws + "/src/main.go"},
		{"deeper", "src/inner/deep.txt", ws + "/src/inner/deep.txt"},
		{"dot segments inside", "./src/./inner/../main.go", ws + "/src/main.go"},
		{"dotdot that stays", "src/inner/../../file.txt", ws + "/file.txt"},
		{"root itself", ".", ws},
		{"trailing slash", "src/", ws + "/src"},
		{"unicode", "docs/ünïcödé 文件.md", ws + "/docs/ünïcödé 文件.md"},
		{"new file", "src/new.go", ws + "/src/new.go"},
		{"new nested dirs", "new/dir/tree/file.txt", ws + "/new/dir/tree/file.txt"},
		{"spaces", "dir with spaces/f.txt", ws + "/dir with spaces/f.txt"},
		{"dollar inside name", "Outer$Inner.class", ws + "/Outer$Inner.class"},
		{"lone dollar", "$", ws + "/$"},
		{"tilde inside name", "a~b/~c", ws + "/a~b/~c"},
		{"tilde after dot", "./~backup", ws + "/~backup"},
		{"colon in name", "./notes:v2.txt", ws + "/notes:v2.txt"},
		{"colon later", "notes/a:b.txt", ws + "/notes/a:b.txt"},
		{"colon after a digit", "2024:notes.txt", ws + "/2024:notes.txt"},
		{"colon after a dot", ".x:y", ws + "/.x:y"},
		{"uri one slash", "file:" + ws + "/file.txt", ws + "/file.txt"},
		{"uri percent-encoded", "file://" + ws + "/dir%20with%20spaces/f.txt", ws + "/dir with spaces/f.txt"},
		{"uri localhost upper", "file://LOCALHOST" + ws + "/file.txt", ws + "/file.txt"},
		{"symlinked dir inside", "link_in/main.go", ws + "/src/main.go"},
		{"symlinked file inside", "link_file_in", ws + "/src/main.go"},
		{"dangling link inside", "dangling_in", ws + "/src/new.txt"},
		{"link to parent inside", "src/up/file.txt", ws + "/file.txt"},
		{"link out and back", "src/out_in", ws + "/file.txt"},
		{"absolute inside", ws + "/src/main.go", ws + "/src/main.go"},
		{"absolute via alias", f.tmp + "/alias/src/main.go", ws + "/src/main.go"},
		{"absolute second folder", f.ws2 + "/other.txt", f.ws2 + "/other.txt"},
		{"dotdot into second folder", "../ws2/other.txt", f.ws2 + "/other.txt"},
		{"uri", "file://" + ws + "/src/main.go", ws + "/src/main.go"},
		{"uri localhost", "file://localhost" + ws + "/src/main.go", ws + "/src/main.go"},
		{"uri encoded unicode", enc, ws + "/docs/ünïcödé 文件.md"},
		{"uri upper scheme", "FILE://" + ws + "/file.txt", ws + "/file.txt"},
		{"new file under linked dir", "link_in/brand/new.txt", ws + "/src/brand/new.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.roots.Resolve(tc.path)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.path, got, tc.want)
			}
			if !f.roots.Contains(got) {
				t.Errorf("Resolve(%q) = %q is not inside the workspace", tc.path, got)
			}
		})
	}
}

func TestPathResolveIn(t *testing.T) {
	f := newPathFixture(t)
	base := filepath.Join(f.ws, "src")
	got, err := f.roots.ResolveIn(base, "inner/deep.txt")
	if err != nil || got != filepath.Join(base, "inner/deep.txt") {
		t.Errorf("ResolveIn(src, inner/deep.txt) = %q, %v", got, err)
	}
	got, err = f.roots.ResolveIn(base, "../file.txt")
	if err != nil || got != filepath.Join(f.ws, "file.txt") {
		t.Errorf("ResolveIn(src, ../file.txt) = %q, %v", got, err)
	}
	var pe *PathError
	if _, err := f.roots.ResolveIn(base, "../../outside/secret.txt"); !errors.As(err, &pe) || pe.Kind != PathDotDot {
		t.Errorf("ResolveIn escaping: %v, want PathDotDot", err)
	}
	if _, err := f.roots.ResolveIn(f.outside, "secret.txt"); err == nil {
		t.Error("ResolveIn with a base outside the workspace succeeded")
	}
	// A URI or an absolute path is not relative to the base: before
	// they were joined to it, "file:///ws/x" became the folder "file:".
	for given, want := range map[string]string{
		"file://" + f.ws + "/file.txt":            filepath.Join(f.ws, "file.txt"),
		"file://localhost" + f.ws2 + "/other.txt": filepath.Join(f.ws2, "other.txt"),
		"file:" + f.ws + "/new/x.txt":             filepath.Join(f.ws, "new/x.txt"),
		f.ws2 + "/other.txt":                      filepath.Join(f.ws2, "other.txt"),
		"notes/a:b.txt":                           filepath.Join(base, "notes/a:b.txt"),
	} {
		if got, err := f.roots.ResolveIn(base, given); err != nil || got != want {
			t.Errorf("ResolveIn(src, %q) = %q, %v; want %q", given, got, err, want)
		}
	}
	for _, given := range []string{"file:///etc/passwd", "untitled:Untitled-1", "vscode-remote://ssh-remote+h" + f.ws + "/file.txt", "http://example.com/x"} {
		if got, err := f.roots.ResolveIn(base, given); !errors.As(err, &pe) {
			t.Errorf("ResolveIn(src, %q) = %q, %v; want a refusal", given, got, err)
		} else if strings.Contains(got+err.Error(), base+"/") {
			t.Errorf("ResolveIn(src, %q): %v names a path below the base", given, err)
		}
	}
}

// TestPathDisplayResolvesBack: what Display shows the model resolves to
// the same file, a name that reads as a URI scheme included.
func TestPathDisplayResolvesBack(t *testing.T) {
	f := newPathFixture(t)
	for _, rel := range []string{"file.txt", "notes:v2.txt", "file:x", "untitled:Untitled-1", "src/a:b", "2024:x", "docs/ünïcödé 文件.md"} {
		abs := filepath.Join(f.ws, rel)
		d := f.roots.Display(abs)
		if got, err := f.roots.Resolve(d); err != nil || got != abs {
			t.Errorf("Display(%q) = %q, which resolves to %q, %v", abs, d, got, err)
		}
	}
}

func TestPathRelAndDisplay(t *testing.T) {
	f := newPathFixture(t)
	tests := []struct {
		abs, rel string
		ok       bool
		display  string
	}{
		{f.ws + "/src/main.go", "src/main.go", true, "src/main.go"},
		{f.ws, ".", true, "."},
		{f.ws2 + "/other.txt", "other.txt", true, f.ws2 + "/other.txt"},
		{f.outside + "/secret.txt", f.outside + "/secret.txt", false, f.outside + "/secret.txt"},
		{f.ws + "-evil/x", f.ws + "-evil/x", false, f.ws + "-evil/x"},
	}
	for _, tc := range tests {
		rel, ok := f.roots.Rel(tc.abs)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", tc.abs, rel, ok, tc.rel, tc.ok)
		}
		if d := f.roots.Display(tc.abs); d != tc.display {
			t.Errorf("Display(%q) = %q, want %q", tc.abs, d, tc.display)
		}
		// What Display shows must resolve back to the same file.
		if tc.ok {
			back, err := f.roots.Resolve(f.roots.Display(tc.abs))
			if err != nil || back != tc.abs {
				t.Errorf("Resolve(Display(%q)) = %q, %v", tc.abs, back, err)
			}
		}
	}
}

func TestPathNewRoots(t *testing.T) {
	tmp := t.TempDir()
	if _, err := NewRoots(); err == nil {
		t.Error("NewRoots() with no folder succeeded")
	}
	if _, err := NewRoots("relative/dir"); err == nil {
		t.Error("NewRoots with a relative folder succeeded")
	}
	if _, err := NewRoots(filepath.Join(tmp, "missing")); err == nil {
		t.Error("NewRoots with a missing folder succeeded")
	}
	file := filepath.Join(tmp, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRoots(file); err == nil {
		t.Error("NewRoots with a file succeeded")
	}
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(tmp, link); err != nil {
		t.Fatal(err)
	}
	r, err := NewRoots(link+"/", tmp)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(tmp)
	if got := r.Folders(); len(got) != 1 || got[0] != real || r.Primary() != real {
		t.Errorf("Folders() = %q, want the one real folder %q", got, real)
	}
}

// FuzzPathResolve checks the one promise of Resolve on arbitrary input:
// either a *PathError, or a clean absolute path whose real location is
// inside the workspace.
func FuzzPathResolve(f *testing.F) {
	for _, seed := range []string{
		"src/main.go", "../outside", "link_out/x", "/etc/passwd", "~", "a\x00b",
		"file:///etc/passwd", "link_in/../../x", "src/up/up/up", "chain1", `C:\x`,
		"dangling_out", "loop_a/b", "new/dir/f.txt", "link_proc/x", "%2e%2e/x",
	} {
		f.Add(seed)
	}
	fx := newPathFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := fx.roots.Resolve(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve(%q) error %v is %T, want *PathError", p, err, err)
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || !fx.roots.Contains(got) {
			t.Fatalf("Resolve(%q) = %q: not a clean path inside the workspace", p, got)
		}
		// Whatever part of it exists must really be inside.
		existing := got
		for {
			if _, err := os.Lstat(existing); err == nil {
				break
			}
			existing = filepath.Dir(existing)
		}
		real, err := filepath.EvalSymlinks(existing)
		if err == nil && !fx.roots.Contains(real) {
			t.Fatalf("Resolve(%q) = %q, which really is %q", p, got, real)
		}
	})
}
