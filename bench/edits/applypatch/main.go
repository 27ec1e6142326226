// Command applypatch applies a patch in the apply_patch format
// ("*** Begin Patch" … "*** End Patch") to a folder with the edit engine
// (tools/edit), all or nothing, and prints nothing on success. It is the
// edits benchmark's stand-in for running the engine as its own process,
// the way git apply runs:
//
//	applypatch -dir DIR PATCHFILE
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cline-ls/cline-ls/bench/edits/internal/dirfs"
	"github.com/cline-ls/cline-ls/tools/edit"
)

func main() {
	dir := flag.String("dir", ".", "folder the patch's paths are relative to")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: applypatch [-dir DIR] PATCHFILE")
		os.Exit(2)
	}
	if err := run(*dir, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "applypatch:", err)
		os.Exit(1)
	}
}

// run plans the whole patch against the folder, then writes the result.
func run(dir, patchFile string) error {
	patch, err := os.ReadFile(patchFile)
	if err != nil {
		return err
	}
	d := dirfs.Dir(dir)
	plan, err := edit.PlanPatch(string(patch), d)
	if err != nil {
		return err
	}
	return edit.Apply(plan, d)
}
