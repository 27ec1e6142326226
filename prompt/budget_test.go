package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/prompt/instructions"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
)

// TestRequestBudget measures what the first act-mode request of a turn
// pays with the real built-in tools: system prompt, tool definitions and
// the turn's context block. It holds that to the budget of 12,000
// characters in a native format and 16,000 on the XML path, plus the
// text of the workspace's instruction files, measured here with a 2 KB
// AGENTS.md read by the real loader: everything the loader adds around
// a file (headings, the precedence line) counts against the budget.
func TestRequestBudget(t *testing.T) {
	dir := t.TempDir()
	rule := "- Run go vet and the package's tests before saying a change is done.\n"
	agents := "# Project rules\n\n" + strings.Repeat(rule, (2048-17)/len(rule))
	agents += strings.Repeat("x", 2047-len(agents)) + "\n"
	if err := os.WriteFile(filepath.Join(dir, instructions.AgentsFile), []byte(agents), 0o644); err != nil {
		t.Fatal(err)
	}
	set := instructions.NewLoader(instructions.Config{Folders: func() []string { return []string{dir} }, CWD: dir}).Load()
	if len(agents) != 2048 || !strings.Contains(set.Text, strings.TrimSpace(agents)) {
		t.Fatalf("the 2 KB AGENTS.md (%d bytes) is not in the instructions:\n%s", len(agents), set.Text)
	}
	env := prompt.Environment{
		Date: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Git: &prompt.GitState{Branch: "main", StatusKnown: true,
			Status: []string{" M rpc/server.go", " M rpc/sessions.go", "?? rpc/instructions.go"}},
		OpenBuffers: []string{"main.go", "rpc/server.go"},
	}
	block := len(prompt.TurnContext(env))

	preset, _ := tools.PresetFor(tools.ModeAct)
	for _, fam := range []toolspec.Family{toolspec.FamilyGeneric, toolspec.FamilyNextGen, toolspec.FamilyXS} {
		for _, format := range []string{toolspec.FormatAnthropic, toolspec.FormatOpenAI, toolspec.FormatGemini, toolspec.FormatXML} {
			ctx := tools.Context{Mode: tools.ModeAct, Family: fam, CWD: "/home/dev/project", OS: "linux",
				Shell: "/bin/bash", NativeTools: format != toolspec.FormatXML}
			enabled := builtinTools(t, preset, ctx)
			rendered, err := tools.Render(format, enabled, ctx)
			if err != nil {
				t.Fatal(err)
			}
			in := prompt.Input{Context: ctx}
			for _, tool := range enabled {
				in.Tools = append(in.Tools, tool.Spec().Name)
			}
			defs := len(rendered)
			if format == toolspec.FormatXML {
				in.ToolDocs = string(rendered)
				defs = 0 // the docs are in the system prompt
			}
			bare := len(prompt.SystemPrompt(in)) + defs + block
			in.Instructions = set.Text
			total := len(prompt.SystemPrompt(in)) + defs + block
			budget := 12000
			if format == toolspec.FormatXML {
				budget = 16000
			}
			t.Logf("%-8s %-9s first request %6d characters without instructions, %6d with the 2 KB AGENTS.md (%d tools, context block %d)",
				fam, format, bare, total, len(enabled), block)
			if total > budget+len(agents) {
				t.Errorf("%s %s: the act-mode first request is %d characters, over the budget of %d + %d for AGENTS.md",
					fam, format, total, budget, len(agents))
			}
		}
	}
}

// builtinTools returns the preset's built-in tools that ctx enables, in
// preset order, without implementations: enough to render them.
func builtinTools(t *testing.T, p tools.Preset, ctx tools.Context) []tools.Tool {
	var out []tools.Tool
	for _, name := range p.Tools {
		spec, ok := tools.BuiltinSpec(name)
		if !ok {
			continue
		}
		if spec.ContextRequirements != nil && !spec.ContextRequirements(ctx) {
			continue
		}
		tool, err := tools.NewTool(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool)
	}
	return out
}
