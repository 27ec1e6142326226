package tools

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/workspace"
)

// Limits of list_code_definitions.
const (
	defsMaxFiles     = 50
	defsMaxPerFile   = 200
	defsMaxFileBytes = 1 << 20
	defsMaxLine      = 160
)

type listCodeDefinitionsArgs struct {
	Path string `json:"path"`
}

func (e *wsEnv) buildListCodeDefinitions(a listCodeDefinitionsArgs) (Invocation, error) {
	p := a.Path
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	abs, err := e.files.Resolve(p)
	return &defsCall{env: e, args: a, abs: abs, err: err}, nil
}

type defsCall struct {
	env  *wsEnv
	args listCodeDefinitionsArgs
	abs  string
	err  error
}

// Describe names the folder or file.
func (c *defsCall) Describe(context.Context) Description {
	d := Description{Kind: KindRead, Title: "List definitions in " + c.args.Path}
	if c.err == nil {
		d.Title = "List definitions in " + searchPlace(c.env.files.Display(c.abs))
		d.Locations = []Location{{Path: c.abs}}
	}
	return d
}

// defsItem is one definition: its line and a one-line summary. Members
// are definitions inside a top-level one (a class's methods).
type defsItem struct {
	line   int
	text   string
	member bool
}

// Execute lists the definitions of the source files directly in the
// folder (or of the one file given), reading each through Files.Read.
func (c *defsCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if c.err != nil {
		return Errorf("%v", c.err), nil
	}
	files := c.env.files
	name := searchPlace(files.Display(c.abs))
	disk, err := files.Disk()
	if err != nil {
		return Errorf("Cannot read %s: %s", name, readFilesErrText(err)), nil
	}
	fi, err := disk.Stat(c.abs)
	if errors.Is(err, fs.ErrNotExist) {
		// A file open in the editor but never saved still has definitions.
		if ft, rerr := files.Read(ctx, c.abs); rerr == nil && ft.Exists {
			fi, err = nil, nil
		} else {
			return Errorf("Not found: %s.", name), nil
		}
	} else if err != nil {
		return Errorf("Cannot read %s: %s", name, readFilesErrText(err)), nil
	}

	var paths, subdirs []string
	if fi == nil || !fi.IsDir() {
		if defsLanguage(c.abs) == "" {
			return Errorf("%s is not a source file this tool reads (%s).", name, defsKnown), nil
		}
		paths = []string{c.abs}
	} else {
		entries, err := disk.ReadDir(c.abs)
		if err != nil {
			return Errorf("Cannot list %s: %s", name, readFilesErrText(err)), nil
		}
		for _, e := range entries {
			abs := filepath.Join(c.abs, e.Name())
			if e.Name() == ".git" || files.Ignored(abs, e.IsDir()) {
				continue
			}
			switch {
			case e.IsDir():
				subdirs = append(subdirs, e.Name()+"/")
			case e.Type().IsRegular() && defsLanguage(abs) != "":
				paths = append(paths, abs)
			}
		}
	}
	if len(paths) == 0 {
		msg := fmt.Sprintf("No source files directly in %s (this tool reads %s; it does not look into subfolders).", name, defsKnown)
		if len(subdirs) > 0 {
			msg += " Subfolders: " + wsTitleList(subdirs) + "."
		}
		return Result{Content: msg + "\n"}, nil
	}

	var b strings.Builder
	skippedFiles := 0
	for i, abs := range paths {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if i >= defsMaxFiles || b.Len() >= MaxToolOutput {
			skippedFiles = len(paths) - i
			break
		}
		b.WriteString(c.fileSection(ctx, abs))
	}
	if skippedFiles > 0 {
		fmt.Fprintf(&b, "[%s not read: the list stops at %d files or %d characters. Ask for one file, or a subfolder.]\n",
			plural(skippedFiles, "more file"), defsMaxFiles, MaxToolOutput)
	}
	if len(subdirs) > 0 {
		fmt.Fprintf(&b, "[Subfolders, not read: %s.]\n", wsTitleList(subdirs))
	}
	return Result{Content: wsCutMiddle(b.String(), MaxToolOutput+500)}, nil
}

// fileSection renders one file's definitions.
func (c *defsCall) fileSection(ctx context.Context, abs string) string {
	files := c.env.files
	display := files.Display(abs)
	lang := defsLanguage(abs)
	ft, err := files.Read(ctx, abs)
	switch {
	case err != nil:
		return fmt.Sprintf("%s: cannot read: %s\n", display, readFilesErrText(err))
	case !ft.Exists:
		return fmt.Sprintf("%s: no longer exists\n", display)
	case len(ft.Text) > defsMaxFileBytes:
		return fmt.Sprintf("%s: skipped, %s is too large to scan\n", display, wsSize(int64(len(ft.Text))))
	}
	if bin, _ := workspace.SniffBinary([]byte(ft.Text[:min(len(ft.Text), readFilesSniffBytes)])); bin {
		return fmt.Sprintf("%s: skipped, not text\n", display)
	}
	var items []defsItem
	var note string
	if lang == "Go" {
		items, err = defsGo(ft.Text)
		if err != nil {
			note = fmt.Sprintf(" [it does not parse (%s); definitions after that may be missing]", defsFirstError(err))
		}
	} else {
		items = defsScan(defsRules(lang), ft.Text)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)%s\n", display, lang, note)
	if len(items) == 0 {
		b.WriteString("  (no definitions found)\n")
	}
	for i, it := range items {
		if i == defsMaxPerFile {
			fmt.Fprintf(&b, "  [%d more definitions not shown]\n", len(items)-i)
			break
		}
		indent := ""
		if it.member {
			indent = "  "
		}
		fmt.Fprintf(&b, "  %d | %s%s\n", it.line, indent, wsCutLine(it.text, defsMaxLine))
	}
	return b.String()
}

func defsFirstError(err error) string {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return fmt.Sprintf("line %d: %s", list[0].Pos.Line, list[0].Msg)
	}
	return err.Error()
}

// defsKnown names the languages, for messages.
const defsKnown = "Go, TypeScript, JavaScript, Python, Rust, Java, Kotlin, C#, Scala, C, C++, Ruby, PHP, Swift and shell scripts"

// defsLanguage names the language of a file by its extension, or "".
func defsLanguage(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".go":
		return "Go"
	case ".ts", ".tsx", ".mts", ".cts":
		return "TypeScript"
	case ".js", ".jsx", ".mjs", ".cjs":
		return "JavaScript"
	case ".py", ".pyi":
		return "Python"
	case ".rs":
		return "Rust"
	case ".java":
		return "Java"
	case ".kt", ".kts":
		return "Kotlin"
	case ".cs":
		return "C#"
	case ".scala":
		return "Scala"
	case ".c":
		return "C"
	case ".h":
		return "C header"
	case ".cc", ".cpp", ".cxx", ".c++":
		return "C++"
	case ".hh", ".hpp", ".hxx", ".h++":
		return "C++ header"
	case ".rb", ".rake":
		return "Ruby"
	case ".php":
		return "PHP"
	case ".swift":
		return "Swift"
	case ".sh", ".bash", ".zsh":
		return "shell"
	}
	return ""
}

// defsGo lists a Go file's top-level declarations with go/parser: funcs
// and methods with their signatures, types with their kind, and the
// names of consts and vars. A file that does not parse gives what was
// parsed before the error, and the error.
func defsGo(src string) ([]defsItem, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	text := func(from, to token.Pos) string {
		a, b := tf.Offset(from), tf.Offset(to)
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return strings.Join(strings.Fields(src[a:b]), " ")
	}
	line := func(p token.Pos) int { return tf.Line(p) }
	var items []defsItem
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			end := d.End()
			if d.Body != nil {
				end = d.Body.Lbrace
			}
			items = append(items, defsItem{line: line(d.Pos()), text: text(d.Pos(), end)})
		case *ast.GenDecl:
			switch d.Tok {
			case token.TYPE:
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					var kind string
					switch ts.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
					default:
						kind = text(ts.Type.Pos(), ts.Type.End())
					}
					items = append(items, defsItem{line: line(ts.Pos()), text: "type " + text(ts.Name.Pos(), ts.Type.Pos()) + " " + kind})
				}
			case token.CONST, token.VAR:
				var names []string
				for _, s := range d.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						names = append(names, n.Name)
					}
				}
				if len(names) > 8 {
					names = append(names[:8], fmt.Sprintf("… (%d more)", len(names)-8))
				}
				items = append(items, defsItem{line: line(d.Pos()), text: d.Tok.String() + " " + strings.Join(names, ", ")})
			}
		}
	}
	return items, err
}

// defsLang describes, by regular expressions over single lines, where a
// language puts its definitions. Languages other than Go are recognised
// this way rather than parsed: the module may not add dependencies, and
// tree-sitter would need cgo and a grammar module per language. Lines
// are matched by indentation, which well-formatted code makes reliable:
// top-level definitions sit at the file's (or a namespace's) indentation,
// members one level inside a container such as a class.
type defsLang struct {
	top       []*regexp.Regexp
	container *regexp.Regexp // a top-level line whose body's members are listed
	member    []*regexp.Regexp
	namespace *regexp.Regexp // opens a block whose body counts as top level
	// skip matches lines that change nothing: access labels (public:),
	// decorators, attributes.
	skip *regexp.Regexp
	// notNames are words that a member pattern's first group may catch
	// but that are statements, not names (if, return, new).
	notNames []string
	comment  []string // line comment starts
	block    bool     // /* */ comments
	anyDepth bool     // definitions nest freely (Ruby): every match counts
	// noDecls drops lines ending in ";": in C and C++ sources those are
	// prototypes and variables, where other languages end definitions
	// that way too (interface methods, Rust's unit structs).
	noDecls bool
}

// defsRules returns the recogniser of a language. The patterns are
// compiled per call: a call reads at most a folder of files, and the
// package keeps no state.
func defsRules(lang string) *defsLang {
	res := func(ps ...string) []*regexp.Regexp {
		out := make([]*regexp.Regexp, len(ps))
		for i, p := range ps {
			out[i] = regexp.MustCompile(p)
		}
		return out
	}
	re := regexp.MustCompile
	cStyle := []string{"//"}
	switch lang {
	case "TypeScript", "JavaScript":
		mods := `(?:(?:public|private|protected|static|readonly|abstract|override|declare|async|get|set|accessor)\s+|\*\s*)*`
		return &defsLang{
			top: res(
				`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\b`,
				`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\b`,
				`^(?:export\s+)?(?:declare\s+)?(?:const\s+)?(?:interface|type|enum|namespace|module)\s+[\w.$"']+`,
				`^(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[\w$]+\s*=>)`,
				`^export\s+(?:const|let|var)\s+[\w$]+`,
				`^export\s+default\s+`,
				`^(?:module\.)?exports\.[\w$]+\s*=`,
			),
			container: re(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\b`),
			member: res(
				`^\s*`+mods+`(#?[\w$]+)\s*(?:<[^>]*>)?\s*\(`,
				`^\s*`+mods+`(#?[\w$]+)\s*(?::[^=]*)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*(?::[^=]*)?=>`,
			),
			namespace: re(`^(?:export\s+)?(?:declare\s+)?(?:namespace|module)\s+[\w.$"']+\s*\{\s*$`),
			skip:      re(`^\s*@`),
			notNames:  []string{"if", "for", "while", "switch", "catch", "return", "function", "super", "await", "typeof", "new", "with", "else", "do", "throw"},
			comment:   cStyle,
			block:     true,
		}
	case "Python":
		return &defsLang{
			top:       res(`^(?:async\s+)?def\s+\w+`, `^class\s+\w+`, `^[A-Z][A-Z0-9_]*\s*(?::[^=]+)?=[^=]`),
			container: re(`^class\s+\w+`),
			member:    res(`^\s*(?:async\s+)?def\s+(\w+)`, `^\s*class\s+(\w+)`),
			skip:      re(`^\s*@`),
			comment:   []string{"#"},
		}
	case "Rust":
		vis := `(?:pub(?:\([^)]*\))?\s+)?`
		fn := vis + `(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+(?:"[^"]*"\s+)?)?fn\s+(\w+)`
		return &defsLang{
			top: res(`^`+fn, `^`+vis+`(?:unsafe\s+)?(?:struct|enum|trait|type|union|mod|static|const)\s+\w+`,
				`^(?:unsafe\s+)?impl\b`, `^macro_rules!\s*\w+`),
			container: re(`^(?:(?:unsafe\s+)?impl\b|` + vis + `(?:unsafe\s+)?trait\b)`),
			member:    res(`^\s*`+fn, `^\s*(?:type|const)\s+(\w+)`),
			namespace: re(`^` + vis + `mod\s+\w+\s*\{\s*$`),
			skip:      re(`^\s*#!?\[`),
			comment:   cStyle,
			block:     true,
		}
	case "Java", "Kotlin", "C#", "Scala":
		mods := `(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|inner|partial|override|virtual|async|readonly|unsafe|extern|new|synchronized|native|default|strictfp|suspend|inline|operator|infix|tailrec|external|const|lateinit|enum|annotation|value|companion|implicit|lazy|case)\s+)*`
		ann := `(?:@[\w.]+(?:\([^)]*\))?\s+)*`
		class := `(?:class|interface|enum|record|object|struct|trait|@interface)\s+\w+`
		return &defsLang{
			top: res(`^`+ann+mods+class, `^`+ann+mods+`fun\s+(?:<[^>]*>\s*)?[\w.]+`,
				`^`+ann+mods+`(?:val|var|typealias|def)\s+\w+`),
			container: re(`^` + ann + mods + class),
			member: res(`^\s*`+ann+mods+class,
				`^\s*`+ann+mods+`(?:fun|def)\s+(?:<[^>]*>\s*)?([\w.]+)`,
				`^\s*`+ann+mods+`(?:<[^>]*>\s+)?(?:[\w<>\[\],.?]+\s+)?(\w+)\s*\(`),
			namespace: re(`^namespace\s+[\w.]+\s*\{?\s*$`),
			skip:      re(`^\s*(?:@\w+(?:\([^)]*\))?\s*$|\[[\w.]+.*\]\s*$)`),
			notNames:  []string{"if", "for", "foreach", "while", "switch", "catch", "return", "new", "throw", "else", "when", "synchronized", "using", "lock", "try"},
			comment:   cStyle,
			block:     true,
		}
	case "C", "C header", "C++", "C++ header":
		fn := `^[A-Za-z_][\w\s\*&:<>,~]*?[\s\*&]\**(~?[A-Za-z_][\w:~]*)\s*\(`
		return &defsLang{
			top: res(`^(?:template\s*<.*>\s*)?(?:typedef\s+)?(?:class|struct|union|enum(?:\s+class)?)\s+\w+`,
				`^typedef\b`, `^#\s*define\s+\w+`, fn, `^([A-Za-z_]\w*)\s*\(`),
			container: re(`^(?:template\s*<.*>\s*)?(?:class|struct)\s+\w+[^;]*$`),
			member: res(`^\s*(?:(?:virtual|static|inline|explicit|constexpr|friend)\s+)*(?:[\w:<>,\*&]+\s+)*[\*&]*(~?\w+)\s*\(`,
				`^\s*(?:class|struct|enum)\s+(\w+)`),
			namespace: re(`^(?:namespace\s*[\w:]*|extern\s+"C")\s*\{\s*$`),
			skip:      re(`^\s*(?:(?:public|private|protected|signals|slots|Q_SIGNALS|Q_SLOTS)\s*:|#\s*(?:if|ifdef|ifndef|else|elif|endif|include|pragma)\b)`),
			notNames:  []string{"if", "for", "while", "switch", "return", "sizeof", "else", "do", "case", "defined", "catch", "new", "delete", "throw"},
			comment:   cStyle,
			block:     true,
			noDecls:   lang == "C" || lang == "C++",
		}
	case "Ruby":
		return &defsLang{
			top:      res(`^\s*(?:class|module)\s+[\w:]+`, `^\s*def\s+(?:self\.)?[\w?!=\[\]<>+-]+`),
			comment:  []string{"#"},
			anyDepth: true,
		}
	case "PHP":
		return &defsLang{
			top: res(`^(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+\w+`,
				`^function\s+&?\w+`),
			container: re(`^(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+\w+`),
			member:    res(`^\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+&?(\w+)`),
			comment:   []string{"//", "#"},
			block:     true,
		}
	case "Swift":
		mods := `(?:@\w+\s+)*(?:(?:public|private|internal|open|fileprivate|final|static|class|override|mutating|convenience|required|nonisolated)\s+)*`
		return &defsLang{
			top:       res(`^` + mods + `(?:class|struct|enum|protocol|extension|actor|func|typealias)\s+`),
			container: re(`^` + mods + `(?:class|struct|enum|protocol|extension|actor)\s+`),
			member:    res(`^\s*`+mods+`(?:func|init|subscript|class|struct|enum)\b`, `^\s*`+mods+`init\s*[?!]?\s*\(`),
			skip:      re(`^\s*@\w+(?:\([^)]*\))?\s*$`),
			comment:   cStyle,
			block:     true,
		}
	case "shell":
		return &defsLang{
			top:     res(`^(?:function\s+)?[\w.:-]+\s*\(\)`, `^function\s+[\w.:-]+`),
			comment: []string{"#"},
		}
	}
	return &defsLang{}
}

// defsScan finds the definitions in text by l's rules.
func defsScan(l *defsLang, text string) []defsItem {
	var items []defsItem
	topIndent := 0
	container, memberIndent := -1, -1
	pendingNamespace := false
	inComment := false
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimSpace(line)
		if inComment {
			if strings.Contains(trimmed, "*/") {
				inComment = false
			}
			continue
		}
		if trimmed == "" || slices.ContainsFunc(l.comment, func(c string) bool { return strings.HasPrefix(trimmed, c) }) {
			continue
		}
		if l.block && strings.HasPrefix(trimmed, "/*") {
			inComment = !strings.Contains(trimmed[2:], "*/")
			continue
		}
		// A brace alone on its line (Allman style) opens or closes what
		// the line before began; the indentation rules cover it.
		if trimmed == "{" || l.skip != nil && l.skip.MatchString(line) {
			continue
		}
		line = defsStripComment(line, l.comment)
		trimmed = strings.TrimSpace(line)
		ind := defsIndent(line)
		add := func(member bool) {
			items = append(items, defsItem{line: i + 1, text: defsSummary(trimmed), member: member})
		}
		if l.anyDepth {
			if defsMatchAny(l.top, line, nil) {
				items = append(items, defsItem{line: i + 1, text: strings.Repeat(" ", min(ind, 8)) + defsSummary(trimmed)})
			}
			continue
		}
		if pendingNamespace {
			pendingNamespace = false
			if ind > topIndent {
				topIndent = ind
			}
		}
		if ind < topIndent {
			topIndent = ind // the namespace closed
		}
		if container >= 0 && ind <= container {
			container, memberIndent = -1, -1
		}
		declOnly := l.noDecls && strings.HasSuffix(trimmed, ";")
		shifted := line[min(len(line), defsByteIndent(line, topIndent)):]
		switch {
		case ind == topIndent:
			if l.namespace != nil && l.namespace.MatchString(shifted) {
				add(false)
				pendingNamespace = true
				continue
			}
			if !declOnly && defsMatchAny(l.top, shifted, l.notNames) {
				add(false)
				if l.container != nil && l.container.MatchString(shifted) && !strings.HasSuffix(trimmed, "}") {
					container = ind
				}
			}
		case container >= 0 && ind > container:
			if memberIndent < 0 {
				memberIndent = ind
			}
			if ind == memberIndent && !declOnly && defsMatchAny(l.member, line, l.notNames) {
				add(true)
			}
		}
	}
	return items
}

// defsStripComment drops a comment at the end of a line, so that
// patterns anchored at the end ("{$") still match. Only a comment marker
// after a space counts, which leaves "#[attr]" and URLs alone; a marker
// inside a string is cut too, which changes only the summary shown.
func defsStripComment(line string, markers []string) string {
	for _, m := range markers {
		for from := 0; ; {
			i := strings.Index(line[from:], m)
			if i < 0 {
				break
			}
			i += from
			end := i + len(m)
			if i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') && (end == len(line) || line[end] == ' ' || line[end] == '\t') {
				line = line[:i]
				break
			}
			from = end
		}
	}
	return strings.TrimRight(line, " \t")
}

// defsMatchAny reports whether one of res matches line; a pattern's first
// group, when it has one, must not be one of notNames.
func defsMatchAny(res []*regexp.Regexp, line string, notNames []string) bool {
	for _, re := range res {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if len(m) > 1 && slices.Contains(notNames, m[1]) {
			continue
		}
		return true
	}
	return false
}

// defsIndent is a line's indentation in columns, a tab counting four.
func defsIndent(line string) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// defsByteIndent is the byte offset in line of indentation column col.
func defsByteIndent(line string, col int) int {
	n := 0
	for i, c := range line {
		if n >= col || (c != ' ' && c != '\t') {
			return i
		}
		if c == '\t' {
			n += 4
		} else {
			n++
		}
	}
	return len(line)
}

// defsSummary is a definition's line without its opening brace.
func defsSummary(trimmed string) string {
	return strings.TrimSpace(strings.TrimSuffix(trimmed, "{"))
}
