package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/cline-ls/cline-ls/tools"
)

// toolsCmd prints the tools a mode enables, rendered as one provider
// receives them.
func toolsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", tools.FormatOpenAI, "`format`: anthropic, openai, gemini or xml")
	mode := fs.String("mode", "act", "session `mode`: plan, act, search, minimal or yolo")
	applyPatch := fs.Bool("apply-patch", false, "the variant for models trained on apply_patch")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	preset, ok := tools.PresetFor(*mode)
	if !ok {
		fmt.Fprintf(stderr, "cline-ls tools: unknown mode %q\n", *mode)
		return 2
	}
	r := tools.NewRegistry()
	if err := r.RegisterBuiltins(nil); err != nil {
		fmt.Fprintln(stderr, "cline-ls tools:", err)
		return 1
	}
	ctx := tools.Context{Mode: *mode, Family: tools.FamilyGeneric, CWD: ".", OS: runtime.GOOS, Shell: tools.ShellFor(""),
		NativeTools: *format != tools.FormatXML, ApplyPatch: *applyPatch}
	out, err := tools.Render(*format, r.Enabled(preset, ctx), ctx)
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls tools:", err)
		return 2
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
