package prompt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var families = []toolspec.Family{toolspec.FamilyGeneric, toolspec.FamilyNextGen, toolspec.FamilyXS}

// stubDocs stands in for the rendered XML tool docs: the goldens are about
// the prompt around them, and the docs have tests of their own in tools.
const stubDocs = "## read_files\nRead files.\nUsage: <read_files><files>[{\"path\":\"…\"}]</files></read_files>\n"

// presetTools lists the tool names a mode's preset enables for a model not
// trained on apply_patch, as Registry.Enabled would.
func presetTools(t testing.TB, mode string) []string {
	p, ok := tools.PresetFor(mode)
	if !ok {
		t.Fatalf("no preset for mode %q", mode)
	}
	return slices.DeleteFunc(slices.Clone(p.Tools), func(n string) bool { return n == tools.NameApplyPatch })
}

func input(t testing.TB, fam toolspec.Family, mode string, native bool) Input {
	return Input{
		Context: tools.Context{
			Mode: mode, Family: fam, CWD: "/home/dev/project", OS: "linux", Shell: "/bin/bash", NativeTools: native,
		},
		Tools:    presetTools(t, mode),
		ToolDocs: stubDocs,
	}
}

func TestSystemPromptGolden(t *testing.T) {
	for _, fam := range families {
		for _, mode := range tools.Modes() {
			for _, native := range []bool{true, false} {
				path := "native"
				if !native {
					path = "xml"
				}
				name := fmt.Sprintf("%s_%s_%s", fam, mode, path)
				t.Run(name, func(t *testing.T) {
					got := SystemPrompt(input(t, fam, mode, native))
					golden := filepath.Join("testdata", "golden", name+".txt")
					if *update {
						if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(golden)
					if err != nil {
						t.Fatalf("%v (run go test ./prompt -update to create it)", err)
					}
					if got != string(want) {
						t.Errorf("prompt differs from %s (go test ./prompt -update rewrites it):\n%s", golden, got)
					}
				})
			}
		}
	}
}

// TestSystemPromptBudget keeps the act-mode prompt for a native-tool model
// within its share of the budget of docs/DESIGN.md §2: the tool
// definitions take the rest.
func TestSystemPromptBudget(t *testing.T) {
	const budget = 4000
	for _, fam := range families {
		in := input(t, fam, tools.ModeAct, true)
		if n := len(SystemPrompt(in)); n > budget {
			t.Errorf("%s act native prompt is %d characters, over %d", fam, n, budget)
		}
	}
}

func TestSystemPromptSections(t *testing.T) {
	tests := []struct {
		name        string
		fam         toolspec.Family
		mode        string
		native      bool
		tools       []string
		contains    []string
		notContains []string
	}{
		{
			name: "xml path carries the docs and the call format", mode: tools.ModeAct,
			tools:       presetTools(t, tools.ModeAct),
			contains:    []string{stubDocs, "<tool_name>", "# Editing files", "# Act mode", "Working directory: /w"},
			notContains: []string{"{{"},
		},
		{
			name: "native path leaves the docs out", mode: tools.ModeAct, native: true,
			tools:       presetTools(t, tools.ModeAct),
			notContains: []string{stubDocs, "<tool_name>", "# Tools"},
		},
		{
			name: "plan mode answers with plan_mode_respond and has no edit rules", mode: tools.ModePlan, native: true,
			tools:       presetTools(t, tools.ModePlan),
			contains:    []string{"plan_mode_respond", "commands that change nothing"},
			notContains: []string{"# Editing files", "old_text"},
		},
		{
			name: "yolo ends with submit_and_exit", mode: tools.ModeYolo, native: true,
			tools:       presetTools(t, tools.ModeYolo),
			contains:    []string{"submit_and_exit", "old_text"},
			notContains: []string{"ask_question"},
		},
		{
			name: "search mode names no absent tools", mode: tools.ModeSearch, native: true,
			tools:       presetTools(t, tools.ModeSearch),
			notContains: []string{"run_commands", "Commands run", "# Editing files", "update_plan", "ask_question"},
		},
		{
			name: "apply_patch rules replace the editor's", fam: toolspec.FamilyNextGen, mode: tools.ModeAct, native: true,
			tools:       []string{tools.NameReadFiles, tools.NameApplyPatch},
			contains:    []string{"apply_patch context"},
			notContains: []string{"old_text", "replace_in_file", "Verify with"},
		},
		{
			name: "unknown family falls back to generic", fam: "mystery", mode: tools.ModeAct, native: true,
			contains: []string{"Look before you act"},
		},
		{
			name: "xs is shortest", fam: toolspec.FamilyXS, mode: tools.ModeAct,
			tools:       presetTools(t, tools.ModeAct),
			contains:    []string{"One call per reply"},
			notContains: []string{"spawn_agent", "update_plan"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SystemPrompt(Input{
				Context:  tools.Context{Mode: tt.mode, Family: tt.fam, CWD: "/w", NativeTools: tt.native},
				Tools:    tt.tools,
				ToolDocs: stubDocs,
			})
			for _, s := range tt.contains {
				if !strings.Contains(got, s) {
					t.Errorf("prompt lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.notContains {
				if strings.Contains(got, s) {
					t.Errorf("prompt has %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestSystemPromptVariantsDiffer(t *testing.T) {
	sizes := map[toolspec.Family]int{}
	for _, fam := range families {
		sizes[fam] = len(SystemPrompt(input(t, fam, tools.ModeAct, true)))
	}
	if !(sizes[toolspec.FamilyXS] < sizes[toolspec.FamilyNextGen] && sizes[toolspec.FamilyNextGen] < sizes[toolspec.FamilyGeneric]) {
		t.Errorf("want xs < next-gen < generic, got sizes %v", sizes)
	}
}

func TestSystemPromptEnvironment(t *testing.T) {
	got := SystemPrompt(Input{
		Context:      tools.Context{Mode: tools.ModeAct, CWD: "/src/{{OS}}", NativeTools: true},
		Instructions: "  Use tabs. Leave {{CWD}} alone.\n\n",
	})
	for _, s := range []string{
		"Working directory: /src/{{OS}}\n",
		"# Instructions from the user and the workspace\nUse tabs. Leave {{CWD}} alone.\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("prompt lacks %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"OS:", "Shell:", "Open in the editor"} {
		if strings.Contains(got, s) {
			t.Errorf("prompt has %q:\n%s", s, got)
		}
	}
}

func BenchmarkBuildPrompt(b *testing.B) {
	for _, fam := range families {
		for _, native := range []bool{true, false} {
			name := fmt.Sprintf("%s/native=%v", fam, native)
			in := input(b, fam, tools.ModeAct, native)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					SystemPrompt(in)
				}
			})
		}
	}
}
