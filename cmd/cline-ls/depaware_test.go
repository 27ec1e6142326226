package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite depaware.txt from the packages the binary links")

// depawarePlatforms are the platforms the dependency list covers: the
// ones editors run the daemon on. cgo is off for all of them, so the list
// does not depend on whether a C compiler is installed.
var depawarePlatforms = []struct{ goos, goarch, mark string }{
	{"linux", "amd64", "L"},
	{"darwin", "arm64", "D"},
	{"windows", "amd64", "W"},
}

// TestDepaware keeps depaware.txt equal to the packages cline-ls links, so
// that every new dependency, direct or indirect, shows up in review as a
// change to that file. After adding one on purpose, run
//
//	go test ./cmd/cline-ls -run TestDepaware -update
func TestDepaware(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH to list the binary's packages")
	}
	got := depaware(t, goTool)
	if *update {
		if err := os.WriteFile("depaware.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("depaware.txt")
	if err != nil {
		t.Fatalf("%v; create it with: go test ./cmd/cline-ls -run TestDepaware -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the packages cline-ls links changed; review the difference and run\n\tgo test ./cmd/cline-ls -run TestDepaware -update\n%s",
			lineDiff(string(want), string(got)))
	}
}

// depaware lists the packages of ./cmd/cline-ls (this directory) on every
// platform: other modules' packages first, then the standard library's,
// each with the platforms it is limited to when it is not on all of them.
func depaware(t *testing.T, goTool string) []byte {
	t.Helper()
	type pkg struct {
		std   bool
		marks string
	}
	pkgs := map[string]*pkg{}
	for _, p := range depawarePlatforms {
		cmd := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}+{{end}}{{.ImportPath}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+p.goos, "GOARCH="+p.goarch, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go list for %s/%s: %v\n%s", p.goos, p.goarch, err, stderr)
		}
		for _, line := range strings.Fields(string(out)) {
			path, nonStd := strings.CutPrefix(line, "+")
			if pkgs[path] == nil {
				pkgs[path] = &pkg{std: !nonStd}
			}
			pkgs[path].marks += p.mark
		}
	}
	all := ""
	for _, p := range depawarePlatforms {
		all += p.mark
	}
	paths := make([]string, 0, len(pkgs))
	nonStd := 0
	for path, p := range pkgs {
		paths = append(paths, path)
		if !p.std {
			nonStd++
		}
	}
	slices.SortFunc(paths, func(a, b string) int {
		if sa, sb := pkgs[a].std, pkgs[b].std; sa != sb {
			if sb {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Packages linked into cline-ls (go list -deps ./cmd/cline-ls, cgo off).\n")
	fmt.Fprintf(&b, "# Checked by TestDepaware; after a deliberate change run\n")
	fmt.Fprintf(&b, "#   go test ./cmd/cline-ls -run TestDepaware -update\n")
	fmt.Fprintf(&b, "# A package on some platforms only is marked:")
	for _, p := range depawarePlatforms {
		fmt.Fprintf(&b, " %s = %s/%s", p.mark, p.goos, p.goarch)
	}
	fmt.Fprintf(&b, ".\n# %d packages outside the standard library (this module's included), %d in it.\n", nonStd, len(paths)-nonStd)
	inStd := false
	for _, path := range paths {
		p := pkgs[path]
		if p.std && !inStd {
			inStd = true
			b.WriteString("\n# standard library\n")
		}
		b.WriteString(path)
		if p.marks != all {
			b.WriteString(" [" + p.marks + "]")
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
