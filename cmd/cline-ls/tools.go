package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
)

// toolsCmd prints the tools a mode enables: by default a list for people,
// grouped by what the tools do; with --json (or --format) rendered as one
// provider receives them.
func toolsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the tools as a provider receives them (see --format)")
	format := fs.String("format", toolspec.FormatOpenAI, "`format` of --json: anthropic, openai, gemini or xml")
	mode := fs.String("mode", "act", "session `mode`: plan, act, search, minimal or yolo")
	applyPatch := fs.Bool("apply-patch", false, "the variant for models trained on apply_patch")
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	fs.Visit(func(f *flag.Flag) { *asJSON = *asJSON || f.Name == "format" })
	preset, ok := tools.PresetFor(*mode)
	if !ok {
		fmt.Fprintf(stderr, "cline-ls tools: --mode must be one of %s, got %q\n", strings.Join(tools.Modes(), ", "), *mode)
		return 2
	}
	r := tools.NewRegistry()
	if err := r.RegisterBuiltins(nil); err != nil {
		fmt.Fprintln(stderr, "cline-ls tools:", err)
		return 1
	}
	if !*asJSON {
		*format = toolspec.FormatOpenAI // the list reads names and filled-in descriptions from it
	}
	ctx := tools.Context{Mode: *mode, Family: toolspec.FamilyGeneric, CWD: ".", OS: runtime.GOOS, Shell: tools.ShellFor(""),
		NativeTools: *format != toolspec.FormatXML, ApplyPatch: *applyPatch}
	enabled := r.Enabled(preset, ctx)
	out, err := tools.Render(*format, enabled, ctx)
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls tools:", err)
		return 2
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	if err := printToolList(stdout, *mode, enabled, out); err != nil {
		fmt.Fprintln(stderr, "cline-ls tools:", err)
		return 1
	}
	return 0
}

// toolGroups orders the list's groups and names them, by tool kind.
var toolGroups = []struct {
	title string
	kinds []tools.Kind
}{
	{"Read", []tools.Kind{tools.KindRead}},
	{"Search", []tools.Kind{tools.KindSearch}},
	{"Edit", []tools.Kind{tools.KindEdit, tools.KindDelete, tools.KindMove}},
	{"Run", []tools.Kind{tools.KindExecute}},
	{"Web", []tools.Kind{tools.KindFetch}},
	{"Talk, plan and delegate", []tools.Kind{tools.KindThink, tools.KindSwitchMode, tools.KindOther, ""}},
}

// printToolList prints each tool's name and the first sentence of its
// description, grouped. rendered is enabled in the OpenAI format, where
// the descriptions have their placeholders filled.
func printToolList(w io.Writer, mode string, enabled []tools.Tool, rendered []byte) error {
	var defs []struct {
		Function struct{ Name, Description string }
	}
	if err := json.Unmarshal(rendered, &defs); err != nil {
		return err
	}
	if len(defs) != len(enabled) {
		return fmt.Errorf("rendered %d tools of %d", len(defs), len(enabled))
	}
	fmt.Fprintf(w, "Tools in %s mode (cline-ls tools --json for their schemas):\n", mode)
	width := 0
	for _, d := range defs {
		width = max(width, len(d.Function.Name))
	}
	for _, g := range toolGroups {
		first := true
		for i, t := range enabled {
			if !kindIn(t.Spec().Kind, g.kinds) {
				continue
			}
			if first {
				fmt.Fprintf(w, "\n%s\n", g.title)
				first = false
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, defs[i].Function.Name, firstSentence(defs[i].Function.Description))
		}
	}
	return nil
}

func kindIn(k tools.Kind, kinds []tools.Kind) bool {
	for _, x := range kinds {
		if k == x {
			return true
		}
	}
	return false
}

// firstSentence cuts s after its first sentence, or its first line.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for i := 1; i+1 < len(s); i++ { // "word. " ends a sentence; "from . on" (the folder) does not
		if s[i] == '.' && s[i+1] == ' ' && s[i-1] != ' ' {
			s = s[:i+1]
			break
		}
	}
	return strings.TrimSuffix(strings.TrimSpace(s), ":")
}
