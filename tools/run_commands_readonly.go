package tools

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// WhyNotReadOnly returns "" when a shell command line looks like it
// changes no files, and otherwise the reason it may: a program that is not
// on the read-only list, an option that makes a listed program write
// (sed -i, find -delete, sort -o, git log --output), output redirection
// to a file, or shell syntax the check does not judge (command
// substitution, subshells, background jobs, here-documents).
//
// It is a guard against a model changing files in plan mode by mistake,
// not a sandbox: it reads the line conservatively and refuses what it does
// not understand, but programs it allows can still misbehave (a git
// pager, a crafted find pattern), and nothing confines what a command can
// reach. Commands still run with the user's rights and need approval.
func WhyNotReadOnly(command string) string {
	cmds, why := roParse(command)
	if why != "" {
		return why
	}
	for _, words := range cmds {
		if why := roCommand(words); why != "" {
			return why
		}
	}
	return ""
}

// roParse splits a command line into simple commands (their words, with
// quotes removed) at ;, &&, ||, | and line breaks. It refuses syntax
// whose effect it does not follow.
func roParse(line string) (cmds [][]string, why string) {
	var words []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		next := byte(0)
		if i+1 < len(line) {
			next = line[i+1]
		}
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';':
			endCmd()
		case c == '&' && next == '&', c == '|' && next == '|':
			endCmd()
			i++
		case c == '|':
			endCmd()
			if next == '&' {
				i++ // |& pipes standard error too
			}
		case c == '&' && next == '>':
			// &> and &>> send both streams to a file.
			j := i + 2
			if j < len(line) && line[j] == '>' {
				j++
			}
			target, end := roRedirTarget(line, j)
			if target != "/dev/null" {
				return nil, "output redirection to a file (&>)"
			}
			endWord()
			i = end - 1
		case c == '&':
			return nil, "running a command in the background (&)"
		case c == '>' || c == '<':
			if next == '(' {
				return nil, "process substitution"
			}
			// A word of digits right before is the descriptor (2>).
			if inWord && !roAllDigits(word.String()) {
				endWord()
			}
			word.Reset()
			inWord = false
			if c == '<' {
				if next == '<' {
					if i+2 < len(line) && line[i+2] == '<' {
						i += 2 // <<< here-string: input only
						continue
					}
					return nil, "here-documents (<<)"
				}
				continue // input redirection only reads; the file is the next word
			}
			j := i + 1
			if j < len(line) && line[j] == '>' {
				j++
			} else if j < len(line) && line[j] == '|' {
				j++
			}
			if j < len(line) && line[j] == '&' {
				// >&2, 2>&1: duplicating a descriptor writes no file.
				k := j + 1
				for k < len(line) && line[k] >= '0' && line[k] <= '9' {
					k++
				}
				if k > j+1 || k < len(line) && line[k] == '-' {
					i = k - 1
					if k < len(line) && line[k] == '-' {
						i = k
					}
					continue
				}
				return nil, "output redirection to a file (>&)"
			}
			target, end := roRedirTarget(line, j)
			if target != "/dev/null" {
				return nil, "output redirection to a file (>)"
			}
			i = end - 1
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, "an unterminated quote"
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				switch {
				case line[j] == '\\' && j+1 < len(line):
					j++
					word.WriteByte(line[j])
				case line[j] == '`' || line[j] == '$' && j+1 < len(line) && line[j+1] == '(':
					return nil, "command substitution ($(...) or backquotes)"
				default:
					word.WriteByte(line[j])
				}
			}
			if j >= len(line) {
				return nil, "an unterminated quote"
			}
			inWord = true
			i = j
		case c == '\\':
			if i+1 < len(line) {
				if next != '\n' {
					word.WriteByte(next)
					inWord = true
				}
				i++
			}
		case c == '`' || c == '$' && next == '(':
			return nil, "command substitution ($(...) or backquotes)"
		case c == '(' || c == ')':
			return nil, "subshells ( )"
		case c == '#' && !inWord:
			nl := strings.IndexByte(line[i:], '\n')
			if nl < 0 {
				i = len(line)
			} else {
				i += nl - 1
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	if len(cmds) == 0 {
		return nil, "an empty command"
	}
	return cmds, ""
}

// roRedirTarget reads the word a redirection at line[j:] names (quotes
// removed only when simple) and where it ends.
func roRedirTarget(line string, j int) (string, int) {
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	start := j
	for j < len(line) && !strings.ContainsRune(" \t\n;&|<>()", rune(line[j])) {
		j++
	}
	return strings.Trim(line[start:j], `'"`), j
}

func roAllDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
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
