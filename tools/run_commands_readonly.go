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
					"git status/log/diff/show, go list/doc, written as plain words: no $, ~ or {a,b}, "+
					"options spelt in full, no output redirection to files. "+
					"Changing files needs act mode.", cmd, why)})
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return &ValidationError{Tool: NameRunCommands, Problems: probs}
}

// WhyNotReadOnly returns "" when a shell command line changes no files
// and runs nothing but known read-only programs, and otherwise the reason
// it may. Plan mode's refusal and the approval policy both ask this one
// function.
//
// The rule: the line is parsed with the shell's grammar (mvdan.cc/sh), and
// it is read-only only when it is simple commands joined at most by |,
// &&, || and ; (and { } groups), each of them read-only, where
//   - every word is text the check reads exactly as the shell will pass
//     it: quotes and backslashes are removed as the shell removes them,
//     and any expansion refuses the line — parameters ($x, ${x@P}),
//     command and process substitution, arithmetic ($((…)), $[…]),
//     braces ({a,b}, {1..3}), a leading or assigned ~, $'…' and $"…"
//     quoting, extended globs;
//   - a glob (*, ?, […]) is a word the shell may replace by file names,
//     and a file can be named like an option (-delete, -i): it is allowed
//     only where every name it can become is a file operand — it starts
//     with a character other than - (./*.go, src/*) or follows -- — or
//     for programs none of whose options writes or runs anything;
//   - there are no assignments, except a few variables that only change
//     formatting (LC_ALL, TZ…), set to a plain value for the one command;
//   - the only redirections read a file, duplicate a descriptor or write
//     to /dev/null, which keeps nothing;
//   - the program is on an allow-list, called by its name or from /bin,
//     /usr/bin or /usr/local/bin, and each of its options is on that
//     program's allow-list of options that neither write nor run
//     anything, parsed as the program parses them: short options bundled
//     (-uo out is -u -o out) with attached values (-e1wFILE), long ones
//     with =value or the next word, and never an abbreviation (--out
//     would be --output to GNU getopt; options must be spelt in full);
//   - programs that run other programs (env, timeout, nice, command,
//     stdbuf, xargs) are judged by the command they run; xargs adds
//     arguments the check never sees, so it may only run programs none
//     of whose options writes or runs anything.
//
// go vet, build and test are not read-only: they compile the packages
// (the build cache, cgo's C compiler) and vet and test run programs; go
// list and doc may fill the module cache, outside the workspace. git
// reads the repository's configuration, which can name programs it runs
// (core.fsmonitor, diff.external, textconv filters): the workspace's own
// repository's is the user's, and plan mode cannot change it, but one
// committed inside the workspace is not, so git is allowed only in the
// workspace folder (no cd before it on the line, no git -C, no env -C).
//
// The grammar read is bash's; where zsh reads a word differently (=word,
// parentheses in a word) the word is refused or the line does not parse.
//
// It is a guard against a model changing files in plan mode, not a
// sandbox: commands still run with the user's rights and need approval.
func WhyNotReadOnly(command string) string {
	if strings.TrimSpace(command) == "" {
		return "an empty command"
	}
	if strings.ContainsRune(command, '\r') {
		// The parser takes it for a blank; the shell, for part of a word.
		return "a carriage return, which the shell reads as part of a word; remove it"
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	if err != nil {
		if strings.Contains(err.Error(), "without closing quote") || strings.Contains(err.Error(), "must be closed") {
			return "an unterminated quote"
		}
		return "a command line the shell cannot parse (" + err.Error() + ")"
	}
	if len(file.Stmts) == 0 {
		return "an empty command"
	}
	// The parser continues a comment past a backslash and newline; the
	// shell ends it there and runs the next line.
	continued := false
	syntax.Walk(file, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && strings.Contains(c.Text, "\n") {
			continued = true
		}
		return !continued
	})
	if continued {
		return "a comment ending in \\, after which the shell runs the next line; remove the comment"
	}
	line := &roLine{}
	for _, st := range file.Stmts {
		if why := roStmt(line, st); why != "" {
			return why
		}
	}
	return ""
}

// roLine is what the check has seen earlier on the line that changes
// how later commands are judged.
type roLine struct {
	cd bool // the line changes folder, so git may find a repository inside the workspace
}

// roStmt judges one statement of the parsed command line: its
// redirections, then its command.
func roStmt(line *roLine, st *syntax.Stmt) string {
	if st.Background || st.Coprocess {
		return "running a command in the background (&)"
	}
	for _, r := range st.Redirs {
		if why := roRedirect(r); why != "" {
			return why
		}
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.BinaryCmd: // &&, ||, |, |&
		if why := roStmt(line, cmd.X); why != "" {
			return why
		}
		return roStmt(line, cmd.Y)
	case *syntax.Block:
		for _, s := range cmd.Stmts {
			if why := roStmt(line, s); why != "" {
				return why
			}
		}
		return ""
	case *syntax.TimeClause:
		if cmd.Stmt == nil {
			return ""
		}
		return roStmt(line, cmd.Stmt)
	case *syntax.CallExpr:
		return roCall(line, cmd)
	case *syntax.Subshell:
		return "subshells ( )"
	case *syntax.TestClause:
		return "[[ ]], which evaluates subscripts and arithmetic; use test"
	case *syntax.ArithmCmd:
		return "arithmetic (( )), which can run commands through subscripts"
	case nil:
		return "a line with redirections and no command"
	}
	return "compound commands (if, for, while, case, functions) are not judged"
}

// roCall judges a simple command: its assignments, then its words.
func roCall(line *roLine, cmd *syntax.CallExpr) string {
	if len(cmd.Args) == 0 {
		return "assignments to shell variables, which later commands would see"
	}
	for _, a := range cmd.Assigns {
		if a.Name == nil || a.Index != nil || a.Array != nil || a.Append || a.Naked {
			return "an assignment the check does not judge"
		}
		value := roWord{}
		if a.Value != nil {
			var why string
			if value, why = roWordOf(a.Value); why != "" {
				return why
			}
		}
		if why := roEnvAssign(a.Name.Value, value.text); why != "" {
			return why
		}
	}
	words := make([]roWord, len(cmd.Args))
	for i, w := range cmd.Args {
		var why string
		if words[i], why = roWordOf(w); why != "" {
			return why
		}
	}
	return roCommand(line, words, false)
}

// roRedirect allows reading a file, duplicating a descriptor and output
// to /dev/null, which keeps nothing; anything else may write a file.
func roRedirect(r *syntax.Redirect) string {
	if r.N != nil && strings.Trim(r.N.Value, "0123456789") != "" {
		return "a redirection that assigns a descriptor to a variable ({fd}>)"
	}
	target := roWord{}
	if r.Word != nil {
		var why string
		if target, why = roWordOf(r.Word); why != "" {
			return why
		}
		if target.glob {
			return "a redirection to a glob"
		}
	}
	if clean := path.Clean(target.text); r.Op != syntax.WordHdoc &&
		(strings.HasPrefix(clean, "/dev/tcp/") || strings.HasPrefix(clean, "/dev/udp/")) {
		return "a redirection to /dev/tcp or /dev/udp, which bash opens as a network connection"
	}
	switch r.Op {
	case syntax.RdrIn, syntax.WordHdoc:
		return ""
	case syntax.Hdoc, syntax.DashHdoc:
		return "here-documents (<<)"
	case syntax.DplIn, syntax.DplOut:
		if target.text == "-" || target.text != "" && strings.Trim(target.text, "0123456789") == "" {
			return "" // >&2, 2>&1, >&-: no file
		}
		if r.Op == syntax.DplOut && target.text == "/dev/null" {
			return ""
		}
		return "output redirection to a file (>&)"
	case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		if target.text == "/dev/null" {
			return ""
		}
		return "output redirection to a file (&>)"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob:
		if target.text == "/dev/null" {
			return ""
		}
		return "output redirection to a file (>)"
	}
	return "a redirection that may write a file (" + r.Op.String() + ")"
}

// roWord is a word as the program will receive it: text is the word
// with its quotes removed, and glob reports an unquoted *, ? or […], which
// the shell replaces by matching file names.
type roWord struct {
	text string
	glob bool
	// safe: the word is a glob whose every expansion starts as the word
	// does, with a character other than -, so none can be an option.
	safe bool
}

// roWordOf reads a word of the parsed line, or says why it cannot: a
// part the shell expands, or ~ and braces in its unquoted text.
func roWordOf(w *syntax.Word) (roWord, string) {
	var text []byte
	var quoted []bool
	add := func(s string, q bool) {
		text = append(text, s...)
		for range len(s) {
			quoted = append(quoted, q)
		}
	}
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if roJoinedDollar(p, i, len(w.Parts)) {
				return roWord{}, roDollarJoined
			}
			roUnquoteLit(p.Value, false, add)
		case *syntax.SglQuoted:
			if p.Dollar {
				return roWord{}, "ANSI-C quoting ($'...'); write the characters themselves"
			}
			add(p.Value, true)
		case *syntax.DblQuoted:
			if p.Dollar {
				return roWord{}, `locale quoting ($"...")`
			}
			for j, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return roWord{}, roExpansion(q)
				}
				if roJoinedDollar(lit, j, len(p.Parts)) {
					return roWord{}, roDollarJoined
				}
				roUnquoteLit(lit.Value, true, add)
			}
		default:
			return roWord{}, roExpansion(p)
		}
	}
	var word roWord
	word.text = string(text)
	// Bash expands a {…} holding an unquoted , or ..; this reads any such
	// pair, nested or not, as one.
	brace, comma := false, false
	for i, c := range text {
		if quoted[i] {
			continue
		}
		switch c {
		case '*', '?':
			word.glob = true
		case '[':
			if strings.IndexByte(word.text[i+1:], ']') >= 0 {
				word.glob = true
			}
		case '~':
			if i == 0 || !quoted[i-1] && (text[i-1] == '=' || text[i-1] == ':') {
				return roWord{}, "~, which the shell replaces by a home folder; write the path"
			}
		case '=':
			if i == 0 && len(text) > 1 {
				return roWord{}, "a word starting with =, which zsh replaces by a program's path"
			}
		case '{':
			brace = true
		case ',':
			comma = comma || brace
		case '.':
			comma = comma || brace && i+1 < len(text) && text[i+1] == '.' && !quoted[i+1]
		case '}':
			if comma {
				return roWord{}, "brace expansion ({a,b} or {1..3}); write each word"
			}
		}
	}
	word.safe = word.glob && len(text) > 0 && text[0] != '-' && (quoted[0] || strings.IndexByte("*?[", text[0]) < 0)
	return word, ""
}

// roJoinedDollar reports a literal part ending in $ that another part
// follows. The parser splits $ from what follows a line continuation
// ($\<newline>'\x2do' or $\<newline>{x}), but the shell removes the
// continuation first and expands $'\x2do' to -o, or ${x}.
func roJoinedDollar(lit *syntax.Lit, i, parts int) bool {
	return i < parts-1 && strings.HasSuffix(lit.Value, "$")
}

const roDollarJoined = "a $ that a line continuation joins to what follows, which the shell expands; join the line"

// roExpansion names a word part the shell expands.
func roExpansion(p syntax.WordPart) string {
	switch p.(type) {
	case *syntax.CmdSubst:
		return "command substitution ($(...) or backquotes)"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ArithmExp:
		return "arithmetic expansion ($((...))), which can run commands through subscripts"
	case *syntax.ParamExp:
		return "a variable ($x or ${x}); write its value"
	case *syntax.ExtGlob:
		return "an extended glob"
	}
	return "a word the shell computes"
}

// roUnquoteLit removes the backslashes the shell would: before any
// character outside quotes, before $ ` " \ and newline inside double
// quotes. A character a backslash quoted is passed on as quoted.
func roUnquoteLit(s string, inDouble bool, add func(string, bool)) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (!inDouble || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				add(s[i:i+1], true)
			}
			continue
		}
		add(s[i:i+1], inDouble)
	}
}

// roEnvAssign allows the variables a read-only command may set for
// itself: ones that change formatting, never which programs run or what
// they write, to a plain value.
func roEnvAssign(name, value string) string {
	switch name {
	case "LANG", "LC_ALL", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "TZ",
		"NO_COLOR", "TERM", "COLUMNS", "CLICOLOR":
	default:
		return fmt.Sprintf("setting %s; a command may set only LANG, LC_*, TZ, TERM, COLUMNS, NO_COLOR and CLICOLOR", name)
	}
	if strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@+") != "" {
		return fmt.Sprintf("setting %s to a value other than letters, digits and . _ - @ +", name)
	}
	return ""
}

// roCommand judges one simple command given as its words. unseen: the
// program also gets arguments the check cannot see (xargs).
func roCommand(line *roLine, words []roWord, unseen bool) string {
	if words[0].glob || words[0].text == "" {
		return "a program name the shell computes"
	}
	prog := words[0].text
	if strings.Contains(prog, "/") {
		dir := path.Dir(prog)
		if dir != "/bin" && dir != "/usr/bin" && dir != "/usr/local/bin" {
			return fmt.Sprintf("%s is a program from the workspace or another folder, not a known read-only command", prog)
		}
		prog = path.Base(prog)
	}
	p, ok := roPrograms[prog]
	if !ok {
		return fmt.Sprintf("%s is not on the list of read-only commands", prog)
	}
	if unseen && !p.anyArgs {
		return fmt.Sprintf("xargs adds arguments the check cannot see, and %s has options that write or run programs", prog)
	}
	if prog == "cd" {
		line.cd = true
	}
	if p.judge != nil {
		return p.judge(line, prog, words[1:])
	}
	a, why := roParse(prog, p.spec, words[1:], p.anyArgs)
	if why != "" {
		return why
	}
	if !p.anyArgs {
		return roFileOperands(prog, a.operands)
	}
	return ""
}

// roProgram is what the check knows of a program: the options it allows
// and how to judge its operands.
type roProgram struct {
	spec roSpec
	// anyArgs: no option of the program, in any version the check knows,
	// writes or runs anything, so words the check cannot see (glob
	// results, arguments from xargs) cannot make it do so.
	anyArgs bool
	// judge replaces the default: options by spec, operands read as files.
	judge func(line *roLine, prog string, args []roWord) string
}

// roSpec is a program's allow-list of options, in the shape its parser
// reads them.
type roSpec struct {
	// short: getopt letters; ':' after a letter, it takes a value
	// (attached or the next word); '::', only an attached value.
	short string
	// long, without the dashes: "name" takes no value; "name=" a value,
	// attached with = or the next word; "name:" only an attached =value;
	// "name?" an optional attached =value; "name=2" the next two words.
	long []string
	// digits: -NUM is a count (head -20, git log -5).
	digits bool
	// stop: options end at the first operand (getopt's "+"; commands
	// that run a command).
	stop bool
	// goFlags: Go's flag package: -name or --name, =value or the next
	// word, no bundles; a flag without a value is a boolean.
	goFlags bool
	// noBundle: each short option is its own word, any value the next.
	noBundle bool
}

type roOpt struct {
	name string // "-x" or "--name"
	vals []string
}

type roOperand struct {
	roWord
	afterDashes bool // after --, so never an option
}

type roArgs struct {
	opts     []roOpt
	operands []roOperand
}

func (a *roArgs) has(names ...string) bool {
	return slices.ContainsFunc(a.opts, func(o roOpt) bool { return slices.Contains(names, o.name) })
}

func (a *roArgs) values(names ...string) []string {
	var vs []string
	for _, o := range a.opts {
		if slices.Contains(names, o.name) {
			vs = append(vs, o.vals...)
		}
	}
	return vs
}

// roParse reads args as prog's option parser would, against spec; an
// option spec does not allow, or one it cannot read exactly, is refused.
// anyArgs: a glob may stand where an option would (every option is
// harmless).
func roParse(prog string, spec roSpec, args []roWord, anyArgs bool) (roArgs, string) {
	var a roArgs
	dashes := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		if dashes || len(t) < 2 || t[0] != '-' || w.glob && anyArgs {
			a.operands = append(a.operands, roOperand{w, dashes})
			if spec.stop && !dashes {
				for _, rest := range args[i+1:] {
					a.operands = append(a.operands, roOperand{rest, true})
				}
				return a, ""
			}
			continue
		}
		if w.glob {
			return a, fmt.Sprintf("%s %s: a glob where an option goes", prog, t)
		}
		if t == "--" {
			dashes = true
			continue
		}
		next := func() (string, string) {
			if i+1 >= len(args) {
				return "", fmt.Sprintf("%s %s needs a value", prog, t)
			}
			i++
			if args[i].glob {
				return "", fmt.Sprintf("%s %s: a glob as an option's value", prog, t)
			}
			return args[i].text, ""
		}
		var why string
		if spec.goFlags || strings.HasPrefix(t, "--") {
			var o roOpt
			o, why = roParseLong(prog, spec, t, next)
			a.opts = append(a.opts, o)
		} else {
			why = roParseShort(prog, spec, t, next, &a)
		}
		if why != "" {
			return a, why
		}
	}
	return a, ""
}

// roParseLong reads one long option (or a Go flag), exactly as spelt:
// an abbreviation is refused, since the program might read it as another
// option than the check would.
func roParseLong(prog string, spec roSpec, t string, next func() (string, string)) (roOpt, string) {
	body := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "-")
	name, val, hasVal := strings.Cut(body, "=")
	dash := "--"
	if spec.goFlags {
		dash = "-"
	}
	o := roOpt{name: dash + name}
	kind, ok := "", false
	for _, l := range spec.long {
		base := l
		for _, suffix := range []string{"=2", "=", ":", "?"} {
			if b, found := strings.CutSuffix(l, suffix); found {
				base = b
				break
			}
		}
		if base == name {
			kind, ok = l[len(base):], true
			break
		}
	}
	if !ok {
		return o, fmt.Sprintf("%s %s is not an option the check knows to be read-only (options must be spelt in full)", prog, dash+name)
	}
	switch kind {
	case "":
		if hasVal && !(spec.goFlags && (val == "true" || val == "false")) {
			return o, fmt.Sprintf("%s %s takes no value", prog, o.name)
		}
		if hasVal && val == "false" {
			o.name += "=false"
		}
	case "?":
		if hasVal {
			o.vals = []string{val}
		}
	case ":":
		if !hasVal {
			return o, fmt.Sprintf("%s %s needs its value attached: %s=VALUE", prog, o.name, o.name)
		}
		o.vals = []string{val}
	case "=":
		if !hasVal {
			var why string
			if val, why = next(); why != "" {
				return o, why
			}
		}
		o.vals = []string{val}
	case "=2":
		if hasVal {
			return o, fmt.Sprintf("%s %s takes two words", prog, o.name)
		}
		for range 2 {
			v, why := next()
			if why != "" {
				return o, why
			}
			o.vals = append(o.vals, v)
		}
	}
	return o, ""
}

// roParseShort reads a word of short options as getopt does: bundled
// letters, the first that takes a value taking the rest of the word or
// the next one.
func roParseShort(prog string, spec roSpec, t string, next func() (string, string), a *roArgs) string {
	if spec.digits && strings.Trim(t[1:], "0123456789") == "" {
		a.opts = append(a.opts, roOpt{name: "-NUM", vals: []string{t[1:]}})
		return ""
	}
	if spec.noBundle && len(t) != 2 {
		return fmt.Sprintf("%s %s: write each option as its own word", prog, t)
	}
	for j := 1; j < len(t); j++ {
		c := t[j]
		k := strings.IndexByte(spec.short, c)
		if c == ':' || k < 0 {
			if len(t) > 2 {
				return fmt.Sprintf("%s %s: -%c is not an option the check knows to be read-only", prog, t, c)
			}
			return fmt.Sprintf("%s %s is not an option the check knows to be read-only", prog, t)
		}
		o := roOpt{name: "-" + string(c)}
		colons := len(spec.short[k+1:]) - len(strings.TrimLeft(spec.short[k+1:], ":"))
		switch {
		case colons == 0:
			a.opts = append(a.opts, o)
			continue
		case colons >= 2:
			if j+1 < len(t) {
				o.vals = []string{t[j+1:]}
			}
		case j+1 < len(t):
			o.vals = []string{t[j+1:]}
		default:
			v, why := next()
			if why != "" {
				return why
			}
			o.vals = []string{v}
		}
		a.opts = append(a.opts, o)
		return ""
	}
	return ""
}

// roFileOperands allows operands that name files: a glob among them must
// not be able to become an option.
func roFileOperands(prog string, ops []roOperand) string {
	for _, o := range ops {
		if o.glob && !o.safe && !o.afterDashes {
			return fmt.Sprintf("%s %s: a glob can expand to a file named like an option (-delete, -i); "+
				"write ./%s, or put -- before it", prog, o.text, o.text)
		}
	}
	return ""
}

// roNoGlobs refuses globs among operands whose number or place matters.
func roNoGlobs(prog string, ops []roOperand) string {
	for _, o := range ops {
		if o.glob {
			return fmt.Sprintf("%s %s: a glob where the number of words matters", prog, o.text)
		}
	}
	return ""
}

// roWith judges prog by spec, then its operands by check.
func roWith(spec roSpec, check func(prog string, a *roArgs) string) func(*roLine, string, []roWord) string {
	return func(_ *roLine, prog string, args []roWord) string {
		a, why := roParse(prog, spec, args, false)
		if why != "" {
			return why
		}
		return check(prog, &a)
	}
}

var roPrograms map[string]roProgram

func init() {
	harmless := func(short string, long ...string) roProgram {
		return roProgram{spec: roSpec{short: short, long: long}, anyArgs: true}
	}
	files := func(short string, long ...string) roProgram {
		return roProgram{spec: roSpec{short: short, long: long}}
	}
	grep := roProgram{spec: roSpec{digits: true, short: "EFGPe:f:iyvwxcLlm:oqsbHhnTZzA:B:C:aId:D:rRU",
		long: []string{"extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "regexp=", "file=",
			"ignore-case", "no-ignore-case", "invert-match", "word-regexp", "line-regexp", "count", "color?", "colour?",
			"files-without-match", "files-with-matches", "max-count=", "only-matching", "quiet", "silent",
			"no-messages", "byte-offset", "with-filename", "no-filename", "label=", "line-number", "initial-tab",
			"null", "null-data", "after-context=", "before-context=", "context=", "text", "binary-files=",
			"devices=", "directories=", "exclude=", "exclude-from=", "exclude-dir=", "include=", "recursive",
			"dereference-recursive", "line-buffered", "binary", "no-line-number", "help", "version"}}, anyArgs: true}
	hashsum := harmless("bctzw", "binary", "check", "tag", "text", "zero", "ignore-missing", "quiet", "status",
		"strict", "warn", "help", "version")
	roPrograms = map[string]roProgram{
		"ls": harmless("aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1",
			"all", "almost-all", "author", "escape", "block-size=", "ignore-backups", "color?", "colour?",
			"classify?", "file-type", "format=", "full-time", "group-directories-first", "no-group",
			"human-readable", "si", "dereference-command-line", "dereference-command-line-symlink-to-dir",
			"hide=", "hyperlink?", "indicator-style=", "inode", "ignore=", "kibibytes", "dereference",
			"numeric-uid-gid", "literal", "hide-control-chars", "show-control-chars", "quote-name",
			"quoting-style=", "reverse", "recursive", "size", "sort=", "time=", "time-style=", "tabsize=",
			"width=", "context", "zero", "dired", "directory", "help", "version"),
		"cat": harmless("AbeEnstTuv", "show-all", "number-nonblank", "show-ends", "number", "squeeze-blank",
			"show-tabs", "show-nonprinting", "help", "version"),
		"head": {spec: roSpec{digits: true, short: "c:n:qvz", long: []string{"bytes=", "lines=", "quiet", "silent",
			"verbose", "zero-terminated", "help", "version"}}, anyArgs: true},
		"tail": {spec: roSpec{digits: true, short: "c:fFn:qs:vz", long: []string{"bytes=", "follow?", "lines=",
			"pid=", "quiet", "retry", "sleep-interval=", "silent", "verbose", "zero-terminated", "help", "version"}}, anyArgs: true},
		"wc": harmless("cmlLw", "bytes", "chars", "lines", "max-line-length", "words", "files0-from=", "total=",
			"help", "version"),
		"grep": grep, "egrep": grep, "fgrep": grep,
		"echo":     {judge: roAnything, anyArgs: true},
		"true":     {judge: roAnything, anyArgs: true},
		"false":    {judge: roAnything, anyArgs: true},
		"printf":   {judge: roPrintf},
		"test":     {judge: roTest},
		"[":        {judge: roTest},
		"pwd":      files("LP"),
		"cd":       files("LPe@"),
		"basename": harmless("as:z", "multiple", "suffix=", "zero", "help", "version"),
		"dirname":  harmless("z", "zero", "help", "version"),
		"realpath": harmless("emLPqsz", "canonicalize-existing", "canonicalize-missing", "logical", "physical",
			"quiet", "relative-to=", "relative-base=", "strip", "no-symlinks", "zero", "help", "version"),
		"readlink": harmless("femnqsvz", "canonicalize", "canonicalize-existing", "canonicalize-missing",
			"no-newline", "quiet", "silent", "verbose", "zero", "help", "version"),
		"stat": harmless("Lfc:t", "dereference", "file-system", "format=", "printf=", "terse", "cached=", "help", "version"),
		"file": files("bcEhiLkNnprsvzZ0e:F:P:",
			"brief", "mime", "mime-type", "mime-encoding", "dereference", "no-dereference", "keep-going",
			"no-pad", "no-buffer", "preserve-date", "raw", "special-files", "uncompress", "uncompress-noreport",
			"print0", "exclude=", "separator=", "parameter=", "extension", "apple", "help", "version"),
		"du": harmless("0abcd:hHklLmsSxX:B:t:", "null", "all", "apparent-size", "block-size=", "bytes", "total",
			"dereference-args", "max-depth=", "human-readable", "inodes", "dereference", "no-dereference",
			"count-links", "separate-dirs", "si", "summarize", "threshold=", "time?", "time-style=",
			"exclude-from=", "exclude=", "one-file-system", "files0-from=", "help", "version"),
		"df": harmless("ahHiklPTt:x:B:", "all", "block-size=", "human-readable", "si", "inodes", "local",
			"no-sync", "sync", "output?", "portability", "print-type", "total", "type=", "exclude-type=", "help", "version"),
		"which":    files("a"),
		"whereis":  files("bmsulBMSf"),
		"type":     files("afpPt"),
		"printenv": harmless("0", "null", "help", "version"),
		"uname": harmless("asnrvmpio", "all", "kernel-name", "nodename", "kernel-release", "kernel-version",
			"machine", "processor", "hardware-platform", "operating-system", "help", "version"),
		"whoami": harmless("", "help", "version"),
		"id":     harmless("agGnruzZ", "context", "group", "groups", "name", "real", "user", "zero", "help", "version"),
		"diff": files("abBcC:dD:eEfF:iI:lnNpPqrsS:tTuU:vwW:x:X:y",
			"normal", "brief", "report-identical-files", "context?", "unified?", "ed", "rcs", "side-by-side",
			"width=", "left-column", "suppress-common-lines", "show-c-function", "show-function-line=",
			"label=", "expand-tabs", "initial-tab", "tabsize=", "suppress-blank-empty", "new-file",
			"unidirectional-new-file", "ignore-case", "ignore-tab-expansion", "ignore-trailing-space",
			"ignore-space-change", "ignore-all-space", "ignore-blank-lines", "ignore-matching-lines=",
			"strip-trailing-cr", "text", "minimal", "horizon-lines=", "speed-large-files", "recursive",
			"no-dereference", "exclude=", "exclude-from=", "starting-file=", "from-file=", "to-file=",
			"color?", "palette=", "ifdef=", "help", "version"),
		"cmp":  files("bi:ln:s", "print-bytes", "ignore-initial=", "verbose", "bytes=", "quiet", "silent", "help", "version"),
		"comm": files("123z", "check-order", "nocheck-order", "output-delimiter=", "total", "zero-terminated", "help", "version"),
		"cut": harmless("b:c:d:f:nsz", "bytes=", "characters=", "delimiter=", "fields=", "complement", "only-delimited",
			"output-delimiter=", "zero-terminated", "help", "version"),
		"tr":       harmless("cCdst", "complement", "delete", "squeeze-repeats", "truncate-set1", "help", "version"),
		"nl":       harmless("b:d:f:h:i:l:n:ps:v:w:", "body-numbering=", "section-delimiter=", "footer-numbering=", "header-numbering=", "line-increment=", "join-blank-lines=", "number-format=", "no-renumber", "number-separator=", "starting-line-number=", "number-width=", "help", "version"),
		"rev":      harmless(""),
		"tac":      harmless("brs:", "before", "regex", "separator=", "help", "version"),
		"fold":     harmless("bsw:", "bytes", "spaces", "width=", "help", "version"),
		"expand":   harmless("it:", "initial", "tabs=", "help", "version"),
		"unexpand": harmless("at:", "all", "first-only", "tabs=", "help", "version"),
		"column":   files("tn:exdJLs:o:c:l:N:R:", "table", "separator=", "output-separator=", "output-width=", "fillrows", "help", "version"),
		"paste":    files("d:sz", "delimiters=", "serial", "zero-terminated", "help", "version"),
		"join":     files("a:e:ij:o:t:v:1:2:z", "check-order", "nocheck-order", "header", "ignore-case", "zero-terminated", "help", "version"),
		"md5sum":   hashsum, "sha1sum": hashsum, "sha256sum": hashsum, "sha512sum": hashsum,
		"cksum": harmless("a:l:", "algorithm=", "length=", "tag", "untagged", "check", "raw", "base64", "help", "version"),
		"od": harmless("A:j:N:S:t:vw::abcdfilosx", "address-radix=", "skip-bytes=", "read-bytes=", "strings?",
			"format=", "output-duplicates", "width?", "endian=", "traditional", "help", "version"),
		"hexdump": files("bcCdovxn:s:e:"),
		"strings": {spec: roSpec{digits: true, short: "adfn:t:e:wo", long: []string{"all", "data", "print-file-name", "bytes=", "radix=", "encoding=", "include-all-whitespace", "help", "version"}}},
		"seq":     {spec: roSpec{digits: true, short: "f:s:w", long: []string{"format=", "separator=", "equal-width", "help", "version"}}, anyArgs: true},
		"uptime":  harmless("ps", "pretty", "since", "help", "version"),
		"free":    harmless("bkmghlLtvw", "bytes", "kibi", "mebi", "gibi", "human", "lohi", "total", "wide", "si", "help", "version"),
		"ps":      {judge: roAnything, anyArgs: true}, // procps' ps: no option writes or runs, and its three grammars are not getopt's
		"pgrep":   files("lafxnovcd:u:U:P:g:G:s:t:", "list-name", "list-full", "full", "exact", "newest", "oldest", "inverse", "count", "delimiter=", "euid=", "uid=", "parent=", "pgroup=", "group=", "session=", "terminal=", "ignore-case", "help", "version"),
		"locale":  harmless("amckv", "all-locales", "charmaps", "category-name", "keyword-name", "verbose", "help", "version"),
		"look":    files("dft:"),
		"jq": files("rjacnseSCMRL:f:", "raw-output", "join-output", "ascii-output", "compact-output", "null-input",
			"slurp", "exit-status", "sort-keys", "color-output", "monochrome-output", "raw-input", "tab", "indent=",
			"arg=2", "argjson=2", "slurpfile=2", "rawfile=2", "from-file=", "seq", "stream", "raw-output0", "help", "version"),
		"rg": files("nNiISswvlcFxe:g:t:T:A:B:C:uLm:d:HoqaUP0M:j:z",
			"line-number", "no-line-number", "ignore-case", "case-sensitive", "smart-case", "word-regexp",
			"invert-match", "files-with-matches", "files-without-match", "count", "count-matches", "fixed-strings",
			"line-regexp", "regexp=", "glob=", "iglob=", "type=", "type-not=", "after-context=", "before-context=",
			"context=", "unrestricted", "hidden", "no-ignore", "no-ignore-vcs", "no-ignore-parent", "follow",
			"max-count=", "max-depth=", "max-filesize=", "with-filename", "no-filename", "heading", "no-heading",
			"only-matching", "quiet", "text", "multiline", "multiline-dotall", "pcre2", "null", "max-columns=",
			"max-columns-preview", "files", "json", "vimgrep", "column", "trim", "sort=", "sortr=", "type-list",
			"stats", "no-messages", "color=", "colors=", "passthru", "byte-offset", "replace=", "threads=",
			"glob-case-insensitive", "engine=", "debug", "no-config", "help", "version"),
		"fd": files("HIusiglaLp0d:t:e:E:S:o:c:j:1qF", "hidden", "no-ignore", "no-ignore-vcs", "unrestricted",
			"case-sensitive", "ignore-case", "glob", "regex", "fixed-strings", "absolute-path", "list-details",
			"follow", "full-path", "print0", "max-depth=", "min-depth=", "exact-depth=", "type=", "extension=",
			"exclude=", "size=", "changed-within=", "changed-before=", "owner=", "color=", "threads=",
			"max-results=", "quiet", "search-path=", "strip-cwd-prefix?", "help", "version"),
		"tree": {spec: roSpec{noBundle: true, short: "adfilL:P:I:xshDpugCnFrtcvUNQqJX",
			long: []string{"noreport", "dirsfirst", "gitignore", "prune", "charset=", "filelimit=", "du", "si",
				"matchdirs", "ignore-case", "help", "version"}}},
		"sort": {spec: roSpec{short: "bdfgiMhnRrVcCk:mst:uzS:", long: []string{"ignore-leading-blanks",
			"dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting", "month-sort",
			"human-numeric-sort", "numeric-sort", "random-sort", "reverse", "version-sort", "sort=", "check?",
			"key=", "merge", "stable", "field-separator=", "unique", "zero-terminated", "buffer-size=",
			"parallel=", "debug", "help", "version"}}},
		"uniq": {judge: roWith(roSpec{short: "cdDf:is:uw:z", long: []string{"count", "repeated", "all-repeated?",
			"skip-fields=", "ignore-case", "skip-chars=", "unique", "check-chars=", "zero-terminated", "group?",
			"help", "version"}}, func(prog string, a *roArgs) string {
			if len(a.operands) > 1 {
				return "uniq with an output file"
			}
			return roNoGlobs(prog, a.operands)
		})},
		"date": {judge: roWith(roSpec{short: "d:I::Rr:u", long: []string{"date=", "iso-8601?", "rfc-3339=",
			"rfc-email", "reference=", "utc", "universal", "debug", "resolution", "help", "version"}},
			func(prog string, a *roArgs) string {
				for _, o := range a.operands {
					if o.glob || !strings.HasPrefix(o.text, "+") {
						return "date with an operand other than +FORMAT sets the clock"
					}
				}
				return ""
			})},
		"hostname": {judge: roWith(roSpec{short: "fsdiIaA", long: []string{"fqdn", "long", "short", "domain",
			"ip-address", "all-ip-addresses", "alias", "all-fqdns", "help", "version"}},
			func(prog string, a *roArgs) string {
				if len(a.operands) > 0 {
					return "hostname with a new name"
				}
				return ""
			})},
		"zcat":    files(""),
		"sed":     {judge: roSed},
		"find":    {judge: roFind},
		"git":     {judge: roGit},
		"go":      {judge: roGo},
		"env":     {judge: roWrapper(roSpec{stop: true, short: "iu:0C:", long: []string{"ignore-environment", "unset=", "null", "chdir="}})},
		"timeout": {judge: roWrapper(roSpec{stop: true, short: "s:k:v", long: []string{"signal=", "kill-after=", "preserve-status", "foreground", "verbose"}})},
		"nice":    {judge: roWrapper(roSpec{stop: true, digits: true, short: "n:", long: []string{"adjustment="}})},
		"stdbuf":  {judge: roWrapper(roSpec{stop: true, short: "i:o:e:", long: []string{"input=", "output=", "error="}})},
		"command": {judge: roWrapper(roSpec{stop: true, short: "pvV"})},
		"time":    {judge: roWrapper(roSpec{stop: true, short: "pv", long: []string{"portability", "verbose"}})},
		"xargs":   {judge: roXargs},
	}
}

// roAnything judges programs that treat every word as text to print.
func roAnything(*roLine, string, []roWord) string { return "" }

// roPrintf allows the shell's printf without -v, which assigns to a
// variable (evaluating any subscript in its name).
func roPrintf(_ *roLine, prog string, args []roWord) string {
	if len(args) > 0 && args[0].text == "--" && !args[0].glob {
		args = args[1:]
		if len(args) > 0 && args[0].glob {
			return "printf with a glob for its format"
		}
	} else if len(args) > 0 && (args[0].glob || strings.HasPrefix(args[0].text, "-")) {
		return "printf with an option (printf -v assigns to a variable)"
	}
	return ""
}

// roTest allows test and [ with file and string tests; -v and -R name
// variables, whose subscripts the shell evaluates.
func roTest(_ *roLine, prog string, args []roWord) string {
	for _, a := range args {
		if a.glob {
			return prog + " with a glob, which can expand to an operator"
		}
		if a.text == "-v" || a.text == "-R" {
			return prog + " " + a.text + " evaluates a variable's subscript, which can run commands"
		}
	}
	return ""
}

// roWrapper judges a program that runs the command after its own
// options, by that command.
func roWrapper(spec roSpec) func(*roLine, string, []roWord) string {
	return func(line *roLine, prog string, args []roWord) string {
		a, why := roParse(prog, spec, args, false)
		if why != "" {
			return why
		}
		if prog == "command" && a.has("-v", "-V") {
			return "" // only says where a program is
		}
		if a.has("-C", "--chdir") {
			line.cd = true
		}
		words := make([]roWord, len(a.operands))
		for i, o := range a.operands {
			words[i] = o.roWord
		}
		if prog == "timeout" {
			if len(words) == 0 || words[0].glob {
				return "timeout without a duration"
			}
			words = words[1:]
		}
		for prog == "env" && len(words) > 0 && strings.Contains(words[0].text, "=") {
			name, value, _ := strings.Cut(words[0].text, "=")
			if words[0].glob {
				return "env with a glob"
			}
			if why := roEnvAssign(name, value); why != "" {
				return why
			}
			words = words[1:]
		}
		if len(words) == 0 {
			if prog == "env" || prog == "time" {
				return ""
			}
			return prog + " without a command"
		}
		return roCommand(line, words, false)
	}
}

// roXargs judges xargs by the command it runs, which gets arguments the
// check never sees.
func roXargs(line *roLine, prog string, args []roWord) string {
	a, why := roParse(prog, roSpec{stop: true, short: "0a:d:E:I:L:n:P:rs:tx", long: []string{"null",
		"arg-file=", "delimiter=", "eof?", "replace?", "max-lines?", "max-args=", "max-procs=",
		"no-run-if-empty", "max-chars=", "verbose", "exit"}}, args, false)
	if why != "" {
		return why
	}
	if len(a.operands) == 0 {
		return "" // it runs echo
	}
	words := make([]roWord, len(a.operands))
	for i, o := range a.operands {
		words[i] = o.roWord
	}
	return roCommand(line, words, true)
}

// roFind judges find's options, paths and expression: each primary must
// be one that only tests or prints.
func roFind(_ *roLine, prog string, args []roWord) string {
	i := 0
	for i < len(args) && !args[i].glob && slices.Contains([]string{"-H", "-L", "-P"}, args[i].text) {
		i++
	}
	exprStart := func(w roWord) bool {
		t := w.text
		return len(t) > 1 && t[0] == '-' || t == "(" || t == ")" || t == "!" || t == ","
	}
	for ; i < len(args) && !exprStart(args[i]); i++ {
		if args[i].glob && !args[i].safe {
			return fmt.Sprintf("find %s: a glob can expand to a file named like an expression (-delete); write ./%s", args[i].text, args[i].text)
		}
	}
	for ; i < len(args); i++ {
		w := args[i]
		if w.glob {
			return fmt.Sprintf("find %s: a glob in find's expression; quote it", w.text)
		}
		t := w.text
		switch {
		case slices.Contains(roFindFlags, t):
		case slices.Contains(roFindValued, t) || len(t) == 8 && strings.HasPrefix(t, "-newer") &&
			strings.IndexByte("aBcmt", t[6]) >= 0 && strings.IndexByte("aBcmt", t[7]) >= 0 && t[7] != 'B':
			if i+1 >= len(args) {
				return "find " + t + " needs a value"
			}
			i++
			if args[i].glob {
				return fmt.Sprintf("find %s %s: a glob as a value; quote it", t, args[i].text)
			}
		default:
			return fmt.Sprintf("find %s can change files or run programs, or the check does not know it", t)
		}
	}
	return ""
}

var roFindFlags = []string{"(", ")", "!", ",", "-not", "-a", "-and", "-o", "-or", "-depth", "-mount", "-xdev",
	"-noleaf", "-daystart", "-follow", "-ignore_readdir_race", "-noignore_readdir_race", "-warn", "-nowarn",
	"-empty", "-readable", "-writable", "-executable", "-true", "-false", "-nouser", "-nogroup",
	"-print", "-print0", "-ls", "-prune", "-quit", "-help", "--help", "-version", "--version"}

var roFindValued = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
	"-iregex", "-lname", "-ilname", "-type", "-xtype", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
	"-cmin", "-used", "-newer", "-anewer", "-cnewer", "-perm", "-user", "-group", "-uid", "-gid", "-links",
	"-samefile", "-inum", "-maxdepth", "-mindepth", "-regextype", "-printf", "-context", "-fstype"}

// roSed allows sed scripts that only print: no -i, no script file, and no
// w, W or e commands or s///w and s///e flags.
func roSed(_ *roLine, prog string, args []roWord) string {
	a, why := roParse(prog, roSpec{short: "ne:Erszubl:", long: []string{"quiet", "silent", "expression=",
		"regexp-extended", "separate", "null-data", "zero-terminated", "unbuffered", "binary", "line-length=",
		"posix", "debug", "sandbox", "follow-symlinks", "help", "version"}}, args, false)
	if why != "" {
		return why
	}
	scripts := a.values("-e", "--expression")
	files := a.operands
	if !a.has("-e", "--expression") {
		if len(files) == 0 {
			return ""
		}
		if files[0].glob {
			return "a sed script that is a glob"
		}
		scripts, files = []string{files[0].text}, files[1:]
	}
	// GNU sed joins the -e pieces with newlines into one script.
	if roSedWrites(strings.Join(scripts, "\n")) {
		return "a sed script that writes files or runs commands (w, W, e), or that the check cannot follow"
	}
	return roFileOperands(prog, files)
}

// roSedWrites scans a sed script for the commands and flags that write
// files or run commands. It skips addresses, regular expressions and
// text arguments; what it cannot follow counts as writing. GNU sed reads
// a bracket expression in a regular expression as one unit (s/[/]/x/w f
// writes), others may not, and a backslash inside brackets is read either
// way: the script writes if any of these readings finds a write.
func roSedWrites(script string) bool {
	for reading := range 3 {
		if roSedScan(script, reading) {
			return true
		}
	}
	return false
}

// roSedScan is one reading of a sed script for roSedWrites: 0 reads
// brackets as plain characters, 1 as units with literal backslashes, 2
// as units whose backslashes escape.
func roSedScan(script string, reading int) bool {
	i := 0
	// skipBracket steps i past a bracket expression starting at i, if
	// the reading has them and it is closed.
	skipBracket := func() {
		if reading == 0 {
			return
		}
		j := i + 1
		if j < len(script) && script[j] == '^' {
			j++
		}
		if j < len(script) && script[j] == ']' {
			j++
		}
		for ; j < len(script) && script[j] != ']'; j++ {
			switch {
			case script[j] == '[' && j+1 < len(script) && strings.IndexByte(":.=", script[j+1]) >= 0:
				end := strings.Index(script[j+2:], string(script[j+1])+"]")
				if end < 0 {
					return
				}
				j += end + 3
			case script[j] == '\\' && reading == 2:
				j++
			}
		}
		if j < len(script) {
			i = j
		}
	}
	skip := func(delim byte, brackets bool) bool {
		for i++; i < len(script) && script[i] != delim; i++ {
			switch {
			case script[i] == '\\':
				i++
			case script[i] == '[' && brackets:
				skipBracket()
			}
		}
		if i >= len(script) {
			return false
		}
		i++
		return true
	}
	skipRegex := func(delim byte) bool { return skip(delim, true) }
	toEnd := func(stops string) bool {
		end := strings.IndexAny(script[i:], stops)
		if end < 0 {
			i = len(script)
			return true
		}
		i += end
		return true
	}
	for i < len(script) {
		c := script[i]
		switch {
		case strings.IndexByte(" \t\n;{}!,0123456789$~+", c) >= 0:
			i++
		case c == '#':
			toEnd("\n")
		case c == '/':
			if !skipRegex('/') {
				return true
			}
			for i < len(script) && (script[i] == 'I' || script[i] == 'M') {
				i++
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
			if i+1 >= len(script) || script[i+1] == '\\' || script[i+1] == '\n' {
				return true
			}
			i++
			delim := script[i]
			if !skip(delim, c == 's') {
				return true
			}
			i-- // skipRegex stepped past the middle delimiter
			if !skip(delim, false) {
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
			toEnd("\n") // text to add, or a file to read
		case strings.IndexByte("btT:", c) >= 0:
			// A label: GNU sed skips blanks before it and ends it at one.
			i++
			for i < len(script) && (script[i] == ' ' || script[i] == '\t') {
				i++
			}
			toEnd("; \t\n")
		case strings.IndexByte("pPdDnNgGhHxlqQz=Fv", c) >= 0:
			i++
		default:
			return true
		}
	}
	return false
}

// roGitElsewhere refuses git run in another folder than the workspace's:
// a repository committed inside the workspace (a bare one needs no .git)
// brings a configuration that can name programs git runs.
const roGitElsewhere = "git in another folder (cd, -C) may read a repository inside the workspace whose " +
	"configuration runs programs (diff.external, core.fsmonitor); run git from the workspace folder and name paths after --"

// roGitDiffOpts are the options of git's diff machinery that only change
// what is printed (log, show, diff and their kin share them).
var roGitDiffOpts = []string{"patch", "no-patch", "unified:", "raw", "patch-with-raw", "stat?", "numstat",
	"shortstat", "dirstat?", "summary", "patch-with-stat", "name-only", "name-status", "color?", "no-color",
	"word-diff?", "word-diff-regex:", "color-words?", "color-moved?", "no-color-moved", "no-renames", "check",
	"full-index", "binary", "abbrev?", "find-renames?", "find-copies?", "find-copies-harder",
	"irreversible-delete", "pickaxe-all", "pickaxe-regex", "text", "ignore-space-at-eol", "ignore-all-space",
	"ignore-space-change", "ignore-blank-lines", "ignore-cr-at-eol", "function-context", "exit-code", "quiet",
	"no-ext-diff", "no-textconv", "ignore-submodules?", "src-prefix:", "dst-prefix:", "no-prefix",
	"histogram", "patience", "minimal", "diff-algorithm:", "diff-filter:", "relative?", "no-relative",
	"compact-summary", "stat-width:", "stat-count:", "submodule?", "indent-heuristic", "no-indent-heuristic",
	"inter-hunk-context:", "output-indicator-new:", "output-indicator-old:", "output-indicator-context:"}

// roGitLogOpts are the revision-walking and formatting options of
// git log and its kin.
var roGitLogOpts = []string{"oneline", "graph", "decorate?", "no-decorate", "all", "branches?", "tags?",
	"remotes?", "max-count=", "skip:", "since=", "after=", "until=", "before=", "author=", "committer=",
	"grep=", "all-match", "invert-grep", "regexp-ignore-case", "extended-regexp", "fixed-strings",
	"perl-regexp", "basic-regexp", "merges", "no-merges", "first-parent", "reverse", "follow", "format:",
	"pretty?", "abbrev-commit", "no-abbrev-commit", "date:", "relative-date", "left-right", "cherry-pick",
	"cherry-mark", "cherry", "boundary", "topo-order", "date-order", "author-date-order", "parents",
	"children", "source", "walk-reflogs", "ancestry-path", "simplify-by-decoration", "full-history",
	"no-notes", "mailmap", "use-mailmap", "no-mailmap", "log-size", "cc", "combined-all-paths", "no-walk?",
	"do-walk", "min-parents:", "max-parents:", "no-min-parents", "no-max-parents", "not", "exclude:",
	"count", "objects", "left-only", "right-only", "show-linear-break?", "date-order", "encoding:",
	"expand-tabs?", "no-expand-tabs", "show-pulls", "sparse", "remerge-diff", "diff-merges:", "no-diff-merges",
	"dd", "single-worktree", "glob:", "stdin", "default="}

func roGitSpec(short string, long ...[]string) roSpec {
	return roSpec{digits: true, short: short, long: slices.Concat(long...)}
}

var (
	roGitDiffShort = "psuU::zaM::C::B::DS:G:RbwWl:"
	roGitLogShort  = roGitDiffShort + "n:iEFPgmcL:"
	roGitLog       = roGitSpec(roGitLogShort, roGitDiffOpts, roGitLogOpts)
	roGitDiff      = roGitSpec(roGitDiffShort, roGitDiffOpts, []string{"cached", "staged", "merge-base", "no-index"})
)

// roGitSubs are the git subcommands that only read, with their options.
var roGitSubs = map[string]roSpec{
	"log": roGitLog, "show": roGitLog, "whatchanged": roGitLog,
	// rev-list has no -L: it would read the range as a revision.
	"rev-list":  roGitSpec(strings.TrimSuffix(roGitLogShort, "L:"), roGitDiffOpts, roGitLogOpts),
	"diff":      roGitDiff,
	"diff-tree": roGitSpec(roGitDiffShort+"rtvm", roGitDiffOpts, []string{"root", "no-commit-id", "stdin", "merge-base", "always"}),
	// shortlog reads its own options first: its --committer is a flag.
	"shortlog": roGitSpec("snecw::", []string{"summary", "numbered", "email", "committer", "group:", "format:",
		"all", "branches?", "tags?", "remotes?", "since=", "after=", "until=", "before=", "author=", "grep=",
		"merges", "no-merges", "first-parent", "max-count=", "reverse"}),
	"status": {short: "sbu::zv", long: []string{"short", "branch", "porcelain?", "long", "verbose",
		"untracked-files?", "ignored?", "ignore-submodules?", "null", "show-stash", "ahead-behind",
		"no-ahead-behind", "column?", "no-column", "renames", "no-renames", "find-renames?"}},
	"blame": {short: "L:ltS:pescwM::C::nf", long: []string{"reverse:", "porcelain", "line-porcelain",
		"incremental", "show-email", "root", "show-stats", "score-debug", "show-number", "show-name",
		"date:", "abbrev?", "ignore-rev:", "ignore-revs-file:", "contents:", "color-lines", "color-by-age",
		"minimal", "first-parent", "progress", "no-progress"}},
	"grep": {digits: true, short: "niwvlLchHe:EFGPIoqzpWA:B:C:arf:", long: []string{"line-number", "ignore-case",
		"word-regexp", "invert-match", "files-with-matches", "name-only", "files-without-match", "count",
		"full-name", "extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "cached", "untracked",
		"no-index", "recurse-submodules", "only-matching", "quiet", "null", "column", "show-function",
		"function-context", "after-context:", "before-context:", "context:", "max-depth:", "and", "or", "not",
		"all-match", "break", "heading", "color?", "no-color", "text", "threads:", "recursive", "no-recursive",
		"exclude-standard", "no-exclude-standard", "max-count:"}},
	"ls-files": {short: "cdmoisukztvfx:X:", long: []string{"cached", "deleted", "modified", "others", "ignored",
		"stage", "unmerged", "killed", "exclude:", "exclude-standard", "exclude-from:", "exclude-per-directory:",
		"directory", "no-empty-directory", "full-name", "error-unmatch", "abbrev?", "debug", "eol",
		"deduplicate", "format:", "recurse-submodules", "sparse", "resolve-undo"}},
	"ls-tree": {short: "drtlz", long: []string{"long", "name-only", "name-status", "object-only", "full-name",
		"full-tree", "abbrev?", "format:"}},
	"rev-parse": {short: "q", long: []string{"abbrev-ref?", "short?", "verify", "show-toplevel", "show-prefix",
		"show-cdup", "git-dir", "absolute-git-dir", "is-inside-work-tree", "is-inside-git-dir",
		"is-bare-repository", "is-shallow-repository", "symbolic-full-name", "symbolic", "all", "branches?",
		"tags?", "remotes?", "git-common-dir", "show-superproject-working-tree", "quiet", "sq", "revs-only",
		"no-revs", "flags", "no-flags", "default:", "since:", "until:", "show-object-format?", "show-ref-format",
		"local-env-vars", "resolve-git-dir:", "git-path:", "shared-index-path", "path-format:"}},
	"describe": {long: []string{"tags", "all", "long", "abbrev?", "always", "dirty?", "broken?", "exact-match",
		"match:", "exclude:", "contains", "first-parent", "candidates:", "debug"}},
	"cat-file": {short: "tsep", long: []string{"batch?", "batch-check?", "batch-command?", "batch-all-objects",
		"buffer", "follow-symlinks", "unordered", "allow-unknown-type", "mailmap", "use-mailmap", "no-mailmap"}},
	"show-ref": {short: "dsq", long: []string{"head", "heads", "tags", "branches", "dereference", "hash?",
		"abbrev?", "verify", "quiet", "exists"}},
	"merge-base":    {long: []string{"all", "octopus", "independent", "is-ancestor", "fork-point"}},
	"name-rev":      {long: []string{"tags", "refs:", "exclude:", "all", "annotate-stdin", "name-only", "no-undefined", "always"}},
	"count-objects": {short: "vH", long: []string{"verbose", "human-readable"}},
	"check-ignore":  {short: "qvnz", long: []string{"quiet", "verbose", "non-matching", "no-index", "stdin"}},
	"version":       {long: []string{"build-options"}},
	"for-each-ref": {long: []string{"format:", "sort:", "count:", "points-at:", "merged?", "no-merged?",
		"contains?", "no-contains?", "shell", "perl", "python", "tcl", "ignore-case", "exclude:", "color?",
		"omit-empty", "include-root-refs"}},
	"branch": {short: "larvi", long: []string{"list", "all", "remotes", "verbose", "show-current", "no-color",
		"color?", "contains?", "no-contains?", "merged?", "no-merged?", "points-at:", "sort:", "format:",
		"column?", "no-column", "abbrev?", "no-abbrev", "ignore-case", "omit-empty"}},
	"tag": {short: "ln::i", long: []string{"list", "sort:", "contains?", "no-contains?", "merged?", "no-merged?",
		"points-at:", "format:", "column?", "no-column", "ignore-case", "color?", "omit-empty"}},
}

// roGit allows the git subcommands that only read the repository, with
// options that only change what they print.
func roGit(line *roLine, prog string, args []roWord) string {
	if line.cd {
		return roGitElsewhere
	}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i].text, "-"); i++ {
		switch t := args[i].text; {
		case args[i].glob:
			return "git with a glob where an option goes"
		case t == "-C":
			return roGitElsewhere
		case slices.Contains([]string{"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs",
			"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--version"}, t):
		default:
			// -c, --config-env, --exec-path=, --git-dir and the rest
			// change which programs git runs or which repository it reads.
			return fmt.Sprintf("git %s can change what git runs", t)
		}
	}
	if i >= len(args) {
		return ""
	}
	if args[i].glob {
		return "git with a glob for a subcommand"
	}
	sub, rest := args[i].text, args[i+1:]
	name := "git " + sub
	switch sub {
	case "stash", "worktree", "reflog", "remote", "config":
		return roGitNested(name, sub, rest)
	}
	spec, ok := roGitSubs[sub]
	if !ok {
		return fmt.Sprintf("git %s may change the repository or run programs", sub)
	}
	a, why := roParse(name, spec, rest, false)
	if why != "" {
		return why
	}
	if (sub == "branch" || sub == "tag") && len(a.operands) > 0 && !a.has("-l", "--list") {
		return fmt.Sprintf("git %s with a name creates one; list with git %s --list PATTERN", sub, sub)
	}
	return roFileOperands(name, a.operands)
}

// roGitNested judges the git commands whose first word is a subcommand
// of their own, allowing only those that read.
func roGitNested(name, sub string, rest []roWord) string {
	first := ""
	if len(rest) > 0 && !rest[0].glob {
		first = rest[0].text
	}
	var spec roSpec
	maxOperands := 1
	switch {
	case sub == "stash" && first == "list":
		spec = roGitLog
	case sub == "stash" && first == "show":
		spec = roGitDiff
	case sub == "worktree" && first == "list":
		spec, maxOperands = roSpec{short: "vz", long: []string{"porcelain", "verbose"}}, 0
	case sub == "reflog" && (first == "show" || first == "list"):
		spec = roGitLog
	case sub == "reflog" && (first == "" || strings.HasPrefix(first, "-")):
		a, why := roParse(name, roGitLog, rest, false)
		if why != "" {
			return why
		}
		if len(a.operands) > 0 {
			return "git reflog with a word after options; write git reflog show ..."
		}
		return ""
	case sub == "remote" && first == "get-url":
		spec = roSpec{long: []string{"push", "all"}}
	case sub == "remote" && (first == "" || first == "-v" || first == "--verbose"):
		if len(rest) > 1 {
			return "git remote with more than -v may change the remotes"
		}
		return ""
	case sub == "config":
		return roGitConfig(name, rest)
	default:
		return fmt.Sprintf("%s %s may change the repository", name, first)
	}
	a, why := roParse(name, spec, rest[1:], false)
	if why != "" {
		return why
	}
	if len(a.operands) > maxOperands {
		return fmt.Sprintf("%s %s takes at most %d name", name, first, maxOperands)
	}
	return roNoGlobs(name, a.operands)
}

// roGitConfig allows git config's reading forms: --get and its kin,
// --list, and the newer get and list.
func roGitConfig(name string, rest []roWord) string {
	scopes := []string{"global", "system", "local", "worktree", "file:", "blob:", "show-origin", "show-scope",
		"null", "name-only", "type:", "bool", "int", "bool-or-int", "path", "expiry-date", "default:",
		"includes", "no-includes"}
	a, why := roParse(name, roSpec{short: "zl", long: append([]string{"get", "get-all", "get-regexp",
		"get-urlmatch", "list", "all", "regexp", "value:", "fixed-value", "url:"}, scopes...)}, rest, false)
	if why != "" {
		return why
	}
	if roNoGlobs(name, a.operands) != "" {
		return "git config with a glob"
	}
	ops := len(a.operands)
	switch {
	case ops > 0 && a.operands[0].text == "list" && !a.has("--get", "--get-all", "--get-regexp", "--get-urlmatch"):
		ops--
		if ops == 0 {
			return ""
		}
	case ops > 0 && a.operands[0].text == "get" && !a.has("--get", "--get-all", "--get-regexp", "--get-urlmatch"):
		if ops == 2 {
			return ""
		}
	case a.has("--list", "-l"):
		if ops == 0 {
			return ""
		}
	case a.has("--get", "--get-all", "--get-regexp", "--get-urlmatch"):
		if ops >= 1 && ops <= 2 {
			return ""
		}
	}
	return "git config other than --get, --list, get and list may change the configuration"
}

// roGo allows the go subcommands that build nothing and run no code: go
// vet, build and test compile the packages, and vet and test run
// programs.
func roGo(_ *roLine, prog string, args []roWord) string {
	i := 0
	if len(args) > 1 && args[0].text == "-C" && !args[1].glob {
		i = 2
	}
	if i >= len(args) {
		return ""
	}
	if args[i].glob {
		return "go with a glob for a subcommand"
	}
	sub, rest := args[i].text, args[i+1:]
	var spec roSpec
	switch sub {
	case "list":
		spec = roSpec{long: []string{"json?", "f=", "m", "e", "deps", "test", "find", "versions", "retracted",
			"mod=", "tags=", "reuse="}}
	case "doc":
		spec = roSpec{long: []string{"all", "c", "cmd", "short", "src", "u"}}
	case "version":
		spec = roSpec{long: []string{"m", "v", "json"}}
	case "env":
		spec = roSpec{long: []string{"json", "changed"}}
	default:
		return fmt.Sprintf("go %s may write files or run the workspace's code", sub)
	}
	spec.goFlags = true
	name := "go " + sub
	a, why := roParse(name, spec, rest, false)
	if why != "" {
		return why
	}
	for _, m := range a.values("-mod") {
		if m != "readonly" && m != "vendor" {
			return "go list -mod=" + m + " may rewrite go.mod"
		}
	}
	return roFileOperands(name, a.operands)
}
