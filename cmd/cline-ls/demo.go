package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"golang.org/x/tools/txtar"

	"github.com/cline-ls/cline-ls/internal/termsafe"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

//go:embed demo/workspace.txtar
var demoWorkspace []byte

//go:embed demo/transcript.json
var demoTranscript []byte

// demo runs a plan-then-act session on a sample workspace through the real
// server and an in-process client: the replay model by default, or a real
// provider when the environment or the config file names one.
func demo(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	replay := fs.Bool("replay", false, "use the recorded model even when an API key is set")
	keep := fs.Bool("keep", false, "keep the demo workspace instead of removing it")
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cline-ls-demo-")
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls demo:", errText(err))
		return 1
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	ws := filepath.Join(dir, "greet")
	for _, f := range txtar.Parse(demoWorkspace).Files {
		p := filepath.Join(ws, f.Name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			fmt.Fprintln(stderr, "cline-ls demo:", errText(err))
			return 1
		}
	}
	opts := settings.Settings{StateDir: filepath.Join(dir, "state")}
	env := getenv
	if *replay || !hasModel(getenv) {
		tr := filepath.Join(dir, "transcript.json")
		os.WriteFile(tr, demoTranscript, 0o644)
		opts.Provider = &settings.ProviderSettings{Name: "replay", Transcript: tr}
		env = func(string) string { return "" } // no key leaks into a replay run
		fmt.Fprintln(stdout, "model:   replay (recorded transcript; set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY for a live model)")
	} else {
		fmt.Fprintln(stdout, "model:   live provider from the environment")
	}
	fmt.Fprintln(stdout, "folder: ", termsafe.Line(ws))

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := startClient(stdout, logger, env)
	if err := c.initialize(ctx, ws, opts); err != nil {
		fmt.Fprintln(stderr, "cline-ls demo: initialize:", errText(err))
		return 1
	}
	greet := filepath.Join(ws, "greet.go")
	if err := c.open(ctx, greet); err != nil {
		fmt.Fprintln(stderr, "cline-ls demo:", errText(err))
		return 1
	}
	fmt.Fprintln(stdout, "editor:  opened greet.go as a buffer")

	var created wire.NewSessionResult
	if err := c.call(ctx, "session/new", newSessionParams{CWD: ws, Mode: "plan"}, &created); err != nil {
		fmt.Fprintln(stderr, "cline-ls demo: session/new:", errText(err))
		return 1
	}
	steps := []struct{ mode, prompt string }{
		{"plan", "The greeting test fails. Find out why and propose a fix."},
		{"act", "Go ahead with the plan."},
	}
	for _, st := range steps {
		if err := c.call(ctx, "session/set_mode", setModeParams{ModeID: st.mode, SessionID: created.SessionID}, nil); err != nil {
			fmt.Fprintln(stderr, "cline-ls demo: set_mode:", errText(err))
			return 1
		}
		c.println("user", st.prompt)
		var res wire.PromptResult
		err := c.call(ctx, "session/prompt", promptParams{Prompt: []wire.ContentBlock{wire.TextBlock{Text: st.prompt}},
			SessionID: created.SessionID}, &res)
		if err != nil {
			fmt.Fprintln(stderr, "cline-ls demo: prompt:", errText(err))
			return 1
		}
		c.println("stop", termsafe.Line(res.StopReason))
	}
	disk, _ := os.ReadFile(greet)
	c.println("buffer", "greet.go in the editor (unsaved):\n"+indent(termsafe.Text(c.bufferText(greet))))
	c.println("disk", "greet.go on disk (untouched until the user saves):\n"+indent(termsafe.Text(string(disk))))
	if code := c.close(ctx); code != 0 {
		return code
	}
	fmt.Fprint(stdout, demoNext)
	return 0
}

// hasModel reports whether the environment or the config file names a
// model, as the server would resolve it.
func hasModel(getenv func(string) string) bool {
	return settings.Resolve(settings.Settings{}, getenv).Provider.Name != ""
}

// demoNext ends the demo with what to try next.
const demoNext = `next:    try it on your own code, in a project folder:
           cline-ls exec "explain what this project does"     one task on the terminal (cline-ls exec --help)
           cline-ls tools                                     the tools the agent has in each mode
         or attach your editor: see the README (VS Code, Neovim, Emacs).
`
