package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The state directory inside the workspace (XDG_STATE_HOME below the
// folder, a home folder opened as the workspace), named as it is or
// through a symbolic link: its index, blobs and session files are never
// in a checkpoint's files, a restore's changes or its conflicts.
func TestStateDirInsideWorkspaceIsNotCheckpointed(t *testing.T) {
	for _, viaLink := range []bool{false, true} {
		name := "direct"
		if viaLink {
			name = "through a link"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			state := filepath.Join(root, ".local", "state", "cline-ls")
			if err := os.MkdirAll(filepath.Join(state, "sessions"), 0o700); err != nil {
				t.Fatal(err)
			}
			given := state
			if viaLink {
				given = filepath.Join(t.TempDir(), "state-link")
				if err := os.Symlink(state, given); err != nil {
					t.Fatal(err)
				}
			}
			w := &ws{t: t, dir: root, state: given, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
			w.write("a.txt", "one\n")
			w.opts = Options{StateDir: given, Folders: []string{root}, Now: func() time.Time { return w.now }, BlobGrace: -1}
			w.open()
			session := filepath.Join(state, "sessions", "s1.jsonl")
			os.WriteFile(session, []byte("{}\n"), 0o600)
			first := w.checkpoint("s1", 1, map[string]string{session: "{\"open\":1}\n"})
			w.write("a.txt", "two\n")
			os.WriteFile(session, []byte("{}\n{}\n"), 0o600)
			second := w.checkpoint("s1", 2, nil)
			for _, f := range append(first.Files, second.Files...) {
				if strings.Contains(f, ".local") {
					t.Errorf("a checkpoint lists the daemon's own file %s", f)
				}
			}
			if len(second.Files) != 1 || filepath.Base(second.Files[0]) != "a.txt" {
				t.Errorf("second checkpoint's files %v, want only a.txt", second.Files)
			}
			os.WriteFile(session, []byte("{}\n{}\n{}\n"), 0o600)
			p := w.restore("s1", first.ID, nil, false)
			for _, d := range p.Disk {
				if strings.Contains(d.Path, ".local") {
					t.Errorf("the restore changed the daemon's own file %s", d.Path)
				}
			}
			for _, c := range append(p.Conflicts, p.Failed...) {
				t.Errorf("conflict %s: %s", c.Path, c.Reason)
			}
			w.want("a.txt", "one\n")
			if got, _ := os.ReadFile(session); string(got) != "{}\n{}\n{}\n" {
				t.Errorf("the session file was rewritten: %q", got)
			}
		})
	}
}

// A workspace folder that is the state directory (or inside it) has
// nothing of the user's: a checkpoint lists none of it.
func TestWorkspaceInsideStateDirIsNotCheckpointed(t *testing.T) {
	state := t.TempDir()
	root := filepath.Join(state, "checkpoints")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	w := &ws{t: t, dir: root, state: state, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	w.opts = Options{StateDir: state, Folders: []string{root}, Now: func() time.Time { return w.now }, BlobGrace: -1}
	w.open()
	w.checkpoint("s1", 1, nil)
	w.write("file-of-the-store", "x\n")
	if info := w.checkpoint("s1", 2, nil); len(info.Files) != 0 {
		t.Errorf("files %v, want none: they are the store's own", info.Files)
	}
}
