package tools

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ReadOnlyRefusal is plan mode's refusal of run_commands calls, foreground
// or background alike: a *ValidationError naming each of commands that
// WhyNotReadOnly does not accept, and why, or nil when it accepts them
// all. The session asks it before anything is asked or run.
func ReadOnlyRefusal(commands []string) error {
	var probs []Problem
	for i, cmd := range commands {
		if why := WhyNotReadOnly(cmd); why != "" {
			probs = append(probs, Problem{Path: fmt.Sprintf("commands[%d]", i), Message: fmt.Sprintf(
				"not allowed in plan mode, which runs only commands that change no files, and %q may (%s). "+
					"Read-only commands include ls, cat, head, grep, rg, find (without -exec or -delete), "+
					"git status/log/diff/show, go list/vet/doc; no output redirection to files. "+
					"Changing files needs act mode.", cmd, why)})
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return &ValidationError{Tool: NameRunCommands, Problems: probs}
}

// WhyNotReadOnly returns "" when a shell command line looks like it
// changes no files, and otherwise the reason it may: a program that is not
// on the read-only list, an option that makes a listed program write
// (sed -i, find -delete, sort -o, git log --output), output redirection
// to a file, or shell syntax the check does not judge (command
// substitution, subshells, background jobs, here-documents). The line is
// parsed with the shell's grammar (mvdan.cc/sh), so quotes, escapes and
// comments mean what they mean to the shell: a quoted "a > b" is an
// argument, not a redirection. Plan mode's refusal and the approval
// policy both ask this one function.
//
// It is a guard against a model changing files in plan mode by mistake,
// not a sandbox: it reads the line conservatively and refuses what it does
// not understand, but programs it allows can still misbehave (a git
// pager, a crafted find pattern), and nothing confines what a command can
// reach. Commands still run with the user's rights and need approval.
func WhyNotReadOnly(command string) string {
	if strings.TrimSpace(command) == "" {
		return "an empty command"
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		if strings.Contains(err.Error(), "without closing quote") || strings.Contains(err.Error(), "must be closed") {
			return "an unterminated quote"
		}
		return "a command line the shell cannot parse (" + err.Error() + ")"
	}
	if len(file.Stmts) == 0 {
		return "an empty command"
	}
	for _, st := range file.Stmts {
		if why := roStmt(st); why != "" {
			return why
		}
	}
	return ""
}

// roStmt judges one statement of the parsed command line: its
// redirections, then its command.
func roStmt(st *syntax.Stmt) string {
	if st.Background || st.Coprocess {
		return "running a command in the background (&)"
	}
	for _, r := range st.Redirs {
		if why := roRedirect(r); why != "" {
			return why
		}
	}
	switch cmd := st.Cmd.(type) {
	case nil:
		return ""
	case *syntax.BinaryCmd: // &&, ||, |, |&
		if why := roStmt(cmd.X); why != "" {
			return why
		}
		return roStmt(cmd.Y)
	case *syntax.Block:
		for _, s := range cmd.Stmts {
			if why := roStmt(s); why != "" {
				return why
			}
		}
		return ""
	case *syntax.TimeClause:
		if cmd.Stmt == nil {
			return ""
		}
		return roStmt(cmd.Stmt)
	case *syntax.Subshell:
		return "subshells ( )"
	case *syntax.CallExpr:
		var words []string
		for _, a := range cmd.Assigns {
			if a.Value != nil {
				if why := roSubstitution(a.Value); why != "" {
					return why
				}
			}
			if a.Name == nil || a.Index != nil || a.Array != nil {
				return "an assignment the check does not judge"
			}
			words = append(words, a.Name.Value+"="+roLiteral(a.Value))
		}
		for i, w := range cmd.Args {
			if why := roSubstitution(w); why != "" {
				return why
			}
			lit := roLiteral(w)
			if i == 0 && (!roPlainWord(w) || strings.ContainsAny(lit, "*?[{~")) {
				return "a program name the shell computes"
			}
			words = append(words, lit)
		}
		return roCommand(words)
	}
	return "compound commands (if, for, while, case, functions) are not judged"
}

// roRedirect allows input redirection, duplicating descriptors and output
// to /dev/null; anything else may write a file.
func roRedirect(r *syntax.Redirect) string {
	if r.Word != nil {
		if why := roSubstitution(r.Word); why != "" {
			return why
		}
	}
	target := ""
	if r.Word != nil {
		target = roLiteral(r.Word)
	}
	switch r.Op {
	case syntax.RdrIn, syntax.WordHdoc:
		return ""
	case syntax.Hdoc, syntax.DashHdoc:
		return "here-documents (<<)"
	case syntax.DplIn, syntax.DplOut:
		if target == "-" || target != "" && strings.Trim(target, "0123456789") == "" {
			return "" // >&2, 2>&1, >&-: no file
		}
		return "output redirection to a file (>&)"
	case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		if target == "/dev/null" {
			return ""
		}
		return "output redirection to a file (&>)"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob:
		if target == "/dev/null" {
			return ""
		}
		return "output redirection to a file (>)"
	}
	return "a redirection that may write a file (" + r.Op.String() + ")"
}

// roSubstitution refuses a word that runs commands when it is expanded.
func roSubstitution(w *syntax.Word) string {
	why := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst:
			why = "command substitution ($(...) or backquotes)"
		case *syntax.ProcSubst:
			why = "process substitution"
		}
		return why == ""
	})
	return why
}

// roPlainWord reports whether a word is the same text whatever the
// shell's state: literal text and quotes, no expansion.
func roPlainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// roLiteral is a word with its quotes removed; expansions are kept as
// the text they are written as ($HOME), which no option check matches.
func roLiteral(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		roLiteralPart(&b, p, false)
	}
	return b.String()
}

func roLiteralPart(b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(roUnescape(p.Value, quoted))
	case *syntax.SglQuoted:
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			roLiteralPart(b, q, true)
		}
	default:
		syntax.NewPrinter().Print(b, p)
	}
}

// roUnescape removes the backslashes the shell would: before any
// character outside quotes, before $ ` " \ and newline inside double
// quotes.
func roUnescape(s string, quoted bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// roEnvName reports the variables a read-only command may set for
// itself: ones that change formatting, never which programs run or what
// they write.
func roEnvName(name string) bool {
	switch name {
	case "LANG", "LC_ALL", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES", "TZ", "NO_COLOR",
		"TERM", "COLUMNS", "GREP_COLORS", "CLICOLOR":
		return true
	}
	return false
}

// roPlain reports programs that only read, whatever their arguments.
func roPlain(prog string) bool {
	switch prog {
	case "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "stat",
		"file", "du", "df", "which", "whereis", "type", "printenv", "uname", "whoami", "id", "diff",
		"cmp", "comm", "cut", "tr", "basename", "dirname", "realpath", "readlink", "nl", "true",
		"false", "test", "[", "cd", "column", "rev", "fold", "expand", "unexpand", "md5sum",
		"sha1sum", "sha256sum", "sha512sum", "cksum", "od", "hexdump", "strings", "seq", "jq",
		"uptime", "free", "ps", "pgrep", "locale", "tac", "paste", "join", "look", "zcat", "lsof":
		return true
	}
	return false
}

// roCommand judges one simple command given as its words.
func roCommand(words []string) string {
	// Leading NAME=value words set the command's environment.
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=") {
		name := words[0][:strings.IndexByte(words[0], '=')]
		if !roEnvName(name) {
			return fmt.Sprintf("setting %s, which can change what programs run", name)
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return "" // only assignments: shell variables, no files
	}
	prog := words[0]
	if strings.ContainsAny(prog, "$*?[{~") {
		return "a program name the shell computes"
	}
	if strings.Contains(prog, "/") {
		dir := path.Dir(prog)
		if dir != "/bin" && dir != "/usr/bin" && dir != "/usr/local/bin" {
			return fmt.Sprintf("%s is a program from the workspace or another folder, not a known read-only command", prog)
		}
		prog = path.Base(prog)
	}
	args := words[1:]
	switch prog {
	case "time", "nice", "nohup", "command", "timeout", "env", "xargs", "stdbuf":
		return roWrapper(prog, args)
	case "find":
		return roRefuseArgs(prog, args, roIsAny("-delete", "-fls"), roHasPrefix("-exec", "-ok", "-fprint"))
	case "rg":
		return roRefuseArgs(prog, args, roHasPrefix("--pre"))
	case "fd", "fdfind":
		return roRefuseArgs(prog, args, roIsAny("-x", "-X"), roHasPrefix("--exec"))
	case "sort":
		return roRefuseArgs(prog, args, roHasPrefix("-o", "--output"))
	case "tree":
		return roRefuseArgs(prog, args, roHasPrefix("-o"))
	case "date":
		return roRefuseArgs(prog, args, roHasPrefix("-s", "--set"))
	case "uniq":
		if roPositionals(args, "-f", "-s", "-w") > 1 {
			return "uniq with an output file"
		}
		return ""
	case "hostname":
		if roPositionals(args) > 0 {
			return "hostname with a new name"
		}
		return ""
	case "sed":
		return roSed(args)
	case "git":
		return roGit(args)
	case "go":
		return roGo(args)
	case "npm", "pnpm", "yarn":
		if len(args) > 0 && slices.Contains([]string{"ls", "list", "view", "info", "outdated", "why", "explain"}, args[0]) {
			return ""
		}
		return prog + " commands other than ls, view, outdated and why may install or run scripts"
	}
	if roPlain(prog) {
		return ""
	}
	return fmt.Sprintf("%s is not on the list of read-only commands", prog)
}

// roWrapper judges programs that run another command given after their
// own options.
func roWrapper(prog string, args []string) string {
	withValue := map[string][]string{
		"nice":    {"-n"},
		"timeout": {"-s", "-k", "--signal", "--kill-after"},
		"xargs":   {"-n", "-L", "-P", "-s", "-d", "-E", "-a", "-I", "--max-args", "--max-procs", "--delimiter"},
		"env":     {"-u", "--unset", "-C", "--chdir"},
		"stdbuf":  {"-i", "-o", "-e"},
	}[prog]
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if prog == "command" && (args[i] == "-v" || args[i] == "-V") {
			return "" // only says where a program is
		}
		if slices.Contains(withValue, args[i]) {
			i++
		}
		i++
	}
	if prog == "timeout" && i < len(args) {
		i++ // the duration
	}
	for prog == "env" && i < len(args) && strings.Contains(args[i], "=") {
		name := args[i][:strings.IndexByte(args[i], '=')]
		if !roEnvName(name) {
			return fmt.Sprintf("setting %s, which can change what programs run", name)
		}
		i++
	}
	if i >= len(args) {
		return "" // nothing to run; xargs runs echo
	}
	return roCommand(args[i:])
}

func roIsAny(names ...string) func(string) bool {
	return func(a string) bool { return slices.Contains(names, a) }
}

func roHasPrefix(prefixes ...string) func(string) bool {
	return func(a string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
		return false
	}
}

// roRefuseArgs refuses prog when an argument matches one of bad.
func roRefuseArgs(prog string, args []string, bad ...func(string) bool) string {
	for _, a := range args {
		for _, b := range bad {
			if b(a) {
				return fmt.Sprintf("%s %s can change files or run programs", prog, a)
			}
		}
	}
	return ""
}

// roPositionals counts the arguments that are not options, skipping the
// value after each option in withValue.
func roPositionals(args []string, withValue ...string) int {
	n := 0
	for i := 0; i < len(args); i++ {
		switch {
		case slices.Contains(withValue, args[i]):
			i++
		case strings.HasPrefix(args[i], "-") && args[i] != "-":
		default:
			n++
		}
	}
	return n
}

// roGit allows the git subcommands that only read the repository.
func roGit(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch {
		case args[i] == "--no-pager" || args[i] == "-P" || args[i] == "--no-optional-locks":
		case args[i] == "-C":
			i++
		default:
			// -c sets configuration, which can name programs to run.
			return fmt.Sprintf("git %s can change what git runs", args[i])
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	if why := roRefuseArgs("git "+sub, rest, roHasPrefix("--output", "--ext-diff", "-O", "--open-files-in-pager")); why != "" {
		return why
	}
	onlyOptions := func(allowed ...string) string {
		for _, a := range rest {
			if !slices.Contains(allowed, a) {
				return fmt.Sprintf("git %s %s may change the repository", sub, a)
			}
		}
		return ""
	}
	switch sub {
	case "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse", "describe",
		"shortlog", "cat-file", "show-ref", "rev-list", "merge-base", "name-rev", "whatchanged", "annotate",
		"count-objects", "ls-remote", "var", "check-ignore", "help", "version":
		return ""
	case "branch":
		return onlyOptions("-a", "-r", "-v", "-vv", "--all", "--remotes", "--list", "-l", "--show-current", "--verbose", "--no-color")
	case "tag":
		return onlyOptions("-l", "--list", "-n")
	case "remote":
		if len(rest) == 0 || slices.Contains([]string{"-v", "--verbose", "show", "get-url"}, rest[0]) {
			return ""
		}
	case "config":
		if len(rest) > 0 && slices.Contains([]string{"--get", "--get-all", "--list", "-l", "--get-regexp"}, rest[0]) {
			return ""
		}
	case "stash", "worktree", "reflog":
		if len(rest) > 0 && slices.Contains([]string{"list", "show"}, rest[0]) || sub == "reflog" && len(rest) == 0 {
			return ""
		}
	case "submodule":
		if len(rest) > 0 && rest[0] == "status" {
			return ""
		}
	}
	return fmt.Sprintf("git %s may change the repository", sub)
}

// roGo allows the go subcommands that build nothing into the workspace
// and run no code from it.
func roGo(args []string) string {
	if len(args) == 0 {
		return ""
	}
	sub, rest := args[0], args[1:]
	if why := roRefuseArgs("go "+sub, rest, roHasPrefix("-exec", "-toolexec", "-vettool", "-o", "-w", "-u", "-modfile")); why != "" {
		return why
	}
	switch sub {
	case "list", "doc", "version", "env", "vet", "help":
		return ""
	}
	return fmt.Sprintf("go %s may write files or run the workspace's code", sub)
}

// roSed allows sed scripts that only print: no -i, no script file, and no
// w, W or e commands or s///w and s///e flags.
func roSed(args []string) string {
	var scripts []string
	haveScript := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-i" || strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") ||
			strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "i"):
			return "sed -i edits files in place"
		case a == "-f" || strings.HasPrefix(a, "--file"):
			return "sed with a script file"
		case a == "-e" || a == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
			haveScript = true
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
			haveScript = true
		case strings.HasPrefix(a, "-"):
		case !haveScript:
			scripts = append(scripts, a)
			haveScript = true
		}
	}
	for _, s := range scripts {
		if roSedWrites(s) {
			return "a sed script that writes files or runs commands (w, W, e)"
		}
	}
	return ""
}

// roSedWrites scans a sed script for the commands and flags that write
// files or run commands. It skips addresses, regular expressions and
// text arguments; what it cannot follow counts as writing.
func roSedWrites(script string) bool {
	i := 0
	skipRegex := func(delim byte) bool {
		for i++; i < len(script) && script[i] != delim; i++ {
			if script[i] == '\\' {
				i++
			}
		}
		if i >= len(script) {
			return false
		}
		i++
		return true
	}
	for i < len(script) {
		c := script[i]
		switch {
		case strings.IndexByte(" \t\n;{}!,0123456789$~", c) >= 0:
			i++
		case c == '/':
			if !skipRegex('/') {
				return true
			}
		case c == '\\':
			if i+1 >= len(script) {
				return true
			}
			i++
			if !skipRegex(script[i]) {
				return true
			}
		case c == 's' || c == 'y':
			if i+1 >= len(script) {
				return true
			}
			i++
			delim := script[i]
			if !skipRegex(delim) {
				return true
			}
			i-- // skipRegex stepped past the middle delimiter
			if !skipRegex(delim) {
				return true
			}
			for i < len(script) && strings.IndexByte("gpiImM0123456789", script[i]) >= 0 {
				i++
			}
			if c == 's' && i < len(script) && (script[i] == 'w' || script[i] == 'e') {
				return true
			}
		case c == 'w' || c == 'W' || c == 'e':
			return true
		case strings.IndexByte("aicrR", c) >= 0:
			// Text to add, or a file to read: runs to the end of the line.
			nl := strings.IndexByte(script[i:], '\n')
			if nl < 0 {
				return false
			}
			i += nl
		case strings.IndexByte("btT:", c) >= 0:
			// A label runs to ";" or the end of the line.
			end := strings.IndexAny(script[i:], ";\n")
			if end < 0 {
				return false
			}
			i += end
		case strings.IndexByte("pPdDnNgGhHxlqQz=Fv", c) >= 0:
			i++
		default:
			return true
		}
	}
	return false
}
