package edit

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The rules that keep an edit from landing in the wrong place, run
// through each of the three engines: editor (EditFile), replace_in_file
// (ReplaceInFile) and apply_patch (PlanPatch). A case gives the file, the
// old and new lines as the model sent them, and either the exact text the
// file must end up with or the fragments a refusal must contain.

type landCase struct {
	name     string
	text     string
	old, new string // newline-separated, without a final newline
	want     string // "" means the call must be refused
	errHas   []string
	noteHas  string // a word the tolerance note must contain
	only     string // run through this engine only ("editor", "replace", "patch")
	skip     string // not through this engine
}

// runLand applies c through one engine, returning the new text, the
// notes and the error.
func runLand(engine string, c landCase) (string, string, error) {
	switch engine {
	case "editor":
		res, err := EditFile("f.txt", c.text, true, EditorRequest{OldText: c.old, NewText: c.new})
		return res.Text, res.Note, err
	case "replace":
		res, err := ReplaceInFile("f.txt", c.text, block(c.old, c.new))
		return res.Text, strings.Join(res.Notes, "\n"), err
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: f.txt\n@@\n")
	for _, l := range strings.Split(c.old, "\n") {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range strings.Split(c.new, "\n") {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch")
	fs := MemFS{"f.txt": c.text}
	plan, err := PlanPatch(b.String(), fs)
	if err != nil {
		return "", "", err
	}
	return plan.Files[0].NewText, strings.Join(plan.Notes, "\n"), nil
}

// runLandRead is runLand with the text the model last read on record.
func runLandRead(engine string, c landCase, read string) (string, error) {
	lr := LastRead{Text: read, Known: true}
	switch engine {
	case "editor":
		res, err := EditFile("f.txt", c.text, true, EditorRequest{OldText: c.old, NewText: c.new, Read: lr})
		return res.Text, err
	case "replace":
		res, err := ReplaceInFileRead("f.txt", c.text, block(c.old, c.new), lr)
		return res.Text, err
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: f.txt\n@@\n")
	for _, l := range strings.Split(c.old, "\n") {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range strings.Split(c.new, "\n") {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch")
	plan, err := PlanPatch(b.String(), readFS{MemFS{"f.txt": c.text}, map[string]string{"f.txt": read}})
	if err != nil {
		return "", err
	}
	return plan.Files[0].NewText, nil
}

func checkLand(t *testing.T, cases []landCase) {
	t.Helper()
	for _, c := range cases {
		for _, engine := range []string{"editor", "replace", "patch"} {
			if c.only != "" && c.only != engine || c.skip == engine {
				continue
			}
			t.Run(c.name+"/"+engine, func(t *testing.T) {
				got, note, err := runLand(engine, c)
				if c.want == "" {
					if err == nil {
						t.Fatalf("applied, want a refusal; the file became:\n%s", got)
					}
					for _, s := range c.errHas {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("error lacks %q:\n%v", s, err)
						}
					}
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got != c.want {
					t.Errorf("file\n got %q\nwant %q", got, c.want)
				}
				if c.noteHas != "" && !strings.Contains(note, c.noteHas) {
					t.Errorf("note %q lacks %q", note, c.noteHas)
				}
			})
		}
	}
}

const pyCart = "class Cart:\n    def add(self, item):\n        self.items.append(item)\n        return self\n\n    def total(self):\n        return sum(self.items)\n"

// TestTolerantBlockReindented: a block that matches only with its
// indentation shifted is written at the file's indentation, and the note
// says so.
func TestTolerantBlockReindented(t *testing.T) {
	checkLand(t, []landCase{
		{name: "python method sent dedented", text: pyCart,
			old:     "def total(self):\n    return sum(self.items)",
			new:     "def total(self):\n    if not self.items:\n        return 0\n    return sum(self.items)",
			want:    "class Cart:\n    def add(self, item):\n        self.items.append(item)\n        return self\n\n    def total(self):\n        if not self.items:\n            return 0\n        return sum(self.items)\n",
			noteHas: "indentation"},
		{name: "python new lines below the block's indentation", text: pyCart,
			old:  "    def total(self):\n        return sum(self.items)",
			new:  "    def total(self):\n        return sum(self.items)\n\ndef helper():\n    pass",
			want: pyCart + "\ndef helper():\n    pass\n"},
		{name: "python new lines dedented below the model's base", text: pyCart,
			old:  "  def total(self):\n      return sum(self.items)",
			new:  "  def total(self):\n      return sum(self.items)\n\n  def count(self):\n      return len(self.items)",
			want: pyCart + "\n    def count(self):\n        return len(self.items)\n"},
		{name: "go tabs sent as spaces", text: "func f() {\n\tfor _, x := range xs {\n\t\tuse(x)\n\t}\n}\n",
			old:  "    for _, x := range xs {\n        use(x)\n    }",
			new:  "    for _, x := range xs {\n        if x > 0 {\n            use(x)\n        }\n    }",
			want: "func f() {\n\tfor _, x := range xs {\n\t\tif x > 0 {\n\t\t\tuse(x)\n\t\t}\n\t}\n}\n", noteHas: "tabs"},
		{name: "go block sent unindented, new lines indented with spaces", text: "func f() {\n\tfor _, x := range xs {\n\t}\n}\n",
			old:  "for _, x := range xs {\n}",
			new:  "for _, x := range xs {\n    use(x)\n}",
			want: "func f() {\n\tfor _, x := range xs {\n\t\tuse(x)\n\t}\n}\n"},
		{name: "python spaces sent as tabs", text: pyCart,
			old:  "\tdef total(self):\n\t\treturn sum(self.items)",
			new:  "\tdef total(self):\n\t\treturn sum(self.items) or 0",
			want: strings.Replace(pyCart, "return sum(self.items)", "return sum(self.items) or 0", 1)},
		{name: "tabs for a spaces file with an odd alignment elsewhere", text: "class C:\n    def f(self):\n        x = call(a,\n                 b)\n\n    def g(self):\n        return 1\n",
			old:  "\tdef g(self):\n\t\treturn 1",
			new:  "\tdef g(self):\n\t\treturn 2",
			want: "class C:\n    def f(self):\n        x = call(a,\n                 b)\n\n    def g(self):\n        return 2\n"},
		{name: "yaml items shifted", text: "web:\n  env:\n    - A=1\n    - B=2\ndb:\n  image: pg\n",
			old:  "env:\n  - A=1\n  - B=2",
			new:  "env:\n  - A=1\n  - B=3\n  - C=4",
			want: "web:\n  env:\n    - A=1\n    - B=3\n    - C=4\ndb:\n  image: pg\n"},
		{name: "trailing whitespace only", text: "a\n  b  \n  c\nd\n",
			old: "  b\n  c", new: "  B\n  C", want: "a\n  B\n  C\nd\n", noteHas: "line ends"},
		{name: "indentation that is not a uniform shift is refused", text: "web:\n  env:\n    - A=1\ndb:\n  x: 1\n",
			old: "env:\n - A=1", new: "env:\n - A=2", errHas: []string{"lines 2-3", "> 3 |     - A=1"}},
	})
}

// TestSingleLineTolerantKeepsText: a one-line SEARCH replaced by one line
// keeps the model's text as written, as Cline's own tests expect.
func TestSingleLineTolerantKeepsText(t *testing.T) {
	checkLand(t, []landCase{
		{name: "surrounding spaces", text: "line1\n line2 \nline3\n", old: "line2", new: "replaced", want: "line1\nreplaced\nline3\n", only: "replace"},
	})
}

// TestAnchorMatchNeverOverwrites: lines the model did not send (the
// user's typing, the model's own earlier edit) are never replaced on the
// strength of a first and last line.
func TestAnchorMatchNeverOverwrites(t *testing.T) {
	text := "def f():\n    a = 1\n    b = 2  # typed by the user\n    c = 3\n    return a + b + c\n"
	checkLand(t, []landCase{
		{name: "middle line changed", text: text,
			old: "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c", new: "def f():\n    return 6",
			errHas: []string{"lines 1-5", "3 |     b = 2  # typed by the user", "b = 2\""}},
		{name: "middle changed, short block", text: "x = [\n    1,\n    2,\n]\n", old: "x = [\n    1,\n    3,\n]", new: "x = []", errHas: []string{"3 |     2,"}},
	})
}

// TestPlaceholderRefused: a line standing for code the model left out is
// never written over the real code, in whatever spelling.
func TestPlaceholderRefused(t *testing.T) {
	text := "func f() {\n\ta := 1\n\tb := 2\n\treturn a + b\n}\n"
	var cases []landCase
	for _, ph := range []string{"...", "…", "// ...", "// ... existing code ...", "/* ... */", "<!-- ... -->", "# rest unchanged",
		"(rest of file unchanged)", "// existing code", "# ... rest of the method ...", "// rest of the function remains the same",
		"{/* ... */}", "-- ...", "; ...", "// …existing code…", "[...]", "// Keep existing code", "# remaining code unchanged"} {
		cases = append(cases,
			landCase{name: "new " + ph, text: text, old: "\ta := 1\n\tb := 2\n\treturn a + b", new: "\ta := 10\n\t" + ph + "\n\treturn a + b",
				errHas: []string{"placeholder", ph}},
			landCase{name: "old " + ph, text: text, old: "func f() {\n\t" + ph + "\n}", new: "func f() {\n\treturn 0\n}",
				errHas: []string{"placeholder", ph}})
	}
	// A bare "..." under a line ending in ':' is a Python stub body only
	// when it is the whole body.
	pyClass := "class A:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
	cases = append(cases,
		landCase{name: "python ellipsis standing for a class body", text: pyClass,
			old: "class A:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2",
			new: "class A:\n    ...\n\n    def c(self):\n        return 3", errHas: []string{"placeholder", "..."}},
		landCase{name: "yaml ellipsis standing for items", text: "services:\n  web:\n    image: a\n  db:\n    image: b\n",
			old: "services:\n  web:\n    image: a\n  db:\n    image: b", new: "services:\n  ...\n  cache:\n    image: c", errHas: []string{"placeholder"}})
	checkLand(t, cases)
}

// TestEllipsisInRealCode: "..." inside code, and a placeholder line the
// file itself holds at the matched place, are content.
func TestEllipsisInRealCode(t *testing.T) {
	checkLand(t, []landCase{
		{name: "go variadic", text: "func j(p ...string) {}\n", old: "func j(p ...string) {}", new: "func j(sep string, p ...string) {}", want: "func j(sep string, p ...string) {}\n"},
		{name: "js spread", text: "f(...args);\n", old: "f(...args);", new: "g(...args);", want: "g(...args);\n"},
		{name: "python stub body in the file", text: "class P:\n    def f(self):\n        ...\n", old: "    def f(self):\n        ...", new: "    def f(self):\n        return 1", want: "class P:\n    def f(self):\n        return 1\n"},
		{name: "python stub body written", text: "class P:\n    def f(self):\n        return 1\n", old: "    def f(self):\n        return 1", new: "    def f(self):\n        ...", want: "class P:\n    def f(self):\n        ...\n"},
		{name: "placeholder comment the file holds", text: "{\n  // ... existing code ...\n  x();\n}\n", old: "  // ... existing code ...\n  x();", new: "  // ... existing code ...\n  y();", want: "{\n  // ... existing code ...\n  y();\n}\n"},
		{name: "prose with an ellipsis", text: "# T\n\nWait...\n", old: "Wait...", new: "Wait... and see.", want: "# T\n\nWait... and see.\n"},
	})
}

// TestAmbiguousTolerantRefused: two places that fit once whitespace is
// forgiven are never resolved by taking the first.
func TestAmbiguousTolerantRefused(t *testing.T) {
	text := "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 1\n"
	checkLand(t, []landCase{
		{name: "two places", text: text, old: "def run(self):\n    return 1", new: "def run(self):\n    return 2", errHas: []string{"lines 2-3", "lines 7-8"}},
		{name: "trailing whitespace, two places", text: "a \nb\na \nb\n", old: "a\nb", new: "x\ny", errHas: []string{"2 places"}},
		{name: "a place whose indentation maps by no rule still counts", text: "a:\n  x:\n    - 1\nb:\n  x:\n     - 1\n",
			old: "x:\n  - 1", new: "x:\n  - 2", errHas: []string{"lines 2-3", "lines 5-6"}},
	})
}

// TestMultiBlockAllOrNothing: when one block of a call cannot be placed
// safely, no block lands.
func TestMultiBlockAllOrNothing(t *testing.T) {
	text := "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 1\n"
	diff := block("class A:", "class Alpha:") + block("def run(self):\n    return 1", "def run(self):\n    return 2")
	res, err := ReplaceInFile("f.py", text, diff)
	if err == nil {
		t.Fatalf("applied:\n%s", res.Text)
	}
	if !strings.Contains(err.Error(), "block 2") || !strings.Contains(err.Error(), "no block was applied") {
		t.Errorf("error: %v", err)
	}
}

// TestEditorWordBoundary: editor's match may not begin or end inside a
// word of the file when the model's text begins or ends with a word
// character there.
func TestEditorWordBoundary(t *testing.T) {
	checkLand(t, []landCase{
		{name: "80 inside 8080", text: "port: 8080\n", old: "port: 80", new: "port: 81", errHas: []string{"inside a longer word", "line 1"}, only: "editor"},
		{name: "the real one elsewhere", text: "port: 8080\nport: 80\n", old: "port: 80", new: "port: 81", want: "port: 8080\nport: 81\n"},
		{name: "identifier suffix", text: "account := 2\ncount := 3\n", old: "count := 2", new: "count := 5", errHas: []string{"line 1"}, only: "editor"},
		{name: "model text ends in punctuation", text: "f(a, b)\n", old: "f(a,", new: "g(a,", want: "g(a, b)\n", only: "editor"},
		{name: "multiple real ones", text: "x = 1\nx = 1\n", old: "x = 1", new: "x = 2", errHas: []string{"multiple occurrences"}, only: "editor"},
		{name: "non-ASCII letters are word characters", text: "größe = 1\n", old: "öße = 1", new: "x = 2", errHas: []string{"inside a longer word"}, only: "editor"},
	})
}

// TestLineNumberPrefixStripped: lines copied from read_files with their
// "N | " numbers (or cat -n's "N\t") find their place.
func TestLineNumberPrefixStripped(t *testing.T) {
	text := "a\nb\n    c\nd\n"
	checkLand(t, []landCase{
		{name: "read_files numbers on old", text: text, old: "2 | b\n3 |     c", new: "b\n    C", want: "a\nb\n    C\nd\n", noteHas: "line numbers"},
		{name: "numbers on both", text: text, old: "2 | b\n3 |     c", new: "2 | b\n3 |     C", want: "a\nb\n    C\nd\n"},
		{name: "cat -n numbers", text: text, old: "     2\tb\n     3\t    c", new: "b\n    C", want: "a\nb\n    C\nd\n"},
		{name: "numbers that are not consecutive are content", text: text, old: "2 | b\n5 |     c", new: "x", skip: "patch"},
	})
}

// TestNotFoundShowsNearest: a refusal names the nearest region's lines,
// shows its current text with numbers and marks what differs.
func TestNotFoundShowsNearest(t *testing.T) {
	text := "one\ntwo\nthree\nfour\nfive\nsix\n"
	checkLand(t, []landCase{
		{name: "one line differs", text: text, old: "three\nFOUR\nfive", new: "3\n4\n5", errHas: []string{"lines 3-5", "> 4 | four", "\"FOUR\""}},
		{name: "nothing near", text: text, old: "qwerty\nasdf", new: "x", errHas: []string{"not"}},
	})
	// Cline's exact message stays when nothing is near.
	_, err := EditFile("p", "a\nb", true, EditorRequest{OldText: "zzz", NewText: "x"})
	if err == nil || err.Error() != "No replacement performed: text not found in p." {
		t.Errorf("error %v", err)
	}
}

// TestPatchAddOverExistingPlaceholder: an Add File that replaces a file
// with content standing for the code it leaves out would delete it.
func TestPatchAddOverExistingPlaceholder(t *testing.T) {
	fs := MemFS{"a.go": "package a\n\nfunc A() {}\n"}
	_, err := PlanPatch("*** Begin Patch\n*** Add File: a.go\n+package a\n+\n+// ... existing code ...\n+\n+func B() {}\n*** End Patch", fs)
	if err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Errorf("error %v", err)
	}
	if _, err := PlanPatch("*** Begin Patch\n*** Add File: b.go\n+package a\n+// ...\n*** End Patch", fs); err != nil {
		t.Errorf("a new file with such a line: %v", err)
	}
}

// TestNoWrongPlaceRandom throws random edits at random files built from
// few distinct lines at a few indentations, where repeats and near-misses
// are everywhere, and sends each the way models get it wrong: shifted,
// with spaces at line ends, with copied line numbers, or after the user
// typed inside the lines. An edit either lands exactly as intended or is
// refused; the user's typing is never overwritten.
func TestNoWrongPlaceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2))
	tokens := []string{"a = 1", "b = 2", "if x:", "return a", "}", "call(a, b)", ""}
	indents := []string{"", "  ", "    ", "      "}
	var applied, refused int
	for iter := range 4000 {
		n := 3 + r.IntN(14)
		file := make([]string, n)
		for i := range file {
			tok := tokens[r.IntN(len(tokens))]
			if tok != "" {
				tok = indents[r.IntN(len(indents))] + tok
			}
			file[i] = tok
		}
		k := 1 + r.IntN(min(4, n))
		s := r.IntN(n - k + 1)
		old := file[s : s+k]
		if strings.TrimSpace(strings.Join(old, "")) == "" {
			continue
		}
		// The intended new lines: the old ones with one changed, one added.
		newLines := append([]string{}, old...)
		ch := r.IntN(k)
		if strings.TrimSpace(newLines[ch]) != "" {
			newLines[ch] += " # changed"
		}
		newLines = append(newLines, indentOf(old[0])+"added()")
		text := strings.Join(file, "\n") + "\n"
		want := strings.Join(append(append(append([]string{}, file[:s]...), newLines...), file[s+k:]...), "\n") + "\n"
		readText := text // what the model read, before any typing
		variant := iter % 5
		sentOld, sentNew := append([]string{}, old...), append([]string{}, newLines...)
		typed := ""
		switch variant {
		case 0: // shifted by two spaces
			for i := range sentOld {
				if sentOld[i] != "" {
					sentOld[i] = "  " + sentOld[i]
				}
			}
			for i := range sentNew {
				if sentNew[i] != "" {
					sentNew[i] = "  " + sentNew[i]
				}
			}
		case 1: // spaces at the end of the first line
			sentOld[0] += "  "
		case 2: // copied line numbers
			for i := range sentOld {
				sentOld[i] = fmt.Sprintf("%d | %s", s+1+i, sentOld[i])
			}
		case 3, 4: // the user typed inside the lines since the model read them
			j := s + r.IntN(k)
			if strings.TrimSpace(file[j]) == "" {
				continue
			}
			typed = file[j] + " # typed"
			file[j] = typed
			text = strings.Join(file, "\n") + "\n"
		}
		oldText, newText := strings.Join(sentOld, "\n"), strings.Join(sentNew, "\n")
		for _, engine := range []string{"editor", "replace", "patch"} {
			// Where the text as sent occurs exactly (editor: anywhere;
			// the others: as whole lines), that place is the model's to
			// take; only loose placements are judged here.
			if engine == "editor" && strings.Contains(text, oldText) || strings.Contains("\n"+text, "\n"+oldText+"\n") {
				continue
			}
			c := landCase{text: text, old: oldText, new: newText}
			var got string
			var err error
			if variant == 4 {
				// With the read on record, nothing may land: the one
				// place the lines had is what the user changed.
				got, err = runLandRead(engine, c, readText)
				if err == nil {
					t.Fatalf("%s applied after the user typed inside, the read on record:\nread %q\nfile %q\nold %q\ngot %q", engine, readText, text, oldText, got)
				}
				refused++
				continue
			}
			got, _, err = runLand(engine, c)
			if err != nil {
				refused++
				continue
			}
			applied++
			if variant == 3 {
				if strings.Count(got, typed) < strings.Count(text, typed) {
					t.Fatalf("%s overwrote the user's typing %q:\nfile %q\nold %q\nnew %q\ngot %q", engine, typed, text, oldText, newText, got)
				}
				continue
			}
			if got != want {
				t.Fatalf("%s, variant %d, applied wrongly:\nfile %q\nold %q\nnew %q\ngot  %q\nwant %q", engine, variant, text, oldText, newText, got, want)
			}
		}
	}
	if applied == 0 || refused == 0 {
		t.Fatalf("applied %d, refused %d: the generator tests nothing", applied, refused)
	}
	t.Logf("applied %d, refused %d", applied, refused)
}

// TestLooseMatchHeldToLastRead: lines that were exact in the text the
// model read, and match only loosely now because the file changed there,
// never land on a look-alike elsewhere; where the change is the place
// itself (a format-on-save re-indenting it), they land there.
func TestLooseMatchHeldToLastRead(t *testing.T) {
	read := "class A:\n    def run(self):\n        return 1\n\n\ndef run(self):\n    return 1\n"
	typed := "class A:\n    def run(self):\n        return 10  # the user's\n\n\ndef run(self):\n    return 1\n"
	old, repl := "    def run(self):\n        return 1", "    def run(self):\n        return 2"
	res, err := EditFile("f.py", typed, true, EditorRequest{OldText: old, NewText: repl, Read: LastRead{Text: read, Known: true}})
	if err == nil || !strings.Contains(err.Error(), "lines 2-3 of the file as you last read it") {
		t.Errorf("editor: %v\n%s", err, res.Text)
	}
	rr, err := ReplaceInFileRead("f.py", typed, block(old, repl), LastRead{Text: read, Known: true})
	if err == nil || !strings.Contains(err.Error(), "another place") {
		t.Errorf("replace_in_file: %v\n%s", err, rr.Text)
	}
	fs := readFS{MemFS{"f.py": typed}, map[string]string{"f.py": read}}
	if plan, err := PlanPatch("*** Begin Patch\n*** Update File: f.py\n@@\n-    def run(self):\n-        return 1\n+    def run(self):\n+        return 2\n*** End Patch", fs); err == nil || !strings.Contains(err.Error(), "another place") {
		t.Errorf("apply_patch: %v %v", err, plan)
	}

	// The user also typed far below the look-alike, so that it lies
	// between the two changes: still another place.
	typedTwice := typed + "\n\nprint(run)  # typed too\n"
	res, err = EditFile("f.py", typedTwice, true, EditorRequest{OldText: old, NewText: repl, Read: LastRead{Text: read + "\n\nprint(run)\n", Known: true}})
	if err == nil {
		t.Errorf("editor, look-alike between two changes: applied\n%s", res.Text)
	}

	// Format-on-save turned the block the model read to tabs: the loose
	// match is that very place.
	formatted := "class A:\n\tdef run(self):\n\t\treturn 1\n\n\ndef go(self):\n    return 1\n"
	res, err = EditFile("f.py", formatted, true, EditorRequest{OldText: old, NewText: repl, Read: LastRead{Text: read, Known: true}})
	if err != nil || res.Text != "class A:\n\tdef run(self):\n\t\treturn 2\n\n\ndef go(self):\n    return 1\n" {
		t.Errorf("after format-on-save: %v\n%q", err, res.Text)
	}
}

// readFS is a MemFS that knows what the model last read.
type readFS struct {
	MemFS
	read map[string]string
}

func (r readFS) LastRead(p string) LastRead {
	t, ok := r.read[p]
	return LastRead{Text: t, Known: ok}
}

// TestDuplicateSinceReadMapped: the user pasted a copy of the lines the
// model is editing after the model read the file. The place the model read
// is found through the change (the copy is left alone); without a record
// of the read, editor refuses as before and replace_in_file keeps Cline's
// first occurrence.
func TestDuplicateSinceReadMapped(t *testing.T) {
	read := "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
	now := "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
	want := "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 3\n"
	lr := LastRead{Text: read, Known: true}
	old, repl := "def b():\n    return 2", "def b():\n    return 3"
	res, err := EditFile("f.py", now, true, EditorRequest{OldText: old, NewText: repl, Read: lr})
	if err != nil || res.Text != want {
		t.Errorf("editor: %v\n%q", err, res.Text)
	}
	if _, err := EditFile("f.py", now, true, EditorRequest{OldText: old, NewText: repl}); err == nil {
		t.Errorf("editor without the read applied")
	}
	rr, err := ReplaceInFileRead("f.py", now, block(old, repl), lr)
	if err != nil || rr.Text != want {
		t.Errorf("replace_in_file: %v\n%q", err, rr.Text)
	}
	// The user changed the place itself as well: no mapping is certain.
	edited := "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n    # typed\n"
	if rr, err := ReplaceInFileRead("f.py", edited, block(old, repl), LastRead{Text: read + "", Known: true}); err != nil {
		t.Logf("refused: %v", err)
	} else if rr.Text != "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 3\n    # typed\n" {
		t.Errorf("replace_in_file landed elsewhere: %q", rr.Text)
	}
}

// TestDuplicateSinceReadMappedPatch: apply_patch's first-place rule gives
// way to the place the model read when the copy came since.
func TestDuplicateSinceReadMappedPatch(t *testing.T) {
	read := "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
	now := "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
	fs := readFS{MemFS{"f.py": now}, map[string]string{"f.py": read}}
	plan, err := PlanPatch("*** Begin Patch\n*** Update File: f.py\n@@\n def b():\n-    return 2\n+    return 3\n*** End Patch", fs)
	if err != nil || plan.Files[0].NewText != "def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 3\n" {
		t.Errorf("%v %+v", err, plan)
	}
}

// TestPatchAnchorNotInsideWord: an "@@" line found as part of a line must
// not end inside a word there, or "@@ def b" would pick "def bar" and
// the hunk the first look-alike after it.
func TestPatchAnchorNotInsideWord(t *testing.T) {
	fs := MemFS{"a.py": "def bar():\n    return 1\n\n\ndef b(x):\n    return 1\n"}
	plan, err := PlanPatch("*** Begin Patch\n*** Update File: a.py\n@@ def b\n-    return 1\n+    return 2\n*** End Patch", fs)
	if err != nil || plan.Files[0].NewText != "def bar():\n    return 1\n\n\ndef b(x):\n    return 2\n" {
		t.Errorf("%v %+v", err, plan)
	}
}

// TestInsertLineMappedThroughChanges: insert_line counts lines of the
// text the model read. Lines the user added above since move the place
// down with them; a place inside what changed is refused.
func TestInsertLineMappedThroughChanges(t *testing.T) {
	read := "a\nb\nc\nd\n"
	lr := LastRead{Text: read, Known: true}
	ins := func(text string, n int) (EditorResult, error) {
		return EditFile("f.txt", text, true, EditorRequest{NewText: "NEW", InsertLine: &n, Read: lr})
	}
	res, err := ins("x\ny\na\nb\nc\nd\n", 3)
	if err != nil || res.Text != "x\ny\na\nb\nNEW\nc\nd\n" || !strings.Contains(res.Note, "line 5") {
		t.Errorf("lines added above: %v %q %q", err, res.Text, res.Note)
	}
	res, err = ins("a\nb\nc\nd\nz\n", 2)
	if err != nil || res.Text != "a\nNEW\nb\nc\nd\nz\n" || res.Note != "" {
		t.Errorf("lines added below: %v %q %q", err, res.Text, res.Note)
	}
	if res, err := ins("a\nB1\nB2\nc\nd\n", 3); err != nil || res.Text != "a\nB1\nB2\nNEW\nc\nd\n" {
		t.Errorf("before a line after what changed: %v %q", err, res.Text)
	}
	if res, err := ins("a\nB1\nB2\nc\nd\n", 2); err == nil {
		t.Errorf("inside what changed: applied %q", res.Text)
	} else if !strings.Contains(err.Error(), "changed since you last read") {
		t.Errorf("inside what changed: %v", err)
	}
	n := 5
	if res, err := EditFile("f.txt", "x\na\nb\nc\nd\n", true, EditorRequest{NewText: "END", InsertLine: &n, Read: lr}); err != nil || res.Text != "x\na\nb\nc\nd\nEND\n" {
		t.Errorf("append: %v %q", err, res.Text)
	}
}

// TestRefusalsQuoteLongLinesCut: a refusal that quotes the file (the word
// a match would cut into, the nearest region) cuts a long line of it, so a
// minified file cannot fill the model's context with one refusal.
func TestRefusalsQuoteLongLinesCut(t *testing.T) {
	long := "header\n" + strings.Repeat(`{"port":8080},`, 100000) + "\n"
	for name, old := range map[string]string{
		"inside a word":  `{"port":808`,
		"nearest region": "header\nnot the second line",
	} {
		_, err := Replace(long, old, "x")
		if err == nil {
			t.Fatalf("%s: applied", name)
		}
		if msg := err.Error(); len(msg) > 8<<10 || !strings.Contains(msg, "characters left out") {
			t.Errorf("%s: refusal of %d bytes: %.300s", name, len(msg), msg)
		}
	}
}
