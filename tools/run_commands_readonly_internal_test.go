package tools

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestSedScanAgreesWithGNUSed: GNU sed's --sandbox refuses the commands
// that write or run (and r, R, which read): every script the scan calls
// harmless, built from pieces without r and R, must pass it.
func TestSedScanAgreesWithGNUSed(t *testing.T) {
	if out, err := exec.Command("sed", "--sandbox", "-n", "p", "/dev/null").CombinedOutput(); err != nil {
		t.Skipf("no GNU sed with --sandbox here: %v %s", err, out)
	}
	pieces := []string{"s/x/y/", "s|a|b|", "/x/", "y/a/b/", `\%x%`, "s/a/b/g", "a foo", `i\`, "c x", `s/a/\//`,
		"s/[/]/x/", "[^]/]", "[[:alpha:]/]", "s", "/", "a", "w", "e", "x", ";", "\n", `\`, "{", "}", "p", "y",
		"W", " ", "1", "$", "!", ",", "g", "I", "M", ":", "b", "t", "#", "|", "i", "c", "q", "=", "l", "0", "~",
		"+", "F", "z", "n", "d", "m", "T", "v", "Q", "D", "N", "P", "G", "H", "h", "[", "]", "^",
		"b x ", "t ", ":a ", "T y", " w x", " e", "W y"}
	r := rand.New(rand.NewSource(1))
	for range 1500 {
		var b strings.Builder
		for k := r.Intn(10) + 1; k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		script := b.String()
		if roSedWrites(script) {
			continue
		}
		out, _ := exec.Command("sed", "--sandbox", "-n", "-e", script, "/dev/null").CombinedOutput()
		if strings.Contains(string(out), "sandbox") {
			t.Errorf("the scan calls %q harmless; GNU sed: %s", script, out)
		}
	}
}

// TestWordsReadAsTheShellPasses: a word the check reads as literal text
// reaches the program as exactly that text, in bash and in sh, even with
// files in the folder that a glob would match.
func TestWordsReadAsTheShellPasses(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "-delete", "ab", "b", "x=y", "{a", "a,b}", "~"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pieces := []string{"a", "b", "'", `"`, `\`, "*", "?", "[", "]", "{", "}", ",", "..", "~", "=", ":", "-", " ",
		"$", "!", "#", "^", "\n", "\t", "(", ")", "@", "%", "+", "`", ";", "&", "|", "<", ">",
		`"\\"`, `"a\b"`, `'\'`, `\\`, `"\$"`, `"\x\"`, `\*`, `"*"`, `\~`, `'{a,b}'`, "\\\n"}
	for _, shell := range []string{"bash", "sh"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("no %s here", shell)
			continue
		}
		r := rand.New(rand.NewSource(5))
		compared := 0
		for range 4000 {
			var b strings.Builder
			for k := r.Intn(7) + 1; k > 0; k-- {
				b.WriteString(pieces[r.Intn(len(pieces))])
			}
			line := "printf '<%s>' " + b.String()
			want, ok := roLiteralArgs(line)
			if !ok {
				continue
			}
			cmd := exec.Command(path, "-c", line)
			cmd.Dir = dir
			out, _ := cmd.Output()
			compared++
			if string(out) != want {
				t.Errorf("%s -c %q prints %q; the check reads %q", shell, line, out, want)
			}
		}
		if compared < 500 {
			t.Errorf("only %d lines compared with %s", compared, shell)
		}
	}
}

// roLiteralArgs is what printf '<%s>' prints for the words after the
// format on line, as the check reads them, if it reads them all as
// literal text.
func roLiteralArgs(line string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 || f.Stmts[0].Background {
		return "", false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 {
		return "", false
	}
	if len(call.Args) == 2 {
		return "<>", true
	}
	want := ""
	for _, w := range call.Args[2:] {
		rw, why := roWordOf(w)
		if why != "" || rw.glob {
			return "", false
		}
		want += "<" + rw.text + ">"
	}
	return want, true
}

// TestLinesReadAsBashRuns: for generated lines the check accepts, each
// simple command bash runs has the words the check read for one of the
// line's commands. Every program the lines name is a shell function that
// prints its words, and PATH names no folder, so nothing else runs.
func TestLinesReadAsBashRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	progs := []string{"echo", "ls", "cat", "true", "pwd", "wc", "grep"}
	prelude := "PATH=/nonexistent\n"
	for _, p := range progs {
		prelude += p + "() { builtin printf '%s\\x1f' " + p + " \"$@\"; builtin printf '\\x1e'; }\n"
	}
	pieces := []string{"a", "b", " ", " ", "\n", ";", "&&", "||", "|", "#", "\\\n", "'", `"`, `\`, "-n",
		"2>/dev/null", ">/dev/null", "{", "}", "!", "&", "(", ")", "$", "=", "\v", "\f", "\u00a0", "\t", "|&",
		";;", "é", "*", "~"}
	pieces = append(pieces, progs...)
	dir := t.TempDir()
	r := rand.New(rand.NewSource(9))
	compared := 0
	for range 8000 {
		var b strings.Builder
		b.WriteString(progs[r.Intn(len(progs))])
		for k := r.Intn(10); k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		line := b.String()
		if WhyNotReadOnly(line) != "" {
			continue
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", line, err)
		}
		read := map[string]bool{}
		syntax.Walk(file, func(n syntax.Node) bool {
			if call, ok := n.(*syntax.CallExpr); ok {
				words := ""
				for _, w := range call.Args {
					rw, _ := roWordOf(w)
					words += rw.text + "\x1f"
				}
				read[words] = true
			}
			return true
		})
		cmd := exec.Command(bash, "-c", prelude+line)
		cmd.Dir = dir
		out, _ := cmd.Output()
		compared++
		for _, ran := range strings.Split(string(out), "\x1e") {
			if ran != "" && !read[ran] {
				t.Errorf("bash ran %q for %q; the check read %v", ran, line, read)
			}
		}
	}
	if compared < 500 {
		t.Errorf("only %d lines compared", compared)
	}
}

// TestOptionsReadAsGetoptReads: for generated argument lists the option
// reader accepts, util-linux getopt(1), on glibc's getopt_long as GNU
// programs are, finds the same options, values and operands.
func TestOptionsReadAsGetoptReads(t *testing.T) {
	getopt, err := exec.LookPath("getopt")
	if err != nil {
		t.Skip("no getopt here")
	}
	if out, _ := exec.Command(getopt, "-T").CombinedOutput(); len(out) != 0 {
		t.Skip("getopt here is not util-linux's")
	}
	spec := roSpec{short: "ab:c::o:", long: []string{"all", "block=", "color?", "output=", "out-of-band"}}
	optstring := "ab:c::o:"
	longopts := "all,block:,color::,output:,out-of-band"
	pieces := []string{"-a", "-ab", "-abx", "-b", "-c", "-cx", "-o", "-ao", "-aox", "--all", "--block", "--block=x",
		"--color", "--color=x", "--output", "--output=y", "--out-of-band", "--", "-", "f", "g", "x", "-ac", "-acb"}
	r := rand.New(rand.NewSource(2))
	compared := 0
	for range 3000 {
		var words []roWord
		var argv []string
		for k := r.Intn(6) + 1; k > 0; k-- {
			p := pieces[r.Intn(len(pieces))]
			words = append(words, roWord{text: p})
			argv = append(argv, p)
		}
		a, why := roParse("prog", spec, words, false)
		if why != "" {
			continue // refusing is always allowed
		}
		var b strings.Builder
		for _, o := range a.opts {
			b.WriteString(" " + o.name)
			switch {
			case len(o.vals) == 1:
				b.WriteString(" '" + o.vals[0] + "'")
			case strings.HasPrefix(o.name, "--") && slices.Contains(spec.long, strings.TrimPrefix(o.name, "--")+"?"),
				len(o.name) == 2 && strings.Contains(spec.short, o.name[1:]+"::"):
				b.WriteString(" ''") // getopt prints an absent optional value as ''
			}
		}
		b.WriteString(" --")
		for _, o := range a.operands {
			b.WriteString(" '" + o.text + "'")
		}
		out, err := exec.Command(getopt, append([]string{"-o", optstring, "-l", longopts, "--"}, argv...)...).Output()
		if err != nil {
			t.Errorf("the reader accepts %q; getopt refuses it", argv)
			continue
		}
		compared++
		if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(b.String()) {
			t.Errorf("%q: getopt reads %s; the reader %s", argv, got, b.String())
		}
	}
	if compared < 300 {
		t.Errorf("only %d argument lists compared", compared)
	}
}
