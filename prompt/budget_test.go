package prompt

import (
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// TestRequestBudget measures what an act-mode request pays on every call
// with the real built-in tools, system prompt plus tool definitions, and
// holds it to DESIGN.md's budget: 12,000 characters in a native format,
// 16,000 on the XML path.
func TestRequestBudget(t *testing.T) {
	preset, _ := tools.PresetFor(tools.ModeAct)
	for _, fam := range families {
		for _, format := range []string{tools.FormatAnthropic, tools.FormatOpenAI, tools.FormatGemini, tools.FormatXML} {
			ctx := tools.Context{Mode: tools.ModeAct, Family: fam, CWD: "/home/dev/project", OS: "linux",
				Shell: "/bin/bash", NativeTools: format != tools.FormatXML}
			enabled := builtinTools(t, preset, ctx)
			rendered, err := tools.Render(format, enabled, ctx)
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Context: ctx}
			for _, tool := range enabled {
				in.Tools = append(in.Tools, tool.Spec().Name)
			}
			total := 0
			if format == tools.FormatXML {
				in.ToolDocs = string(rendered)
				total = len(SystemPrompt(in))
			} else {
				total = len(SystemPrompt(in)) + len(rendered)
			}
			budget := 12000
			if format == tools.FormatXML {
				budget = 16000
			}
			t.Logf("%-8s %-9s prompt+tools %6d characters (%d tools)", fam, format, total, len(enabled))
			if total > budget {
				t.Errorf("%s %s: act-mode request is %d characters, over the budget of %d", fam, format, total, budget)
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
