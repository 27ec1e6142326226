// Command cline-ls is an editor backend for coding agents: an editor
// launches it and talks JSON-RPC over stdio, like a language server.
//
//	cline-ls [serve] [--stdio] [--clientProcessId PID] [--log-file F] [--log-level debug|info|warn|error]
//	cline-ls demo [--replay] [--keep]
//	cline-ls exec [flags] "task"
//	cline-ls tools [--json] [--format F] [--mode M] [--apply-patch]
//	cline-ls doctor
//	cline-ls version
//	cline-ls help
//
// "cline-ls COMMAND --help" lists a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
)

func main() {
	if cmd, args := subcommand(os.Args[1:]); startsChildren(cmd) {
		// Before anything else, and before any goroutine of ours: the
		// keys leave the environment that children could read.
		if err := proc.HideKeys(keyVars(cmd, args)); err != nil {
			fmt.Fprintln(os.Stderr, "cline-ls: warning:", err)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// subcommand splits the command off the arguments (serve by default).
func subcommand(args []string) (string, []string) {
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-h" || a == "-help" || a == "--help":
			return "help", args[1:]
		case a == "-version" || a == "--version":
			return "version", args[1:]
		case len(a) > 0 && a[0] != '-':
			return a, args[1:]
		}
	}
	return "serve", args
}

// startsChildren reports whether cmd runs commands and servers.
func startsChildren(cmd string) bool {
	return cmd == "serve" || cmd == "demo" || cmd == "exec" || cmd == "mcp"
}

// keyVars names the variables configured to hold a key, whatever their
// names: CLINE_LS_API_KEY_ENV, the config file's provider.apiKeyEnv and
// exec's --api-key-env. One that a client's settings name later is hidden
// when they do (proc.HideVars, docs/DESIGN.md §7).
func keyVars(cmd string, args []string) []string {
	names := []string{os.Getenv("CLINE_LS_API_KEY_ENV"), settings.ConfigKeyEnv(os.Getenv)}
	for i := 0; cmd == "exec" && i < len(args); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if v, ok := strings.CutPrefix(a, "api-key-env="); ok {
			names = append(names, v)
		} else if a == "api-key-env" && i+1 < len(args) {
			names = append(names, args[i+1])
		}
	}
	return names
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, args := subcommand(args)
	if startsChildren(cmd) {
		// The daemon becomes the parent of whatever its commands leave
		// behind, so that it can stop it.
		if err := proc.BecomeSubreaper(); err != nil {
			fmt.Fprintln(stderr, "cline-ls: warning:", err)
		}
	}
	switch cmd {
	case "serve":
		return serve(args, stdin, stdout, stderr)
	case "demo":
		return demo(args, stdout, stderr, proc.Getenv)
	case "exec":
		return execCmd(args, stdin, stdout, stderr, proc.Getenv)
	case "tools":
		return toolsCmd(args, stdout, stderr)
	case "doctor":
		return doctor(args, stdout, stderr, os.Getenv)
	case "mcp":
		return mcpCmd(args, stdout, stderr, proc.Getenv)
	case "version":
		fmt.Fprintln(stdout, "cline-ls", version())
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "cline-ls: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: cline-ls [command] [flags]

commands:
  serve     serve an editor over stdio, LSP or ACP (the default command)
            [--log-file FILE] [--log-level debug|info|warn|error]
            [--stdio] [--clientProcessId PID]
  demo      a plan-then-act session on a sample workspace [--replay] [--keep]
  exec      run one task headless in the current folder
            [--mode M] [--provider P] [--model M] [--json] [--approve ask|allow|deny] "task"
  tools     list the tools a mode offers [--mode M]; --json [--format anthropic|openai|gemini|xml]
            prints them as a provider receives them
  doctor    say which sandbox confines commands at the sandbox approval level
  mcp       the config file's MCP servers: list | get NAME | call NAME TOOL [JSON] | login NAME
  version   print the version (also --version)
  help      print this help (also --help, -h)

"cline-ls COMMAND --help" lists the flags of a command.
`)
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log-file", "", "write logs to `FILE` instead of stderr")
	logLevel := fs.String("log-level", "info", "log `LEVEL`: debug, info, warn or error")
	// vscode-languageclient appends --stdio for its stdio transport, the
	// only one there is, and may add the editor's process id.
	fs.Bool("stdio", false, "talk over stdin and stdout (the only transport; accepted for editors that pass it)")
	clientPID := fs.Int("clientProcessId", 0, "exit once the process with this `PID` (the editor) is gone")
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	var level slog.Level
	if !slices.Contains(logLevels, strings.ToLower(*logLevel)) || level.UnmarshalText([]byte(*logLevel)) != nil {
		fmt.Fprintf(stderr, "cline-ls: --log-level must be one of %s, got %q\n", strings.Join(logLevels, ", "), *logLevel)
		return 2
	}
	logOut := stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "cline-ls: --log-file: %v\n", err)
			return 2
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server catches the signals itself, from the first message
	// after initialize on: a signal before that ends the process at once,
	// with nothing to save.
	srv := rpc.NewServer(rpc.Options{Logger: logger, Version: version(), Getenv: proc.Getenv, ToolNames: tools.BuiltinNames,
		Signals: []os.Signal{os.Interrupt, syscall.SIGTERM}})
	// Serve stdin through a pipe: a read blocked on os.Stdin cannot be
	// interrupted, but one blocked on the pipe ends when the server
	// closes it, so exit is immediate.
	in, pump := io.Pipe()
	go func() { pump.CloseWithError(copyInput(pump, stdin)) }()
	if *clientPID > 0 {
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			if waitGone(ctx, *clientPID, time.Second) {
				logger.Info("the client process is gone; exiting", "pid", *clientPID)
				pump.Close() // end of input: the server ends as when the editor closes stdin
				cancel()
			}
		}()
		defer func() { cancel(); <-watched }()
	}
	code, err := srv.Serve(ctx, in, stdout)
	if err != nil {
		logger.Error("serve", "err", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// copyInput copies the editor's input into the pipe the server reads, as
// io.Copy would (nil at the end of input), in a frame or two: the
// goroutine runs with the first message, and io.Copy's way (WriteTo,
// then a buffer of its own) calls deep enough to grow the goroutine's
// stack on the way to the initialize answer.
func copyInput(dst io.Writer, src io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// logLevels are the --log-level values.
var logLevels = []string{"debug", "info", "warn", "error"}

// parseFlags parses args into fs. When it returns false the command ends
// with the code: 0 for --help, whose flag list goes to stdout as help
// does, 2 for a bad flag, which fs has named on its own output, followed
// by the list.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	errOut := fs.Output()
	list := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintf(w, "usage of cline-ls %s:\n", fs.Name())
		fs.PrintDefaults()
		fs.SetOutput(errOut)
	}
	fs.Usage = func() {} // Parse would print the list to errOut, --help too
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		list(stdout)
		return 0, false
	}
	list(errOut)
	return 2, false
}

// version reports the module version when built from a tagged module, else
// the VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}
