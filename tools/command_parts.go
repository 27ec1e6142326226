package tools

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// CommandPart is one command a shell command line runs: a simple command
// of a list, a pipeline or an and-or chain, one inside a command
// substitution, or a compound command (subshell, block, loop) taken as a
// whole. Approval rules judge a command line by its parts (CommandParts).
type CommandPart struct {
	// Text is the part as written in the line.
	Text string
	// Words are the part's words when it is Simple; otherwise the
	// literal words it starts with, possibly none.
	Words []string
	// Simple is true for a plain program with literal arguments: no
	// expansion of any kind (parameters, commands, arithmetic, globs,
	// braces, tildes, escapes, ANSI-C quoting), no assignment before it,
	// no redirection, not sent to the background, and not a program that
	// runs a string as a command line (eval, sh -c). Only such a part can
	// be matched by an allow rule: what it runs is all in its words.
	Simple bool
	// Inner are further subjects for ask and deny rules: the command a
	// wrapper such as env, nice or timeout runs, without the wrapper.
	Inner []string
}

// CommandParts splits a shell command line into the commands it runs,
// each once, in the order written; commands inside substitutions,
// subshells and loops are parts of their own, and so are the command
// lines eval and sh -c are given. A line the shell's grammar cannot parse
// is one part that is not Simple. Parsing follows bash (mvdan.cc/sh).
func CommandParts(line string) []CommandPart {
	return commandParts(line, 0)
}

// maxPartsDepth bounds how deep command lines given to eval or sh -c are
// followed; past it, what they run is not looked into.
const maxPartsDepth = 4

func commandParts(line string, depth int) []CommandPart {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return []CommandPart{{Text: strings.TrimSpace(line)}}
	}
	var parts []CommandPart
	// A statement's text ends before the ; that ends it (a & stays: it
	// is what the part does).
	text := func(st *syntax.Stmt) string {
		start, end := int(st.Pos().Offset()), int(st.End().Offset())
		if st.Semicolon.IsValid() && !st.Background && !st.Coprocess {
			end = int(st.Semicolon.Offset())
		}
		if start < 0 || end > len(line) || start > end {
			return strings.TrimSpace(line)
		}
		return strings.TrimSpace(line[start:end])
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || st.Cmd == nil {
			return true
		}
		plain := !st.Background && !st.Coprocess && !st.Negated && !slices.ContainsFunc(st.Redirs, writesOrReads)
		switch cmd := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			// &&, ||, | and |& only join their two sides, which are
			// parts of their own; what is redirected or sent to the
			// background as a whole is a part too.
			if !plain {
				parts = append(parts, CommandPart{Text: text(st)})
			}
		case *syntax.CallExpr:
			p := callPart(cmd)
			p.Text = text(st)
			p.Simple = p.Simple && plain
			parts = append(parts, p)
			if inner, ok := runsString(p.Words, cmd.Args); ok && inner != "" && depth < maxPartsDepth {
				parts = append(parts, commandParts(inner, depth+1)...)
			}
		default:
			// Subshells, blocks, loops, conditions, declarations and
			// functions: the parts inside them are found by the walk,
			// but the construct itself is more than a command.
			parts = append(parts, CommandPart{Text: text(st)})
		}
		return true
	})
	return parts
}

// writesOrReads reports whether a redirection makes a command read or
// write something its words do not show. Joining one output to another
// (2>&1, >&2) and discarding output (>/dev/null, 2>>/dev/null, &>/dev/null)
// do not; every other redirection, a file descriptor named by a variable
// included, does.
func writesOrReads(r *syntax.Redirect) bool {
	if r.N != nil && !isDigits(r.N.Value) {
		return true
	}
	target, ok := "", r.Word != nil
	if ok {
		target, ok = literalWord(r.Word)
	}
	if !ok {
		return true
	}
	switch r.Op {
	case syntax.DplOut:
		return !isDigits(target) && target != "-"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		return target != "/dev/null"
	}
	return true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// callPart judges one simple command's assignments and words.
func callPart(cmd *syntax.CallExpr) CommandPart {
	p := CommandPart{Simple: len(cmd.Assigns) == 0 && len(cmd.Args) > 0}
	for _, w := range cmd.Args {
		lit, ok := literalWord(w)
		if !ok {
			p.Simple = false
			break
		}
		p.Words = append(p.Words, lit)
	}
	if _, ok := runsString(p.Words, cmd.Args); ok {
		p.Simple = false
	}
	p.Inner = wrapped(p.Words)
	return p
}

// Subjects are the texts an ask or deny rule is matched against: the
// part as written, its words without what comes before them
// (assignments, redirections), and what a wrapper runs.
func (p CommandPart) Subjects() []string {
	out := []string{p.Text}
	if w := strings.Join(p.Words, " "); w != "" && w != p.Text {
		out = append(out, w)
	}
	return append(out, p.Inner...)
}

// shells are the programs that run the command line after -c.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"}

// runsString returns the command line a part runs as a string — eval's
// words, or what follows a shell's -c — when the words say so.
func runsString(words []string, args []*syntax.Word) (string, bool) {
	if len(words) == 0 {
		return "", false
	}
	prog := words[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	switch {
	case prog == "eval":
		if len(words) == len(args) {
			return strings.Join(words[1:], " "), true
		}
		return "", true
	case slices.Contains(shells, prog) || prog == "su":
		for i, w := range words[1:] {
			if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") {
				if i+2 < len(words) {
					return words[i+2], true
				}
				return "", true
			}
		}
	}
	return "", false
}

// wrappers run the command their later words make up.
var wrappers = []string{"env", "command", "builtin", "exec", "nice", "nohup", "time", "timeout", "sudo", "doas",
	"xargs", "stdbuf", "setsid", "chrt", "ionice", "taskset", "unbuffer", "watch", "strace", "ltrace", "flock", "chroot", "runuser"}

// maxWrapped bounds the commands wrapped finds in one part: each is a
// copy of the words after it, so a line of many words would otherwise
// cost their square. A wrapper's own options and arguments come first,
// and fewer than this many of them.
const maxWrapped = 8

// wrapped returns, for a wrapper program, each command its words could
// be asking it to run (from every later word that is not an option or an
// assignment), so that an ask or deny rule on the program sees it.
func wrapped(words []string) []string {
	if len(words) == 0 {
		// An assignment alone (i=0), or a first word that is not a
		// literal ($cmd x): no program to look into.
		return nil
	}
	prog := words[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	var out []string
	if prog == "find" {
		for i, w := range words {
			if (w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir") && i+1 < len(words) && len(out) < maxWrapped {
				out = append(out, strings.Join(words[i+1:], " "))
			}
		}
		return out
	}
	if !slices.Contains(wrappers, prog) {
		return nil
	}
	for i := 1; i < len(words) && len(out) < maxWrapped; i++ {
		if w := words[i]; w != "" && !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			out = append(out, strings.Join(words[i:], " "))
		}
	}
	return out
}

// literalWord returns a word's text when the shell would pass it on as
// written: plain characters without glob, brace, tilde or escape
// meaning, and quoted strings without expansions.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[]{}") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\$`") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
