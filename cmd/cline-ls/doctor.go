package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/settings"
)

// doctor prints what this machine offers the daemon: which sandbox
// confines commands at the sandbox approval level (under the user's
// config file and CLINE_LS_SANDBOX), and what each backend says of
// itself.
func doctor(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	st := settings.Resolve(settings.Settings{}, getenv)
	fmt.Fprintln(stdout, "cline-ls", version())
	fmt.Fprintln(stdout, "sandbox:", rpc.SandboxStatus(st))
	for _, b := range []sandbox.Backend{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		fmt.Fprintf(stdout, "  %s: %s\n", b, sandbox.Detect(b, getenv("PATH")).Detail)
	}
	return 0
}
