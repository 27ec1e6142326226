package tools

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
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
