// Command cline-ls is an editor backend for coding agents: an editor
// launches it and talks JSON-RPC over stdio, like a language server.
//
//	cline-ls [serve] [--log-file F] [--log-level debug|info|warn|error]
//	cline-ls demo
//	cline-ls exec [flags] "task"
//	cline-ls tools [--format F] [--mode M]
//	cline-ls version
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/tools"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve", "demo", "exec":
		// These run commands: the daemon becomes the parent of whatever
		// they leave behind, so that it can stop it.
		if err := proc.BecomeSubreaper(); err != nil {
			fmt.Fprintln(stderr, "cline-ls: warning:", err)
		}
	}
	switch cmd {
	case "serve":
		return serve(args, stdin, stdout, stderr)
	case "demo":
		return demo(args, stdout, stderr, os.Getenv)
	case "exec":
		return execCmd(args, stdin, stdout, stderr, os.Getenv)
	case "tools":
		return toolsCmd(args, stdout, stderr)
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
	fmt.Fprint(w, `usage:
  cline-ls [serve] [--log-file FILE] [--log-level LEVEL]   serve an editor over stdio (LSP or ACP)
  cline-ls demo [--replay] [--keep]                        a plan-then-act session on a sample workspace
  cline-ls exec [--mode M] [--provider P] [--model M] [--json] [--approve ask|allow|deny] "task"
                                                           run one task headless in the current folder
  cline-ls tools [--format anthropic|openai|gemini|xml] [--mode M]
                                                           print the tools as a provider receives them
  cline-ls version                                         print the version
`)
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log-file", "", "write logs to `FILE` instead of stderr")
	logLevel := fs.String("log-level", "info", "log `LEVEL`: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "cline-ls: --log-level: %v\n", err)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := rpc.NewServer(rpc.Options{Logger: logger, Version: version(), Getenv: os.Getenv, ToolNames: builtinToolNames})
	// Serve stdin through a pipe: a read blocked on os.Stdin cannot be
	// interrupted, but one blocked on the pipe ends when the server
	// closes it, so exit is immediate.
	in, pump := io.Pipe()
	go func() {
		_, err := io.Copy(pump, stdin)
		pump.CloseWithError(err)
	}()
	code, err := srv.Serve(ctx, in, stdout)
	if err != nil {
		logger.Error("serve", "err", err)
		if code == 0 {
			code = 1
		}
	}
	return code
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

// builtinToolNames lists the built-in tools for experimental.cline.tools.
func builtinToolNames() []string {
	var names []string
	for _, s := range tools.BuiltinSpecs() {
		names = append(names, s.Name)
	}
	return names
}
