package rpc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestTwoURIsOneFile: a file open under two URIs (its own and a symbolic
// link's, or one with "./" in it) keeps its buffer findable when the other
// URI is closed; reads see the unsaved text and edits go to the buffer.
func TestTwoURIsOneFile(t *testing.T) {
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"real.txt": "on disk\n"}, nil, nil)
	root, _ = filepath.EvalSymlinks(root)
	if err := os.Symlink("real.txt", filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	realURI := workspace.PathToURI(filepath.Join(root, "real.txt"))
	linkURI := workspace.PathToURI(filepath.Join(root, "link.txt"))
	if err := ed.Open(ctx, realURI, "unsaved text\n"); err != nil {
		t.Fatal(err)
	}
	if err := ed.Open(ctx, linkURI, "unsaved text\n"); err != nil {
		t.Fatal(err)
	}
	if err := ed.CloseDoc(ctx, linkURI); err != nil {
		t.Fatal(err)
	}
	ed.Sync(ctx)
	r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "real.txt"}}})
	if !strings.Contains(r.Content, "unsaved text") {
		t.Errorf("read after closing the link's URI shows the disk, not the open buffer:\n%s", r.Content)
	}
	r = callTool(t, ctx, ed, "editor", map[string]any{"path": "real.txt", "old_text": "unsaved", "new_text": "edited"})
	if r.IsError {
		t.Fatalf("edit: %s", r.Content)
	}
	assertBuffer(t, ctx, ed, realURI, "edited text\n")
	if got := readFile(t, filepath.Join(root, "real.txt")); got != "on disk\n" {
		t.Errorf("the edit was written to disk under the open buffer: %q", got)
	}

	// A new file, open and unsaved, and the same file by a "./" URI.
	newURI := workspace.PathToURI(filepath.Join(root, "s.txt"))
	dotURI := "file://" + root + "/./s.txt"
	if err := ed.Open(ctx, newURI, "never saved\n"); err != nil {
		t.Fatal(err)
	}
	if err := ed.Open(ctx, dotURI, "never saved\n"); err != nil {
		t.Fatal(err)
	}
	if err := ed.CloseDoc(ctx, dotURI); err != nil {
		t.Fatal(err)
	}
	ed.Sync(ctx)
	r = callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "s.txt"}}})
	if !strings.Contains(r.Content, "never saved") {
		t.Errorf("read of s.txt after closing its ./ URI:\n%s", r.Content)
	}
}

// TestSpecialFilesAnswerAtOnce: edit and read tools on a FIFO answer with
// the reason instead of hanging in open(2).
func TestSpecialFilesAnswerAtOnce(t *testing.T) {
	ctx := testCtx(t) // a generous bound: a hang fails the test instead of stalling it
	ed, root := editWorkspace(t, nil, nil, nil)
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.go"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"editor", map[string]any{"path": "pipe.go", "old_text": "a", "new_text": "b"}},
		{"replace_in_file", map[string]any{"path": "pipe.go", "diff": "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n"}},
		{"write_to_file", map[string]any{"path": "pipe.go", "content": "x\n"}},
		{"read_files", map[string]any{"files": []any{map[string]any{"path": "pipe.go"}}}},
		{"list_code_definitions", map[string]any{"path": "pipe.go"}},
	}
	for _, c := range calls {
		r := callTool(t, ctx, ed, c.tool, c.args)
		if !strings.Contains(r.Content, "named pipe") {
			t.Errorf("%s on a FIFO: %s, want a refusal naming a named pipe", c.tool, r.Content)
		}
	}
}

// TestBroadWorkspaceRefused: the home folder itself is not opened as a
// workspace folder unless the settings allow it.
func TestBroadWorkspaceRefused(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	for _, allow := range []bool{false, true} {
		ctx := testCtx(t)
		ed := rpctest.New(t, rpc.Options{Getenv: getenv})
		opts := map[string]any{"allowBroadWorkspace": allow}
		if _, err := ed.Initialize(ctx, home, map[string]any{"initializationOptions": opts}); err != nil {
			t.Fatal(err)
		}
		ed.Sync(ctx)
		got := ed.Server.Folders().Paths()
		if allow && len(got) != 1 {
			t.Errorf("allowBroadWorkspace: folders %v, want the home folder", got)
		}
		if !allow {
			if len(got) != 0 {
				t.Errorf("home folder as workspace: folders %v, want none", got)
			}
			found := false
			for _, m := range ed.Messages("window/showMessage") {
				found = found || strings.Contains(string(m.Params), "allowBroadWorkspace")
			}
			if !found {
				t.Error("no window/showMessage says why the folder was refused")
			}
		}
	}
	if why := workspace.BroadFolder("/", ""); why == "" {
		t.Error("/ is not refused")
	}
}

// TestConcurrentToolEditsOfOneFile: 4 callers × 50 editor calls at once
// through the real server, each changing its own line of one file on disk;
// every call reported applied is in the file.
func TestConcurrentToolEditsOfOneFile(t *testing.T) {
	t.Parallel()
	const callers, perCaller = 4, 50
	var b strings.Builder
	for i := range callers * perCaller {
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("x", 1000))
	}
	// 200 edits, each with its checkpoint, under -race on a loaded
	// 2-core machine take longer than testCtx's 30 s guard: a longer guard,
	// still not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ed, root := editWorkspace(t, map[string]string{"big.txt": b.String()},
		map[string]any{"approvals": map[string]any{"edit": "allow"}, "stateDir": t.TempDir()}, nil)
	ids := make([]string, callers)
	for i := range ids {
		ids[i] = newSessionIn(t, ctx, ed, root) // each caller a session of its own
	}
	var wg sync.WaitGroup
	var applied atomic.Int64
	for n := range callers * perCaller {
		wg.Go(func() {
			var r toolResult
			err := ed.Call(ctx, "cline/callTool", map[string]any{"sessionId": ids[n/perCaller], "name": "editor",
				"arguments": map[string]any{"path": "big.txt", "old_text": fmt.Sprintf("line %03d ", n), "new_text": fmt.Sprintf("EDIT %03d ", n)}}, &r)
			if err != nil || r.IsError {
				t.Errorf("edit %d: %v %s", n, err, r.Content)
				return
			}
			applied.Add(1)
		})
	}
	wg.Wait()
	got := readFile(t, filepath.Join(root, "big.txt"))
	lost := 0
	for n := range callers * perCaller {
		if !strings.Contains(got, fmt.Sprintf("EDIT %03d ", n)) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d edits reported applied are missing from the file", lost, applied.Load())
	}
	t.Logf("concurrent tool edits through the server: %d × %d, %d applied, %d lost", callers, perCaller, applied.Load(), lost)
}
