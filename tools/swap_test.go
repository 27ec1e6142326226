package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/toolspec"
)

// swapSecret is in every file outside the workspace; no result may show it.
const swapSecret = "SECRET-outside-the-workspace"

// swapFixture is a workspace and a folder beside it that the tools must
// never reach, with every built-in file tool registered over the
// workspace.
type swapFixture struct {
	t        *testing.T
	ws, out  string
	files    *toolstest.Files
	reg      *tools.Registry
	outsideB map[string]string // the outside tree before the call
}

func newSwapFixture(t *testing.T) *swapFixture {
	t.Helper()
	base := t.TempDir()
	f := &swapFixture{t: t, ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside")}
	for p, text := range map[string]string{
		"ws/f.txt":            "hello\nworld\n",
		"ws/d/inside.go":      "package d\n\nfunc Inside() {}\n",
		"outside/secret.txt":  swapSecret + "\nhello\nworld\n",
		"outside/secret.go":   "package s\n\n// " + swapSecret + "\nfunc SecretFunc() {}\n",
		"outside/sub/keep.md": swapSecret + "\n",
	} {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := toolstest.New(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	f.files = files
	f.reg = tools.NewRegistry()
	impls := tools.EditTools(files)
	for name, b := range tools.WorkspaceTools(files) {
		impls[name] = b
	}
	if err := f.reg.RegisterBuiltins(impls); err != nil {
		t.Fatal(err)
	}
	f.outsideB = f.outsideTree()
	return f
}

// outsideTree maps every entry outside the workspace to its content.
func (f *swapFixture) outsideTree() map[string]string {
	f.t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(f.out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.out, p)
		if d.IsDir() {
			tree[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		tree[rel] = string(data)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return tree
}

func (f *swapFixture) build(name string, args any) tools.Invocation {
	f.t.Helper()
	tool, ok := f.reg.Lookup(name, toolspec.FamilyGeneric)
	if !ok {
		f.t.Fatalf("tool %s is not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	inv, err := tool.Build(raw)
	if err != nil {
		f.t.Fatalf("%s: Build: %v", name, err)
	}
	return inv
}

// linkOut makes rel in the workspace a symbolic link to target outside
// (relative, as an attacker inside the workspace would write it),
// replacing what is there.
func (f *swapFixture) linkOut(rel, target string) {
	f.t.Helper()
	p := filepath.Join(f.ws, rel)
	if err := os.RemoveAll(p); err != nil {
		f.t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	to, err := filepath.Rel(filepath.Dir(p), filepath.Join(f.out, target))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(to, p); err != nil {
		f.t.Fatal(err)
	}
}

// TestSwapDuringApproval builds each file tool's call (as the scheduler
// does before asking for approval), then swaps a path of the call for a
// symbolic link out of the workspace (as a process could while the user
// reads the approval), then runs it: nothing outside may change, no
// result may show what is outside, and the call fails saying the link
// leads outside (so it met the swap, and failed for no other reason).
func TestSwapDuringApproval(t *testing.T) {
	patch := func(body string) map[string]any {
		return map[string]any{"input": "*** Begin Patch\n" + body + "*** End Patch"}
	}
	cases := []struct {
		name string
		tool string
		args any
		swap func(f *swapFixture)
	}{
		{"editor file", tools.NameEditor, map[string]any{"path": "f.txt", "old_text": "hello", "new_text": "bye"},
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"editor folder", tools.NameEditor, map[string]any{"path": "d/inside.go", "old_text": "Inside", "new_text": "Changed"},
			func(f *swapFixture) {
				os.WriteFile(filepath.Join(f.out, "inside.go"), []byte("package d\n\nfunc Inside() {}\n"), 0o644)
				f.outsideB = f.outsideTree()
				f.linkOut("d", ".")
			}},
		{"replace_in_file", tools.NameReplaceInFile,
			map[string]any{"path": "f.txt", "diff": "------- SEARCH\nhello\n=======\nbye\n+++++++ REPLACE\n"},
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"write_to_file new folder", tools.NameWriteToFile, map[string]any{"path": "newdir/n.txt", "content": "x\n"},
			func(f *swapFixture) { f.linkOut("newdir", "sub") }},
		{"write_to_file dangling link", tools.NameWriteToFile, map[string]any{"path": "new.txt", "content": "x\n"},
			func(f *swapFixture) { f.linkOut("new.txt", "created-outside.txt") }},
		{"apply_patch add", tools.NameApplyPatch, patch("*** Add File: addd/n.txt\n+fresh\n"),
			func(f *swapFixture) { f.linkOut("addd", "sub") }},
		{"apply_patch delete", tools.NameApplyPatch, patch("*** Delete File: f.txt\n"),
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"apply_patch update and move", tools.NameApplyPatch, patch("*** Update File: f.txt\n*** Move to: movdir/g.txt\n@@\n-hello\n+bye\n"),
			func(f *swapFixture) { f.linkOut("movdir", "sub") }},
		{"apply_patch update swapped", tools.NameApplyPatch, patch("*** Update File: f.txt\n@@\n-hello\n+bye\n"),
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"read_files", tools.NameReadFiles, map[string]any{"files": []map[string]any{{"path": "f.txt"}}},
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"read_files folder", tools.NameReadFiles, map[string]any{"files": []map[string]any{{"path": "d/inside.go"}}},
			func(f *swapFixture) {
				os.WriteFile(filepath.Join(f.out, "sub", "inside.go"), []byte(swapSecret), 0o644)
				f.outsideB = f.outsideTree()
				f.linkOut("d", "sub")
			}},
		{"list_files", tools.NameListFiles, map[string]any{"path": "d", "recursive": true},
			func(f *swapFixture) { f.linkOut("d", ".") }},
		{"search_codebase", tools.NameSearchCodebase, map[string]any{"queries": []string{"SECRET-outside"}, "path": "d"},
			func(f *swapFixture) { f.linkOut("d", ".") }},
		{"search_codebase file", tools.NameSearchCodebase, map[string]any{"queries": []string{"SECRET-outside"}, "path": "f.txt"},
			func(f *swapFixture) { f.linkOut("f.txt", "secret.txt") }},
		{"list_code_definitions", tools.NameListCodeDefinitions, map[string]any{"path": "d"},
			func(f *swapFixture) { f.linkOut("d", ".") }},
		{"list_code_definitions file", tools.NameListCodeDefinitions, map[string]any{"path": "d/inside.go"},
			func(f *swapFixture) { f.linkOut("d/inside.go", "secret.go") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSwapFixture(t)
			inv := f.build(c.tool, c.args)
			c.swap(f)
			res, err := inv.Execute(context.Background(), tools.ExecOptions{})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if strings.Contains(res.Content, swapSecret) || strings.Contains(res.Content, "keep.md") || strings.Contains(res.Content, "secret.") || strings.Contains(res.Content, "SecretFunc") {
				t.Errorf("the result shows what is outside the workspace:\n%s", res.Content)
			}
			after := f.outsideTree()
			for k, v := range f.outsideB {
				if after[k] != v {
					t.Errorf("outside %s changed: %q -> %q", k, v, after[k])
				}
			}
			for k := range after {
				if _, ok := f.outsideB[k]; !ok {
					t.Errorf("outside %s was created", k)
				}
			}
			t.Logf("result (isError %v): %s", res.IsError, res.Content)
			if !res.IsError || !strings.Contains(res.Content, "leads outside the workspace") && !strings.Contains(res.Content, "path escapes from parent") {
				t.Errorf("the call was not refused at the link: isError %v, %s", res.IsError, res.Content)
			}
		})
	}
}

// TestFlipDuringEditsAndReads: a process flips f.txt between a regular
// file and a link out of the workspace (one renameat2 exchange per flip)
// while 1,000 editor calls and 1,000 read_files calls run on it: the
// file outside never changes and no read shows it.
func TestFlipDuringEditsAndReads(t *testing.T) {
	f := newSwapFixture(t)
	target := filepath.Join(f.ws, "f.txt")
	other := filepath.Join(f.ws, ".other")
	relOut, _ := filepath.Rel(f.ws, filepath.Join(f.out, "secret.txt"))
	if err := os.Symlink(relOut, other); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, target, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not supported here: %v", err)
	}
	isLink := func(p string) bool { fi, err := os.Lstat(p); return err == nil && fi.Mode()&fs.ModeSymlink != 0 }
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			if unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, target, unix.RENAME_EXCHANGE) == nil {
				flips.Add(1)
			}
			if i%16 == 0 && !isLink(other) && !isLink(target) {
				// An edit replaced the link with a file: put it back.
				os.Remove(other)
				os.Symlink(relOut, other)
			}
			time.Sleep(20 * time.Microsecond)
		}
	})
	const rounds = 1000
	edits, reads, refused, escapes := 0, 0, 0, 0
	ctx := context.Background()
	for i := range rounds {
		// Every edit finds its text in the file outside too, so one that
		// escaped would change it.
		name, args := tools.NameEditor, map[string]any{"path": "f.txt", "old_text": "world", "new_text": fmt.Sprintf("world %d", i)}
		if i%2 == 1 {
			name, args = tools.NameWriteToFile, map[string]any{"path": "f.txt", "content": fmt.Sprintf("hello\nworld\nedit %d\n", i)}
		}
		inv := f.build(name, args)
		if res, err := inv.Execute(ctx, tools.ExecOptions{}); err == nil && !res.IsError {
			edits++
		}
		inv = f.build(tools.NameReadFiles, map[string]any{"files": []map[string]any{{"path": "f.txt"}}})
		res, err := inv.Execute(ctx, tools.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !res.IsError:
			reads++
		case strings.Contains(res.Content, "leads outside the workspace"):
			refused++
		}
		if strings.Contains(res.Content, swapSecret) {
			escapes++
		}
	}
	stop.Store(true)
	wg.Wait()
	after := f.outsideTree()
	for k, v := range f.outsideB {
		if after[k] != v {
			escapes++
			t.Errorf("outside %s changed: %q -> %q", k, v, after[k])
		}
	}
	if escapes > 0 {
		t.Errorf("%d escapes", escapes)
	}
	t.Logf("flip test (tools): %d edits and %d reads tried, %d edits and %d reads done, %d reads refused at the link, %d flips, %d escapes", rounds, rounds, edits, reads, refused, flips.Load(), escapes)
	// The race was run only if the reads met both states of the path.
	if flips.Load() == 0 || reads == 0 || refused == 0 {
		t.Errorf("the reads did not meet both states (%d flips, %d reads of the file, %d refused at the link): the test proved nothing", flips.Load(), reads, refused)
	}
}
