package checkpoint

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const processChildEnv = "CLINE_LS_CHECKPOINT_CHILD"

// TestCheckpointChild is not a test on its own: TestTwoProcessesShareAStore
// runs the test binary with processChildEnv set (workspace and state
// folders) to make it the other window's daemon.
func TestCheckpointChild(t *testing.T) {
	env := os.Getenv(processChildEnv)
	if env == "" {
		t.Skip("runs only as TestTwoProcessesShareAStore's child process")
	}
	dir, state, _ := strings.Cut(env, string(os.PathListSeparator))
	s, err := Open(Options{StateDir: state, Folders: []string{dir}, BlobGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range processTurns {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("child-%d.txt", i)), []byte(fmt.Sprintf("child %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Checkpoint(context.Background(), Request{SessionID: "child", Turn: i}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prune(); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("done")
}

const processTurns = 12

// Two daemons, each a process, checkpoint and collect one store at the
// same time, with no grace for young blobs: afterwards the index holds
// every checkpoint of both, and each one's blobs are there to diff and
// restore.
func TestTwoProcessesShareAStore(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "seed.txt"), []byte("seed\n"), 0o644)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCheckpointChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), processChildEnv+"="+dir+string(os.PathListSeparator)+state)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{StateDir: state, Folders: []string{dir}, BlobGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range processTurns {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("parent-%d.txt", i)), []byte(fmt.Sprintf("parent %d\n", i)), 0o644)
		if _, err := s.Checkpoint(ctx, Request{SessionID: "parent", Turn: i}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prune(); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	done := false
	for sc.Scan() {
		done = done || sc.Text() == "done"
	}
	if err := cmd.Wait(); err != nil || !done {
		t.Fatalf("child: %v (done %v)", err, done)
	}

	fresh, err := Open(Options{StateDir: state, Folders: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, session := range []string{"parent", "child"} {
		list := fresh.List(session)
		if len(list) != processTurns {
			t.Errorf("%s: %d checkpoints in the index, want %d", session, len(list), processTurns)
		}
		for _, c := range list {
			if _, err := fresh.Diff(ctx, RestoreRequest{SessionID: session, CheckpointID: c.ID}); err != nil {
				t.Errorf("%s checkpoint %d: %v", session, c.Turn, err)
			}
		}
	}
	child := fresh.List("child")
	if len(child) == 0 {
		return
	}
	p, err := fresh.Restore(ctx, RestoreRequest{SessionID: "child", CheckpointID: child[0].ID, Force: true})
	if err != nil || len(p.Failed) > 0 {
		t.Fatalf("restore of the child's first checkpoint: %v %+v", err, p)
	}
	if _, err := os.Stat(filepath.Join(dir, "child-1.txt")); err == nil {
		t.Error("child-1.txt is still there after going back to before it")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "child-0.txt")); string(got) != "child 0\n" {
		t.Errorf("child-0.txt = %q", got)
	}
}
