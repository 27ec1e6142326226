package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/cline-ls/cline-ls/internal/termsafe"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// noModelHelp says how to choose a model for exec when nothing names one.
const noModelHelp = `cline-ls exec: no model is configured. Name one with flags:
  cline-ls exec --provider anthropic --model claude-sonnet-4-5 --api-key-env ANTHROPIC_API_KEY "task"
  cline-ls exec --provider openai-compatible --base-url http://localhost:11434/v1 --model qwen3 "task"
or in the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY alone picks that
provider and its default model; CLINE_LS_PROVIDER and CLINE_LS_MODEL name others; or put
{"provider": {"name": ..., "model": ...}} in $XDG_CONFIG_HOME/cline-ls/config.json.
To try it offline: --provider replay --transcript FILE, or CLINE_LS_TRANSCRIPT=FILE.
`

// execCmd runs one task headless in the current folder and prints the
// session's events.
func execCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "act", "session `mode`: plan, act, search, minimal or yolo")
	provName := fs.String("provider", "", "model provider ("+strings.Join(provider.Names(), ", ")+"); default from the environment")
	model := fs.String("model", "", "model name")
	baseURL := fs.String("base-url", "", "API base URL (OpenAI-compatible servers)")
	keyEnv := fs.String("api-key-env", "", "environment variable holding the API key")
	transcript := fs.String("transcript", "", "transcript file for the replay provider")
	asJSON := fs.Bool("json", false, "print session updates as JSON lines")
	approve := fs.String("approve", "ask", "answer approvals: ask (on the terminal), allow, or deny")
	logFile := fs.String("log-file", "", "write the daemon's logs to `FILE`")
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	task := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if task == "" {
		fmt.Fprintln(stderr, "cline-ls exec: give the task as an argument, e.g. cline-ls exec \"fix the failing test\"")
		return 2
	}
	switch approvalPolicy(*approve) {
	case approveAsk, approveAllow, approveDeny:
	default:
		fmt.Fprintf(stderr, "cline-ls exec: --approve must be ask, allow or deny, got %q\n", *approve)
		return 2
	}
	if !slices.Contains(tools.Modes(), *mode) {
		fmt.Fprintf(stderr, "cline-ls exec: --mode must be one of %s, got %q\n", strings.Join(tools.Modes(), ", "), *mode)
		return 2
	}
	if *keyEnv != "" && getenv(*keyEnv) == "" {
		fmt.Fprintf(stderr, "cline-ls exec: --api-key-env: the environment variable %s is not set\n", *keyEnv)
		return 2
	}
	resolved := settings.Resolve(settings.Settings{Provider: &settings.ProviderSettings{Name: *provName, Transcript: *transcript}}, getenv)
	if resolved.Provider.Name == "" {
		fmt.Fprint(stderr, noModelHelp)
		return 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "cline-ls exec:", errText(err))
		return 1
	}
	prov := settings.ProviderSettings{Name: *provName, Model: *model, BaseURL: *baseURL, APIKeyEnv: *keyEnv, Transcript: *transcript}
	if prov.Transcript != "" {
		prov.Transcript, _ = filepath.Abs(prov.Transcript)
	}
	opts := settings.Settings{Mode: *mode}
	if *provName+*model+*baseURL+*keyEnv+*transcript != "" {
		opts.Provider = &prov
	}
	logOut := io.Discard
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "cline-ls exec: --log-file:", errText(err))
			return 2
		}
		defer f.Close()
		logOut = f
	}
	// Ctrl-C (or SIGTERM) cancels the turn, which then ends "cancelled"
	// and exits 128+signal as a shell reports it; a second one exits at
	// once, for a turn that does not end.
	ctx, interrupted := watchInterrupts(stderr)
	defer interrupted.stop()
	c := startClient(stdout, slog.New(slog.NewTextHandler(logOut, nil)), getenv)
	c.json = *asJSON
	c.approve = approvalPolicy(*approve)
	c.terminal = bufio.NewReader(stdin)
	c.interrupt = ctx
	if err := c.initialize(ctx, cwd, opts); err != nil {
		return c.fail(stderr, "", "initialize", err, interrupted.code())
	}
	var created wire.NewSessionResult
	if err := c.call(ctx, "session/new", newSessionParams{CWD: cwd, Mode: *mode}, &created); err != nil {
		return c.fail(stderr, "", "", err, interrupted.code())
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.conn.Notify(context.Background(), "session/cancel", sessionParams{SessionID: created.SessionID})
		case <-done:
		}
	}()
	var res wire.PromptResult
	err = c.call(context.Background(), "session/prompt", promptParams{Prompt: []wire.ContentBlock{wire.TextBlock{Text: task}},
		SessionID: created.SessionID}, &res)
	close(done)
	if err != nil {
		return c.fail(stderr, created.SessionID, "", err, interrupted.code())
	}
	c.printEnd(created.SessionID, res.StopReason, "")
	c.close(context.Background())
	switch {
	case interrupted.code() != 0:
		return interrupted.code()
	case res.StopReason != "end_turn":
		return 1
	}
	return 0
}

// fail reports an error that ends exec: on stderr, and as the last JSON
// line with --json. The code is 1, or the interrupt's when the error
// follows one (a call cut short by Ctrl-C).
func (c *client) fail(stderr io.Writer, sessionID, step string, err error, interruptCode int) int {
	prefix := "cline-ls exec:"
	if step != "" {
		prefix += " " + step + ":"
	}
	fmt.Fprintln(stderr, prefix, errText(err))
	c.printEnd(sessionID, "", err.Error())
	c.close(context.Background())
	if interruptCode != 0 {
		return interruptCode
	}
	return 1
}

// printEnd prints how the task ended, the last line exec prints: the stop
// reason, or with --json the final event, {"sessionId", "stopReason"} or
// {"sessionId", "error"} (README, Commands).
func (c *client) printEnd(sessionID, stopReason, errMsg string) {
	if !c.json {
		if stopReason != "" {
			c.println("stop", termsafe.Line(stopReason))
		}
		return
	}
	end := execEnd{SessionID: sessionID}
	if errMsg != "" {
		end.Error = errMsg
	} else {
		end.StopReason = &stopReason
	}
	raw, _ := json.Marshal(end)
	c.printJSON(raw)
}

// execEnd is the final event of exec --json: a stop reason, or an error
// (then no stop reason at all). Its members are sorted, as the map's
// were.
type execEnd struct {
	Error      string  `json:"error,omitempty"`
	SessionID  string  `json:"sessionId"`
	StopReason *string `json:"stopReason,omitempty"`
}

// interrupts counts the interrupting signals exec has had.
type interrupts struct {
	sigs   chan os.Signal
	mu     sync.Mutex
	signal syscall.Signal // the first one, 0 before
}

// watchInterrupts returns a context cancelled by the first SIGINT or
// SIGTERM; the second exits the process at once with 128+signal.
func watchInterrupts(stderr io.Writer) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{sigs: make(chan os.Signal, 2)}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range in.sigs {
			s, _ := sig.(syscall.Signal)
			in.mu.Lock()
			first := in.signal == 0
			if first {
				in.signal = s
			}
			in.mu.Unlock()
			if !first {
				os.Exit(128 + int(s))
			}
			fmt.Fprintln(stderr, "cline-ls exec: cancelling the turn (Ctrl-C again to quit at once)")
			cancel()
		}
	}()
	return ctx, in
}

// code is the exit code the first interrupt asks for, 0 before one.
func (in *interrupts) code() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.signal == 0 {
		return 0
	}
	return 128 + int(in.signal)
}

func (in *interrupts) stop() { signal.Stop(in.sigs) }
