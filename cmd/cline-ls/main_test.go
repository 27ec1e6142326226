package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// asCLIEnv makes the test binary the cline-ls command, for programs a
// test starts that run cline-ls themselves (the MCP conformance suite).
const asCLIEnv = "CLINE_LS_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(mcpServerEnv) == "1" {
		os.Exit(runMCPServer())
	}
	testscript.Main(m, map[string]func(){
		"cline-ls": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
