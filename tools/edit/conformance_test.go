package edit

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
)

type editorCase struct {
	Name    string `json:"name"`
	Options struct {
		MaxDiffLines int `json:"maxDiffLines"`
	} `json:"options"`
	Original *string `json:"original"`
	Args     struct {
		OldText    *string `json:"old_text"`
		NewText    string  `json:"new_text"`
		InsertLine *int    `json:"insert_line"`
	} `json:"args"`
	ExpectedFile   string  `json:"expected_file"`
	ExpectedResult *string `json:"expected_result"`
	ExpectedError  *string `json:"expected_error"`
}

// TestClineEditorCases runs Cline's editor tool cases through EditFile, as
// the editor tool wrapper will.
func TestClineEditorCases(t *testing.T) {
	var data struct{ Cases []editorCase }
	shared.ReadJSON(t, "cline/cline_editor_cases.json", &data)
	if len(data.Cases) == 0 {
		t.Fatal("no editor cases in the data file")
	}
	const path = "src/notes.txt"
	for _, c := range data.Cases {
		t.Run(c.Name, func(t *testing.T) {
			req := EditorRequest{NewText: c.Args.NewText, InsertLine: c.Args.InsertLine}
			if c.Args.OldText != nil {
				req.OldText = *c.Args.OldText
			}
			current := ""
			if c.Original != nil {
				current = *c.Original
			}
			res, err := EditFile(path, current, c.Original != nil, req)
			if c.ExpectedError != nil {
				want := strings.ReplaceAll(*c.ExpectedError, "{path}", path)
				if err == nil {
					t.Fatalf("succeeded with %q, want error %q", res.Text, want)
				}
				if err.Error() != want {
					t.Errorf("error\n got %q\nwant %q", err.Error(), want)
				}
				if c.ExpectedFile != current {
					t.Fatalf("case expects the file to change on error; the data is inconsistent")
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if res.Text != c.ExpectedFile {
				t.Errorf("file\n got %q\nwant %q", res.Text, c.ExpectedFile)
			}
			if c.ExpectedResult != nil {
				want := strings.ReplaceAll(*c.ExpectedResult, "{path}", path)
				got := resultMessage(path, current, res, c.Options.MaxDiffLines)
				if got != want {
					t.Errorf("result\n got %q\nwant %q", got, want)
				}
			}
		})
	}
}

type replaceCase struct {
	Name        string  `json:"name"`
	Original    string  `json:"original"`
	Diff        string  `json:"diff"`
	Expected    *string `json:"expected"`
	ExpectError bool    `json:"expect_error"`
	IsFinal     bool    `json:"isFinal"`
}

// TestClineReplaceInFileCases runs Cline's SEARCH/REPLACE cases.
func TestClineReplaceInFileCases(t *testing.T) {
	var data struct{ Cases []replaceCase }
	shared.ReadJSON(t, "cline/cline_replace_in_file_cases.json", &data)
	if len(data.Cases) == 0 {
		t.Fatal("no replace_in_file cases in the data file")
	}
	for _, c := range data.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.IsFinal {
				t.Fatalf("case is for streaming (isFinal false); the engine only sees complete diffs")
			}
			res, err := ReplaceInFile("a.txt", c.Original, c.Diff)
			got := res.Text
			if c.ExpectError {
				if err == nil {
					t.Fatalf("succeeded with %q, want an error", got)
				}
				if got != "" {
					t.Errorf("returned text %q along with the error", got)
				}
				if !strings.Contains(err.Error(), "a.txt") || !strings.Contains(err.Error(), "not changed") {
					t.Errorf("error does not name the file or say nothing changed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if c.Expected == nil {
				t.Fatal("case has neither expected output nor expect_error")
			}
			if got != *c.Expected {
				t.Errorf("\n got %q\nwant %q", got, *c.Expected)
			}
		})
	}
}

// TestCodexScenariosJSON runs all Codex apply_patch scenarios from
// codex_scenarios.json against MemFS.
func TestCodexScenariosJSON(t *testing.T) {
	for _, c := range shared.CodexScenarios(t) {
		t.Run(c.Name, func(t *testing.T) {
			tree := MemFS(maps.Clone(c.Input))
			if tree == nil {
				tree = MemFS{}
			}
			runScenario(t, c, tree, func() map[string]string { return maps.Clone(tree) }, c.MustMention)
		})
	}
}

// TestCodexScenarioDirs runs the scenario folders (input/, patch.txt,
// expected/) against a real temporary directory, comparing file bytes.
func TestCodexScenarioDirs(t *testing.T) {
	for _, c := range shared.CodexScenarioDirs(t) {
		t.Run(c.Name, func(t *testing.T) {
			work := t.TempDir()
			for p, text := range c.Input {
				if err := (dirFS{work}).WriteFile(p, text); err != nil {
					t.Fatal(err)
				}
			}
			runScenario(t, c, dirFS{work}, func() map[string]string { return readTree(t, work) }, c.MustMention)
		})
	}
}

type fsWriter interface {
	FS
	Writer
}

func runScenario(t *testing.T, c shared.PatchCase, fsys fsWriter, tree func() map[string]string, mention string) {
	t.Helper()
	plan, err := PlanPatch(c.Patch, fsys)
	if err == nil {
		if err := Apply(plan, fsys); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	got := tree()
	if c.ExpectError {
		if err == nil {
			t.Errorf("patch succeeded, want an error")
		} else {
			if !strings.Contains(err.Error(), "No files were changed.") {
				t.Errorf("error does not say nothing changed: %v", err)
			}
			if mention != "" && !strings.Contains(err.Error(), mention) {
				t.Errorf("error does not name %s: %v", mention, err)
			}
		}
		if !maps.Equal(got, c.Input) {
			t.Errorf("a failed patch changed the tree:\n got %q\nwant %q", got, c.Input)
		}
	} else if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !maps.Equal(got, c.Expected) {
		t.Errorf("tree\n got %q\nwant %q", got, c.Expected)
	}
}

// readTree maps every file below root (slash paths) to its content; a
// missing root is an empty tree.
func readTree(t *testing.T, root string) map[string]string { return shared.ReadTree(t, root) }

// dirFS is FS and Writer over a real directory.
type dirFS struct{ root string }

func (d dirFS) file(p string) string { return filepath.Join(d.root, filepath.FromSlash(p)) }

func (d dirFS) ReadFile(p string) (string, error) {
	b, err := os.ReadFile(d.file(p))
	return string(b), err
}

func (d dirFS) WriteFile(p, text string) error {
	if err := os.MkdirAll(filepath.Dir(d.file(p)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(d.file(p), []byte(text), 0o644)
}

func (d dirFS) Remove(p string) error { return os.Remove(d.file(p)) }
