package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Every spelling of a path into the daemon's state directory inside the
// workspace is refused by Resolve: relative, absolute, with "..", as a
// file:// URI, through a symbolic link inside the workspace, and with
// the state directory itself named through a link.
func TestResolveRefusesOwnPaths(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".local", "state", "cline-ls")
	if err := os.MkdirAll(filepath.Join(state, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(state, "sessions", "s.jsonl"), []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o600)
	if err := os.Symlink(filepath.Join(".local", "state"), filepath.Join(root, "st")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "state-link")
	if err := os.Symlink(state, link); err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{state, link} {
		r, err := NewRoots(root)
		if err != nil {
			t.Fatal(err)
		}
		r.SetOwn(NewOwnPaths(given))
		for _, p := range []string{
			".local/state/cline-ls",
			".local/state/cline-ls/sessions/s.jsonl",
			"./.local/state/x/../cline-ls/sessions/s.jsonl",
			filepath.Join(state, "sessions", "s.jsonl"),
			PathToURI(filepath.Join(state, "sessions", "s.jsonl")),
			"st/cline-ls/sessions/s.jsonl",
			"st/cline-ls/new-file",
		} {
			var pe *PathError
			if abs, err := r.Resolve(p); !errors.As(err, &pe) {
				t.Errorf("own dir %s: Resolve(%q) = %q, %v; want a *PathError", given, p, abs, err)
			}
		}
		if _, err := r.Resolve("a.txt"); err != nil {
			t.Errorf("Resolve of a workspace file: %v", err)
		}
		if _, err := r.Resolve(".local/other"); err != nil {
			t.Errorf("Resolve beside the state directory: %v", err)
		}
		if !r.Own().Holds(filepath.Join(state, "x")) || r.Own().Holds(filepath.Join(root, ".local", "state")) {
			t.Errorf("Holds: wrong about the state directory's bounds")
		}
	}
	var none *OwnPaths
	if none.Holds(root) {
		t.Error("a nil OwnPaths holds something")
	}
}
