package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// TestSourceKey checks that the key follows what the build reads: a
// change to a linked package's source or embedded file, or to go.mod,
// changes it; a test file, a package the binary does not link, or a file
// outside any package does not.
func TestSourceKey(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "go is not on PATH: %v", err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.24\n")
	write("cmd/m/main.go", "package main\n\nimport (\n\t_ \"embed\"\n\n\t\"example.com/m/lib\"\n)\n\n//go:embed msg.txt\nvar msg string\n\nfunc main() { println(msg, lib.X) }\n")
	write("cmd/m/msg.txt", "hello\n")
	write("lib/lib.go", "package lib\n\nconst X = 1\n")
	write("other/other.go", "package other\n")
	key := func() string {
		t.Helper()
		k, mod, err := sourceKey(gobin, dir, "example.com/m/cmd/m")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := filepath.EvalSymlinks(mod); got != evalSymlinks(t, dir) {
			t.Fatalf("module folder %s, want %s", mod, dir)
		}
		return k
	}
	base := key()
	if again := key(); again != base {
		t.Fatalf("the key of unchanged sources changed: %s then %s", base, again)
	}
	for _, same := range []struct{ name, text string }{
		{"lib/lib_test.go", "package lib\n"},
		{"other/other.go", "package other\n\nconst Y = 2\n"},
		{"notes.txt", "not a source\n"},
	} {
		write(same.name, same.text)
		if k := key(); k != base {
			t.Errorf("writing %s, which the build does not read, changed the key", same.name)
		}
	}
	for _, change := range []struct{ name, text string }{
		{"cmd/m/msg.txt", "hello, world\n"},
		{"lib/lib.go", "package lib\n\nconst X = 2\n"},
		{"lib/more.go", "package lib\n\nconst Z = 3\n"},
		{"go.mod", "module example.com/m\n\ngo 1.25\n"},
	} {
		write(change.name, change.text)
		k := key()
		if k == base {
			t.Errorf("writing %s, which the build reads, left the key as it was", change.name)
		}
		base = k
	}
}

func evalSymlinks(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCLI builds the daemon (or finds it built) and runs it; a second
// call in the same process gives the same binary.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon; skipped in -short")
	}
	bin := CLI(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), "cline-ls") {
		t.Errorf("%s version said %q, want the daemon's name in it", bin, out)
	}
	if again := CLI(t); again != bin {
		t.Errorf("second call: %s, want %s", again, bin)
	}
}
