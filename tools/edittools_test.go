package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/toolspec"
)

// editHarness is a workspace in a temporary folder with the editing tools
// registered the way the daemon registers them.
type editHarness struct {
	t     testing.TB
	root  string
	files *toolstest.Files
	reg   *tools.Registry
	impls map[string]tools.BuildFunc
}

func newEditHarness(t testing.TB, opts ...tools.EditOption) *editHarness {
	t.Helper()
	files, err := toolstest.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &editHarness{t: t, root: files.Root(), files: files, reg: tools.NewRegistry(), impls: tools.EditTools(files, opts...)}
	if err := h.reg.RegisterBuiltins(h.impls); err != nil {
		t.Fatal(err)
	}
	return h
}

// args marshals a tool's arguments.
func (h *editHarness) args(v any) json.RawMessage {
	h.t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	raw, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return raw
}

// build validates and builds a call through the registry, as the
// session's scheduler does.
func (h *editHarness) build(name string, args any) (tools.Invocation, error) {
	h.t.Helper()
	tool, ok := h.reg.Lookup(name, toolspec.FamilyGeneric)
	if !ok {
		h.t.Fatalf("tool %s is not registered", name)
	}
	return tool.Build(h.args(args))
}

// run builds and executes a call; a build error or a daemon fault fails
// the test.
func (h *editHarness) run(name string, args any) tools.Result {
	h.t.Helper()
	inv, err := h.build(name, args)
	if err != nil {
		h.t.Fatalf("%s: Build: %v", name, err)
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil {
		h.t.Fatalf("%s: Execute: %v", name, err)
	}
	return res
}

// schedule runs a call as the session's scheduler does: Describe first,
// and Execute only when Describe does not refuse, the refusal being the
// result otherwise.
func (h *editHarness) schedule(name string, args any) tools.Result {
	h.t.Helper()
	inv, err := h.build(name, args)
	if err != nil {
		h.t.Fatalf("%s: Build: %v", name, err)
	}
	if d := inv.Describe(context.Background()); d.Refusal != "" {
		return tools.Result{Content: d.Refusal, IsError: true}
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil {
		h.t.Fatalf("%s: Execute: %v", name, err)
	}
	return res
}

func (h *editHarness) abs(rel string) string { return filepath.Join(h.root, filepath.FromSlash(rel)) }

func (h *editHarness) write(rel, text string) {
	h.t.Helper()
	p := h.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// disk returns a file's bytes on disk and whether it exists.
func (h *editHarness) disk(rel string) (string, bool) {
	h.t.Helper()
	data, err := os.ReadFile(h.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data), true
}

// tree maps every file below the root (slash paths) to its bytes.
func (h *editHarness) tree() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(h.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// TestEditToolsRegistered checks that EditTools supplies exactly the four
// editing tools and that each builds through the registry.
func TestEditToolsRegistered(t *testing.T) {
	h := newEditHarness(t)
	want := []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch, tools.NameWriteToFile}
	if len(h.impls) != len(want) {
		t.Errorf("EditTools has %d tools, want %d", len(h.impls), len(want))
	}
	for _, name := range want {
		if h.impls[name] == nil {
			t.Errorf("EditTools lacks %s", name)
		}
	}
	if _, err := h.build(tools.NameEditor, map[string]any{"path": "a.txt"}); err == nil {
		t.Error("editor built without new_text; the schema should have refused it")
	}
}

// editCases is every tool with arguments that change the line "two" of
// a.txt, whose text is text, to "TWO", for tests that must hold for all
// four tools.
func editCases(text string) []struct {
	tool string
	args map[string]any
} {
	return []struct {
		tool string
		args map[string]any
	}{
		{tools.NameEditor, map[string]any{"path": "a.txt", "old_text": "two", "new_text": "TWO"}},
		{tools.NameReplaceInFile, map[string]any{"path": "a.txt", "diff": "------- SEARCH\ntwo\n=======\nTWO\n+++++++ REPLACE\n"}},
		{tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n"}},
		{tools.NameWriteToFile, map[string]any{"path": "a.txt", "content": strings.Replace(text, "two", "TWO", 1)}},
	}
}

// TestEditRefusedDeliveryChangesNothing: when the editor refuses an edit,
// every tool reports that nothing was applied and the file and its buffer
// stay as they were.
func TestEditRefusedDeliveryChangesNothing(t *testing.T) {
	const text = "one\ntwo\n"
	for _, c := range editCases(text) {
		for _, open := range []bool{false, true} {
			name := c.tool + "/disk"
			if open {
				name = c.tool + "/buffer"
			}
			t.Run(name, func(t *testing.T) {
				h := newEditHarness(t)
				h.write("a.txt", text)
				abs := h.abs("a.txt")
				if open {
					h.files.OpenBuffer("a.txt", text)
				}
				h.files.Seen(abs, text)
				h.files.Reject = func(string) error { return errors.New("document version mismatch") }
				res := h.run(c.tool, c.args)
				if !res.IsError {
					t.Fatalf("refused edit reported success: %q", res.Content)
				}
				for _, want := range []string{"not applied", "a.txt", "document version mismatch"} {
					if !strings.Contains(res.Content, want) {
						t.Errorf("result does not mention %q: %q", want, res.Content)
					}
				}
				if !strings.Contains(res.Content, "unchanged") && !strings.Contains(res.Content, "No files were changed") {
					t.Errorf("result does not say the file is unchanged: %q", res.Content)
				}
				if len(res.Edits) != 0 {
					t.Errorf("refused edit lists edits: %+v", res.Edits)
				}
				if got, _ := h.disk("a.txt"); got != text {
					t.Errorf("disk changed to %q", got)
				}
				if open {
					if got, _ := h.files.Buffer(abs); got != text {
						t.Errorf("buffer changed to %q", got)
					}
				}
				if h.files.Applied != 0 {
					t.Errorf("Applied = %d", h.files.Applied)
				}
			})
		}
	}
}

// TestEditPreviewIsAppliedDiff: the diff shown for approval is exactly the
// unified diff of the change that is then applied, for every tool.
func TestEditPreviewIsAppliedDiff(t *testing.T) {
	const text = "zero\none\ntwo\nthree\n"
	for _, c := range editCases(text) {
		t.Run(c.tool, func(t *testing.T) {
			h := newEditHarness(t)
			h.write("a.txt", text)
			h.files.Seen(h.abs("a.txt"), text)
			inv, err := h.build(c.tool, c.args)
			if err != nil {
				t.Fatal(err)
			}
			d := inv.Describe(context.Background())
			if got, _ := h.disk("a.txt"); got != text {
				t.Fatalf("Describe changed the file to %q", got)
			}
			res, err := inv.Execute(context.Background(), tools.ExecOptions{})
			if err != nil || res.IsError {
				t.Fatalf("Execute: %v %q", err, res.Content)
			}
			if len(res.Edits) != 1 {
				t.Fatalf("%d edits, want 1", len(res.Edits))
			}
			e := res.Edits[0]
			if got, _ := h.disk("a.txt"); got != e.NewText || e.OldText != text {
				t.Fatalf("edit record old %q new %q, disk %q", e.OldText, e.NewText, got)
			}
			want := editUnified("a.txt", e.OldText, e.NewText)
			if d.Preview != want {
				t.Errorf("preview\n%s\nwant the applied diff\n%s", d.Preview, want)
			}
			if !strings.Contains(d.Preview, "+TWO\n") {
				t.Errorf("preview lacks the change: %q", d.Preview)
			}
			if d.Kind != tools.KindEdit || len(d.Locations) != 1 || d.Locations[0].Path != "a.txt" || d.Locations[0].Line != 3 {
				t.Errorf("description %+v, want an edit of a.txt at line 3", d)
			}
		})
	}
}

// TestEditOpenBufferLeavesDisk: an edit to an open buffer changes the
// buffer only; saving is the user's business.
func TestEditOpenBufferLeavesDisk(t *testing.T) {
	const saved = "one\ntwo\n"
	for _, c := range editCases(saved) {
		t.Run(c.tool, func(t *testing.T) {
			h := newEditHarness(t)
			h.write("a.txt", saved)
			abs := h.files.OpenBuffer("a.txt", saved)
			h.files.Seen(abs, saved)
			res := h.run(c.tool, c.args)
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			if got, _ := h.files.Buffer(abs); got != "one\nTWO\n" {
				t.Errorf("buffer %q, want the edit", got)
			}
			if got, _ := h.disk("a.txt"); got != saved {
				t.Errorf("disk changed to %q", got)
			}
		})
	}
}

// TestEditRefusedPaths: a path outside the workspace is an error result
// for every tool, nothing is written, and the call still describes itself.
func TestEditRefusedPaths(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../escape.txt", outside} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{tools.NameEditor, map[string]any{"path": p, "new_text": "x"}},
			{tools.NameReplaceInFile, map[string]any{"path": p, "diff": "------- SEARCH\nkeep\n=======\nx\n+++++++ REPLACE"}},
			{tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Update File: " + p + "\n@@\n-keep\n+x\n*** End Patch"}},
			{tools.NameWriteToFile, map[string]any{"path": p, "content": "x"}},
		} {
			t.Run(c.tool, func(t *testing.T) {
				h := newEditHarness(t)
				inv, err := h.build(c.tool, c.args)
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				if d := inv.Describe(context.Background()); d.Title == "" || d.Preview != "" {
					t.Errorf("description of a refused call: %+v", d)
				}
				res, err := inv.Execute(context.Background(), tools.ExecOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || !strings.Contains(res.Content, "invalid path") {
					t.Errorf("result %+v, want a path refusal", res)
				}
				if got := h.tree(); len(got) != 0 {
					t.Errorf("files written: %v", got)
				}
				if data, _ := os.ReadFile(outside); string(data) != "keep\n" {
					t.Errorf("file outside the workspace changed to %q", data)
				}
			})
		}
	}
}

// editUnified is the preview form of a change to an existing file: a
// unified diff with three lines of context, as diff -u gives.
func editUnified(path, oldText, newText string) string {
	return diff.Unified(path, oldText, newText, diff.DefaultContext)
}

// BenchmarkEditorTool5000LinesIn10MiB runs one editor call through the
// tool path, replacing 5,000 consecutive lines in the middle of a 10 MiB
// file: registry Build (schema check and decoding of the ~900 KB of
// arguments), then Execute (match, Files.Apply, compact diff), with the
// file open in the editor ("buffer") and closed ("disk", which adds the
// read and the atomic, fsynced write). "describe" is Build plus the
// approval preview, a unified diff of the change. Iterations alternate
// between two edits so that each finds its text.
func BenchmarkEditorTool5000LinesIn10MiB(b *testing.B) {
	line := func(i int) string {
		return fmt.Sprintf("\tvalue_%07d := compute(%d, \"the quick brown fox\") // jumps over the lazy dog", i, i*7)
	}
	var sb strings.Builder
	n := 0
	for sb.Len() < 10<<20 {
		sb.WriteString(line(n))
		sb.WriteByte('\n')
		n++
	}
	text := sb.String()
	var old strings.Builder
	for i := n / 2; i < n/2+5000; i++ {
		if i > n/2 {
			old.WriteByte('\n')
		}
		old.WriteString(line(i))
	}
	a := old.String()
	z := strings.ReplaceAll(a, "compute(", "evaluate(")
	for _, mode := range []string{"buffer", "disk", "describe"} {
		b.Run(mode, func(b *testing.B) {
			h := newEditHarness(b)
			h.write("big.go", text)
			abs := h.abs("big.go")
			if mode != "disk" {
				h.files.OpenBuffer("big.go", text)
			}
			args := [2]json.RawMessage{
				h.args(map[string]any{"path": "big.go", "old_text": a, "new_text": z}),
				h.args(map[string]any{"path": "big.go", "old_text": z, "new_text": a}),
			}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				inv, err := h.build(tools.NameEditor, args[i%2])
				if err != nil {
					b.Fatal(err)
				}
				if mode == "describe" {
					if d := inv.Describe(context.Background()); !strings.Contains(d.Preview, "+\tvalue_") {
						b.Fatalf("preview %.200q", d.Preview)
					}
					continue
				}
				res, err := inv.Execute(context.Background(), tools.ExecOptions{})
				if err != nil || res.IsError || res.Edits[0].Added != 5000 {
					b.Fatalf("%v %.200s", err, res.Content)
				}
				i++
			}
			if mode == "buffer" {
				if got, _ := h.files.Buffer(abs); len(got) != len(text)+5000*(i%2) {
					b.Fatalf("buffer has %d bytes after %d edits", len(got), i)
				}
			}
		})
	}
}

// editReplanFiles is a Files whose editor refuses the first delivery
// because its buffer moved on: the first plan sees stale texts, and Apply
// then plans again on the latest ones, as the daemon does (docs/DESIGN.md §3).
type editReplanFiles struct {
	*toolstest.Files
	stale map[string]string // absolute path → the text the first plan sees
	plans int
}

func (f *editReplanFiles) Apply(ctx context.Context, plan tools.Planner) ([]tools.Change, error) {
	f.plans++
	_, err := plan(ctx, func(abs string) (tools.FileText, error) {
		if t, ok := f.stale[abs]; ok {
			return tools.FileText{Text: t, Exists: true, Open: true, Version: 1}, nil
		}
		return f.Files.Read(ctx, abs)
	})
	if err != nil {
		return nil, err
	}
	f.plans++
	return f.Files.Apply(ctx, plan)
}

// TestEditReplanOnLatestText: when the buffer moved on between planning
// and delivery, each tool's second plan works on the latest text: the
// unique match is found again where it now is, and a whole-file write
// over text the model has not seen is refused.
func TestEditReplanOnLatestText(t *testing.T) {
	const stale = "one\ntwo\n"
	const latest = "typed by the user\none\ntwo\n"
	for _, c := range editCases(stale) {
		t.Run(c.tool, func(t *testing.T) {
			base := newEditHarness(t)
			abs := base.files.OpenBuffer("a.txt", latest)
			base.files.Seen(abs, stale)
			files := &editReplanFiles{Files: base.files, stale: map[string]string{abs: stale}}
			inv, err := tools.EditTools(files)[c.tool](base.args(c.args))
			if err != nil {
				t.Fatal(err)
			}
			res, err := inv.Execute(context.Background(), tools.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if files.plans != 2 {
				t.Errorf("planned %d times, want 2", files.plans)
			}
			got, _ := base.files.Buffer(abs)
			if c.tool == tools.NameWriteToFile {
				if !res.IsError || !strings.Contains(res.Content, "changed since you last read it") || got != latest {
					t.Errorf("write over the user's typing: result %q, buffer %q", res.Content, got)
				}
				return
			}
			if res.IsError || got != "typed by the user\none\nTWO\n" {
				t.Errorf("result %q, buffer %q", res.Content, got)
			}
			if len(res.Edits) != 1 || res.Edits[0].OldText != latest {
				t.Errorf("edit record %+v, want it against the latest text", res.Edits)
			}
		})
	}
}
