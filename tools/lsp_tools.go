package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/workspace"
)

// Bounds of the language-server tools (docs/DESIGN.md §2).
const (
	// LSPWait is how long one request to the editor's language servers
	// may take; the turn's cancel ends it at once.
	LSPWait = 30 * time.Second
	// maxLSPLocations is how many locations a result lists; the rest are
	// counted.
	maxLSPLocations = 200
	// maxLSPFiles is how many files a result groups its locations in;
	// those in further files are counted.
	maxLSPFiles = 1000
	// maxLSPSymbols is how many symbols document_symbols lists.
	maxLSPSymbols = 500
	// maxLSPReadBytes bounds what a result reads to show the lines of
	// its locations; files past it are listed without their lines.
	maxLSPReadBytes = 32 << 20
	// maxRenameFiles is the most files one rename_symbol may change.
	maxRenameFiles = 500
	// maxShownLine is how much of a location's line a result shows.
	maxShownLine = 200
)

// LSPTools returns the implementations of find_references,
// go_to_definition, document_symbols and rename_symbol over the editor's
// language servers ls, for Registry.RegisterBuiltins; features are what
// the client declared (document_symbols helps find a symbol the model
// names without a line). The tools are offered only for the declared
// features (Context.LSP). rename_symbol's changes go through files.Apply
// like every edit.
func LSPTools(files Files, ls LanguageServers, features []string) map[string]BuildFunc {
	return lspToolsWith(files, ls, features, LSPWait)
}

func lspToolsWith(files Files, ls LanguageServers, features []string, wait time.Duration) map[string]BuildFunc {
	env := &lspEnv{files: files, ls: ls, features: features, wait: wait,
		edit: &editEnv{files: files, cfg: editConfig{diffLines: diff.DefaultMaxLines}}}
	return map[string]BuildFunc{
		NameFindReferences:  Typed(env.buildFindReferences),
		NameGoToDefinition:  Typed(env.buildGoToDefinition),
		NameDocumentSymbols: Typed(env.buildDocumentSymbols),
		NameRenameSymbol:    Typed(env.buildRenameSymbol),
	}
}

type lspEnv struct {
	files    Files
	ls       LanguageServers
	features []string
	wait     time.Duration // LSPWait
	edit     *editEnv
}

// lspArgs are the arguments of the tools that name a symbol.
type lspArgs struct {
	Path    string `json:"path"`
	Symbol  string `json:"symbol"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	NewName string `json:"new_name"`
}

// lspTarget is where a call points: a file and a position in it.
type lspTarget struct {
	abs, display string
	uri          string
	pos          workspace.Position
	line         int // 1-based
	symbol       string
}

// lspRefusal is a problem the model can fix, worded for it.
type lspRefusal string

func (r lspRefusal) Error() string { return string(r) }

// lspAsk runs one request to the language servers, bounded by LSPWait. An
// error the model should see (the client's, a timeout) becomes an
// lspRefusal; a cancelled call returns the context's error.
func lspAsk[T any](ctx context.Context, l *lspEnv, feature string, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	v, err := f(cctx)
	switch {
	case err == nil:
		return v, nil
	case ctx.Err() != nil:
		return v, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return v, lspRefusal(fmt.Sprintf("The editor's language server did not answer the %s request within %s.", feature, l.wait))
	}
	return v, lspRefusal(fmt.Sprintf("The editor's language server could not answer the %s request: %v.", feature, strings.TrimSuffix(err.Error(), ".")))
}

// read returns a file's current text (the buffer when open), refusing a
// path outside the workspace, a missing file and one that is not text.
func (l *lspEnv) read(ctx context.Context, path string) (string, string, FileText, error) {
	abs, err := l.files.Resolve(path)
	if err != nil {
		return "", "", FileText{}, lspRefusal(err.Error())
	}
	display := l.files.Display(abs)
	ft, err := l.edit.textOnly(func(abs string) (FileText, error) { return l.files.Read(ctx, abs) })(abs)
	if err != nil {
		var pe *editPlanError
		if errors.As(err, &pe) {
			return "", "", ft, lspRefusal(strings.TrimSuffix(pe.Error(), " Nothing was changed."))
		}
		return "", "", ft, lspRefusal(fmt.Sprintf("Could not read %s: %v.", display, editReadReason(err)))
	}
	if !ft.Exists {
		return "", "", ft, lspRefusal(fmt.Sprintf("%s does not exist.", display))
	}
	return abs, display, ft, nil
}

// target finds the position a call names: the symbol on the given line,
// the one occurrence of the symbol in the file, the declaration of that
// name (document symbols), or the symbol declared on the line.
func (l *lspEnv) target(ctx context.Context, a lspArgs) (lspTarget, error) {
	abs, display, ft, err := l.read(ctx, a.Path)
	if err != nil {
		return lspTarget{}, err
	}
	t := lspTarget{abs: abs, display: display, uri: workspace.PathToURI(abs), symbol: a.Symbol}
	m := workspace.NewMapper(ft.Text)
	enc := l.ls.Encoding()
	lines := m.LineCount()
	if a.Line > lines {
		return t, lspRefusal(fmt.Sprintf("%s has %d lines; line %d is past its end.", display, lines, a.Line))
	}
	at := func(off int) lspTarget {
		t.pos = m.Position(off, enc)
		t.line = int(t.pos.Line) + 1
		return t
	}
	lineText := func(n int) (int, string) {
		start := m.Offset(workspace.Position{Line: uint32(n - 1)}, workspace.UTF8)
		end := m.Offset(workspace.Position{Line: uint32(n - 1), Character: ^uint32(0)}, workspace.UTF8)
		return start, ft.Text[start:end]
	}
	// A name written as the model would write it in prose (`Foo()`,
	// pkg.Foo, Type::method) is looked for as written, then as its last
	// identifier, which is what the file spells at a use.
	forms := symbolForms(a.Symbol)
	pick := func(text string) []int {
		for _, f := range forms {
			if hits := wordHits(text, f); len(hits) > 0 {
				a.Symbol, t.symbol = f, f
				return hits
			}
		}
		return nil
	}
	if len(forms) > 0 {
		a.Symbol = forms[0]
		t.symbol = a.Symbol
	}
	switch {
	case a.Symbol != "" && a.Line > 0:
		start, text := lineText(a.Line)
		hits := pick(text)
		switch {
		case len(hits) == 0:
			return t, lspRefusal(fmt.Sprintf("`%s` is not on line %d of %s, which reads: %s", a.Symbol, a.Line, display, clipShown(strings.TrimSpace(text))))
		case len(hits) == 1:
			return at(start + hits[0]), nil
		case a.Column > 0:
			for _, h := range hits {
				c := utf8.RuneCountInString(text[:h]) + 1
				if a.Column >= c && a.Column < c+utf8.RuneCountInString(a.Symbol) {
					return at(start + h), nil
				}
			}
			return t, lspRefusal(fmt.Sprintf("`%s` is on line %d of %s at columns %s, not at column %d.", a.Symbol, a.Line, display, hitColumns(text, hits), a.Column))
		}
		return t, lspRefusal(fmt.Sprintf("`%s` occurs %d times on line %d of %s (columns %s); give column to pick one.", a.Symbol, len(hits), a.Line, display, hitColumns(text, hits)))
	case a.Symbol != "":
		hits := pick(ft.Text)
		if len(hits) == 1 {
			return at(hits[0]), nil
		}
		if len(hits) == 0 {
			return t, lspRefusal(fmt.Sprintf("`%s` does not occur in %s.", a.Symbol, display))
		}
		if decl, ok := l.declared(ctx, t.uri, func(s LSPSymbol) bool { return s.Name == a.Symbol }); ok {
			return at(m.Offset(decl.SelectionRange.Start, enc)), nil
		}
		var at []string
		seen := map[uint32]bool{}
		for _, h := range hits {
			n := m.Position(h, workspace.UTF8).Line + 1
			if !seen[n] {
				seen[n] = true
				at = append(at, fmt.Sprint(n))
			}
		}
		if len(at) > 10 {
			at = append(at[:10], "…")
		}
		return t, lspRefusal(fmt.Sprintf("`%s` occurs %d times in %s (lines %s); give line to pick one.", a.Symbol, len(hits), display, strings.Join(at, ", ")))
	case a.Line > 0:
		if decl, ok := l.declared(ctx, t.uri, func(s LSPSymbol) bool { return int(s.SelectionRange.Start.Line) == a.Line-1 }); ok {
			t.symbol = decl.Name
			return at(m.Offset(decl.SelectionRange.Start, enc)), nil
		}
		_, text := lineText(a.Line)
		return t, lspRefusal(fmt.Sprintf("Give symbol: the name on line %d of %s to look up (the line reads: %s).", a.Line, display, clipShown(strings.TrimSpace(text))))
	}
	return t, lspRefusal("Give symbol, line or both to say which symbol of " + display + " you mean.")
}

// declared returns the one symbol of the document that match accepts,
// when the client answers document symbols.
func (l *lspEnv) declared(ctx context.Context, uri string, match func(LSPSymbol) bool) (LSPSymbol, bool) {
	if !slices.Contains(l.features, LSPDocumentSymbols) {
		return LSPSymbol{}, false
	}
	syms, err := lspAsk(ctx, l, LSPDocumentSymbols, func(ctx context.Context) (LSPSymbols, error) {
		return l.ls.DocumentSymbols(ctx, LSPDocumentSymbolParams{TextDocument: LSPTextDocument{URI: uri}})
	})
	if err != nil {
		return LSPSymbol{}, false
	}
	var found []LSPSymbol
	var walk func([]LSPSymbol, int)
	walk = func(ss []LSPSymbol, depth int) {
		for _, s := range ss {
			if match(s) {
				found = append(found, s)
			}
			if depth < 16 {
				walk(s.Children, depth+1)
			}
		}
	}
	walk(syms, 0)
	if len(found) != 1 {
		return LSPSymbol{}, false
	}
	return found[0], true
}

// symbolForms are the spellings a symbol the model named is looked for
// in: as given (without quotes, backticks or a call's parentheses), then
// its last identifier when it is qualified.
func symbolForms(raw string) []string {
	s := strings.TrimSpace(raw)
	s = strings.Trim(s, "`'\"")
	s = strings.TrimSuffix(strings.TrimSpace(s), "()")
	if s == "" {
		return nil
	}
	out := []string{s}
	last := strings.LastIndexFunc(s, func(r rune) bool { return !isIdent(r) })
	if last >= 0 && last < len(s)-1 {
		_, size := utf8.DecodeRuneInString(s[last:])
		if tail := s[last+size:]; tail != "" {
			out = append(out, tail)
		}
	}
	return out
}

// wordHits returns the byte offsets where word occurs in text as a whole
// word: not starting or ending inside an identifier, unless word itself
// starts or ends with a character that cannot be part of one.
func wordHits(text, word string) []int {
	if word == "" {
		return nil
	}
	first, _ := utf8.DecodeRuneInString(word)
	last, _ := utf8.DecodeLastRuneInString(word)
	var hits []int
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return hits
		}
		at := i + j
		before, _ := utf8.DecodeLastRuneInString(text[:at])
		after, _ := utf8.DecodeRuneInString(text[at+len(word):])
		if !(isIdent(first) && at > 0 && isIdent(before)) && !(isIdent(last) && at+len(word) < len(text) && isIdent(after)) {
			hits = append(hits, at)
		}
		i = at + max(1, len(word))
	}
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func hitColumns(text string, hits []int) string {
	cols := make([]string, len(hits))
	for i, h := range hits {
		cols[i] = fmt.Sprint(utf8.RuneCountInString(text[:h]) + 1)
	}
	return strings.Join(cols, ", ")
}

// clipShown cuts a line shown in a result to maxShownLine bytes.
func clipShown(s string) string {
	if len(s) <= maxShownLine {
		return s
	}
	return wsValidPrefix(s[:maxShownLine]) + "…"
}

// lspCall is a read-only call of a language-server tool.
type lspCall struct {
	title string
	kind  Kind
	path  string
	run   func(ctx context.Context) (string, error)
}

func (c *lspCall) Describe(context.Context) Description {
	return Description{Title: c.title, Kind: c.kind, Locations: []Location{{Path: c.path}}}
}

func (c *lspCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	out, err := c.run(ctx)
	var r lspRefusal
	if errors.As(err, &r) {
		return Errorf("%s", r.Error()), nil
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Content: out}, nil
}

func (l *lspEnv) buildFindReferences(a lspArgs) (Invocation, error) {
	return &lspCall{title: "Find references to " + symbolTitle(a), kind: KindSearch, path: a.Path, run: func(ctx context.Context) (string, error) {
		t, err := l.target(ctx, a)
		if err != nil {
			return "", err
		}
		locs, err := lspAsk(ctx, l, LSPReferences, func(ctx context.Context) (LSPLocations, error) {
			return l.ls.References(ctx, LSPReferenceParams{
				LSPPositionParams: LSPPositionParams{TextDocument: LSPTextDocument{URI: t.uri}, Position: t.pos},
				Context:           LSPReferenceContext{IncludeDeclaration: true},
			})
		})
		if err != nil {
			return "", err
		}
		return l.formatLocations(ctx, "reference", fmt.Sprintf("to `%s` (%s:%d)", t.symbol, t.display, t.line), locs), nil
	}}, nil
}

func (l *lspEnv) buildGoToDefinition(a lspArgs) (Invocation, error) {
	return &lspCall{title: "Go to the definition of " + symbolTitle(a), kind: KindRead, path: a.Path, run: func(ctx context.Context) (string, error) {
		t, err := l.target(ctx, a)
		if err != nil {
			return "", err
		}
		locs, err := lspAsk(ctx, l, LSPDefinition, func(ctx context.Context) (LSPLocations, error) {
			return l.ls.Definition(ctx, LSPPositionParams{TextDocument: LSPTextDocument{URI: t.uri}, Position: t.pos})
		})
		if err != nil {
			return "", err
		}
		return l.formatLocations(ctx, "definition", fmt.Sprintf("of `%s` (%s:%d)", t.symbol, t.display, t.line), locs), nil
	}}, nil
}

func symbolTitle(a lspArgs) string {
	s := a.Path
	if a.Line > 0 {
		s += fmt.Sprintf(":%d", a.Line)
	}
	if a.Symbol != "" {
		return ShortTitle(a.Symbol) + " in " + s
	}
	return s
}

// shownLocation is a location as a result shows it.
type shownLocation struct {
	display string // workspace-relative path, or the absolute path or URI outside it
	abs     string // "" outside the workspace
	note    string // why the file is not read
	line    int    // 1-based
	char    uint32 // 0-based, in the connection's encoding
}

// formatLocations lists locs grouped by file, workspace files first, with
// each line's text; files outside the workspace are named and marked, not
// read. At most maxLSPLocations are listed.
func (l *lspEnv) formatLocations(ctx context.Context, noun, of string, locs LSPLocations) string {
	if len(locs) == 0 {
		return "The editor's language server found no " + noun + "s " + of + "."
	}
	shown := make([]shownLocation, 0, min(len(locs), 4*maxLSPLocations))
	resolved := map[string]shownLocation{}
	// Files past maxLSPFiles are counted, not resolved: each resolution
	// looks at the disk.
	type place struct {
		uri  string
		line uint32
		char uint32
	}
	unlisted := map[place]bool{}
	unlistedFiles := map[string]bool{}
	for _, loc := range locs {
		f, ok := resolved[loc.URI]
		if !ok {
			if len(resolved) >= maxLSPFiles {
				unlisted[place{loc.URI, loc.Range.Start.Line, loc.Range.Start.Character}] = true
				unlistedFiles[loc.URI] = true
				continue
			}
			f = l.placeOf(loc.URI)
			resolved[loc.URI] = f
		}
		f.line, f.char = int(loc.Range.Start.Line)+1, loc.Range.Start.Character
		shown = append(shown, f)
	}
	slices.SortFunc(shown, func(a, b shownLocation) int {
		if out := a.abs == ""; out != (b.abs == "") {
			if out {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.display, b.display), cmp.Compare(a.line, b.line), cmp.Compare(a.char, b.char))
	})
	shown = slices.CompactFunc(shown, func(a, b shownLocation) bool {
		return a.display == b.display && a.line == b.line && a.char == b.char
	})
	total := len(shown) + len(unlisted)
	files := map[string]bool{}
	for _, s := range shown {
		files[s.display] = true
	}
	nfiles := len(files) + len(unlistedFiles)
	if len(shown) > maxLSPLocations {
		shown = shown[:maxLSPLocations]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %s in %d %s:\n", total, oneOrMany(total, noun, noun+"s"), of, nfiles, oneOrMany(nfiles, "file", "files"))
	read := 0
	var cur string
	var lines *workspace.Mapper
	var text string
	enc := l.ls.Encoding()
	for _, s := range shown {
		if s.display != cur {
			cur, lines, text = s.display, nil, ""
			if s.note != "" {
				fmt.Fprintf(&b, "%s (%s)\n", s.display, s.note)
			} else {
				b.WriteString(s.display + "\n")
				if read < maxLSPReadBytes {
					if ft, err := l.edit.textOnly(func(abs string) (FileText, error) { return l.files.Read(ctx, abs) })(s.abs); err == nil && ft.Exists {
						read += len(ft.Text)
						text, lines = ft.Text, workspace.NewMapper(ft.Text)
					}
				}
			}
		}
		if lines == nil || s.line > lines.LineCount() {
			fmt.Fprintf(&b, "  %d:%d\n", s.line, s.char+1)
			continue
		}
		start := lines.Offset(workspace.Position{Line: uint32(s.line - 1)}, workspace.UTF8)
		end := lines.Offset(workspace.Position{Line: uint32(s.line - 1), Character: ^uint32(0)}, workspace.UTF8)
		line := text[start:end]
		col := utf8.RuneCountInString(line[:workspace.LineByteOffset(line, s.char, enc)]) + 1
		fmt.Fprintf(&b, "  %s:%d:%d: %s\n", s.display, s.line, col, clipShown(strings.TrimSpace(line)))
	}
	if total > len(shown) {
		fmt.Fprintf(&b, "… and %d more not listed (%d in all); narrow the question to see them.\n", total-len(shown), total)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// placeOf is how a location's document is shown: workspace-relative and
// read, or marked as outside the workspace (or not a file) and not read.
func (l *lspEnv) placeOf(uri string) shownLocation {
	p, err := workspace.URIToPath(uri)
	if err != nil {
		return shownLocation{display: uri, note: "not a file"}
	}
	abs, err := l.files.Resolve(p)
	if err != nil {
		return shownLocation{display: p, note: "outside the workspace; not read"}
	}
	return shownLocation{display: l.files.Display(abs), abs: abs}
}

func (l *lspEnv) buildDocumentSymbols(a lspArgs) (Invocation, error) {
	return &lspCall{title: "Symbols of " + a.Path, kind: KindRead, path: a.Path, run: func(ctx context.Context) (string, error) {
		abs, display, _, err := l.read(ctx, a.Path)
		if err != nil {
			return "", err
		}
		syms, err := lspAsk(ctx, l, LSPDocumentSymbols, func(ctx context.Context) (LSPSymbols, error) {
			return l.ls.DocumentSymbols(ctx, LSPDocumentSymbolParams{TextDocument: LSPTextDocument{URI: workspace.PathToURI(abs)}})
		})
		if err != nil {
			return "", err
		}
		if len(syms) == 0 {
			return "The editor's language server found no symbols in " + display + ".", nil
		}
		var b strings.Builder
		n, total := 0, 0
		var walk func([]LSPSymbol, int)
		walk = func(ss []LSPSymbol, depth int) {
			for _, s := range ss {
				total++
				if n < maxLSPSymbols {
					n++
					fmt.Fprintf(&b, "%s%d: %s %s", strings.Repeat("  ", depth), s.SelectionRange.Start.Line+1, lspSymbolKind(s.Kind), clipShown(s.Name))
					if d := strings.Join(strings.Fields(s.Detail), " "); d != "" {
						b.WriteString(" " + clipShown(d))
					}
					if s.Container != "" {
						b.WriteString(" (in " + clipShown(s.Container) + ")")
					}
					b.WriteString("\n")
				}
				if depth < 16 {
					walk(s.Children, depth+1)
				}
			}
		}
		walk(syms, 0)
		head := fmt.Sprintf("Symbols of %s (line: kind name):\n", display)
		if total > n {
			fmt.Fprintf(&b, "… and %d more not listed (%d in all).\n", total-n, total)
		}
		return head + strings.TrimSuffix(b.String(), "\n"), nil
	}}, nil
}

func (l *lspEnv) buildRenameSymbol(a lspArgs) (Invocation, error) {
	if strings.TrimSpace(a.NewName) == "" {
		return nil, &ValidationError{Problems: []Problem{{Path: "new_name", Message: "must not be empty"}}}
	}
	return &renameCall{env: l, args: a}, nil
}

// renameCall is one rename_symbol call. The language server is asked
// once (the first Describe, or Execute); its workspace edit is planned
// against the texts it was made for, which the approval's preview shows,
// and delivered only while every file still holds them: positions in the
// edit refer to those texts, so an edit on a text that changed since would
// land in the wrong place.
type renameCall struct {
	env  *lspEnv
	args lspArgs

	mu      sync.Mutex // guards the fields below
	asked   bool
	target  lspTarget
	edit    *LSPWorkspaceEdit
	askErr  error
	bases   map[string]string // per file, the text the edit applies to
	planned []Change
}

func (c *renameCall) ask(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked {
		return c.askErr
	}
	t, err := c.env.target(ctx, c.args)
	if err == nil {
		c.edit, err = lspAsk(ctx, c.env, LSPRename, func(ctx context.Context) (*LSPWorkspaceEdit, error) {
			return c.env.ls.Rename(ctx, LSPRenameParams{
				LSPPositionParams: LSPPositionParams{TextDocument: LSPTextDocument{URI: t.uri}, Position: t.pos},
				NewName:           c.args.NewName,
			})
		})
	}
	if ctx.Err() != nil {
		return ctx.Err() // not kept: a cancelled ask is not the server's answer
	}
	c.asked, c.target, c.askErr = true, t, err
	return err
}

func (c *renameCall) title() string {
	return "Rename " + symbolTitle(c.args) + " to " + ShortTitle(c.args.NewName)
}

// plan turns the workspace edit into changes of the current texts.
func (c *renameCall) plan(_ context.Context, read func(string) (FileText, error)) ([]Change, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.env
	refuse := func(format string, args ...any) error {
		return &editPlanError{err: editRefusal(fmt.Sprintf(format, args...) + " Nothing was changed.")}
	}
	if c.edit == nil || len(c.edit.Changes) == 0 && len(c.edit.DocumentChanges) == 0 {
		return nil, refuse("The editor's language server has nothing to rename at `%s` (%s:%d).", c.target.symbol, c.target.display, c.target.line)
	}
	type fileEdits struct {
		uri     string
		version *int32
		edits   [][]diff.Edit
	}
	var order []string
	byURI := map[string]*fileEdits{}
	add := func(uri string, version *int32, edits []diff.Edit) {
		f := byURI[uri]
		if f == nil {
			f = &fileEdits{uri: uri}
			byURI[uri] = f
			order = append(order, uri)
		}
		if version != nil {
			f.version = version
		}
		f.edits = append(f.edits, edits)
	}
	if len(c.edit.DocumentChanges) > 0 {
		for _, dc := range c.edit.DocumentChanges {
			if dc.Kind != "" {
				return nil, refuse("The language server's rename also asks to %s a file (%s); rename_symbol only changes the text of files.", dc.Kind, cmp.Or(dc.URI, dc.OldURI))
			}
			add(dc.TextDocument.URI, dc.TextDocument.Version, dc.Edits)
		}
	} else {
		for _, uri := range slices.Sorted(maps.Keys(c.edit.Changes)) {
			add(uri, nil, c.edit.Changes[uri])
		}
	}
	if len(order) > maxRenameFiles {
		return nil, refuse("The language server's rename changes %d files, more than the %d one rename_symbol may change.", len(order), maxRenameFiles)
	}
	if c.bases == nil {
		c.bases = map[string]string{}
	}
	var changes []Change
	for _, uri := range order {
		f := byURI[uri]
		p, err := workspace.URIToPath(uri)
		if err != nil {
			return nil, refuse("The language server's rename changes %s, which is not a file of the workspace.", uri)
		}
		abs, err := l.files.Resolve(p)
		if err != nil {
			return nil, refuse("The language server's rename changes %s, outside the workspace (%v).", p, err)
		}
		display := l.files.Display(abs)
		ft, err := read(abs)
		if err != nil {
			return nil, err
		}
		if !ft.Exists {
			return nil, refuse("The language server's rename changes %s, which does not exist.", display)
		}
		if f.version != nil && ft.Open && *f.version != ft.Version {
			return nil, refuse("%s changed since the language server made the rename (it was for version %d, the buffer is at %d); call rename_symbol again.", display, *f.version, ft.Version)
		}
		if base, ok := c.bases[abs]; ok && base != ft.Text {
			return nil, refuse("%s changed since the language server made the rename; call rename_symbol again.", display)
		}
		c.bases[abs] = ft.Text
		text := ft.Text
		for _, edits := range f.edits {
			if text, err = diff.ApplyEdits(text, edits, l.ls.Encoding()); err != nil {
				return nil, refuse("The language server's edit of %s does not apply: %v.", display, err)
			}
		}
		if text == ft.Text {
			continue
		}
		changes = append(changes, Change{Path: abs, OldText: ft.Text, Existed: true, NewText: &text})
	}
	if len(changes) == 0 {
		return nil, refuse("The language server's rename of `%s` changes nothing.", c.target.symbol)
	}
	slices.SortFunc(changes, func(a, b Change) int { return cmp.Compare(a.Path, b.Path) })
	c.planned = changes
	return changes, nil
}

func (c *renameCall) Describe(ctx context.Context) Description {
	d := Description{Title: c.title(), Kind: KindEdit, Locations: []Location{{Path: c.args.Path, Line: c.args.Line}}}
	if err := c.ask(ctx); err != nil {
		d.Refusal = err.Error()
		return d
	}
	changes, err := c.plan(ctx, c.env.edit.describeRead(ctx))
	if err != nil {
		d.Refusal = err.Error()
		return d
	}
	d.Locations = nil
	for _, ch := range changes {
		d.Locations = append(d.Locations, Location{Path: c.env.files.Display(ch.Path), Line: editFirstLine(ch.OldText, *ch.NewText)})
	}
	d.Preview, d.PreviewText = c.env.edit.editPreview(changes)
	d.Changes = changes
	return d
}

func (c *renameCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if err := c.ask(ctx); err != nil {
		var r lspRefusal
		if errors.As(err, &r) {
			return Errorf("%s", r.Error()), nil
		}
		return Result{}, err
	}
	e := c.env.edit
	changes, res, err := e.apply(ctx, c.plan, "No file was changed.")
	if err != nil || res.IsError {
		return res, err
	}
	var b strings.Builder
	edits := make([]FileEdit, 0, len(changes))
	for _, ch := range changes {
		fe := e.fileEdit(ch)
		e.keepSeen(ch, false)
		edits = append(edits, fe)
	}
	fmt.Fprintf(&b, "Renamed `%s` to `%s` in %d %s:", c.target.symbol, c.args.NewName, len(changes), oneOrMany(len(changes), "file", "files"))
	for _, fe := range edits {
		b.WriteString("\n" + fe.Diff)
	}
	return Result{Content: withDiagnostics(b.String(), changes), Edits: edits}, nil
}
