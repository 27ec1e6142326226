package tools_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// The edit benchmark: edit calls the way models get them wrong, each with
// the one outcome that is right for it. It runs through the tools layer
// the way the session's scheduler does (build, Describe, whose refusal is
// the result, else Execute through planOnce and Files.Apply), which is
// where all matching happens; the daemon adds delivery, which re-plans
// through the same planners. `go test ./tools/ -run TestEditBenchmark -v`
// prints the table kept in docs/BENCHMARKS.md.

// benchFile is a realistic file with the places the scenarios edit.
type benchFile struct {
	name  string
	lines []string
	// comment is how a placeholder looks in this language.
	comment string
}

var benchGo = benchFile{name: "server/server.go", comment: "// ... existing code ...", lines: []string{
	"package server",
	"",
	"import (",
	"\t\"fmt\"",
	"\t\"net/http\"",
	"\t\"strings\"",
	")",
	"",
	"type Config struct {",
	"\tAddr    string",
	"\tPort    int",
	"\tVerbose bool",
	"}",
	"",
	"func (c *Config) Listen() string {",
	"\treturn fmt.Sprintf(\"%s:%d\", c.Addr, c.Port)",
	"}",
	"",
	"func handle(w http.ResponseWriter, r *http.Request) {",
	"\tname := strings.TrimPrefix(r.URL.Path, \"/hello/\")",
	"\tif name == \"\" {",
	"\t\thttp.Error(w, \"missing name\", http.StatusBadRequest)",
	"\t\treturn",
	"\t}",
	"\tfmt.Fprintf(w, \"hello, %s\\n\", name)",
	"}",
	"",
	"func joinAll(parts ...string) string {",
	"\tvar b strings.Builder",
	"\tfor i, p := range parts {",
	"\t\tif i > 0 {",
	"\t\t\tb.WriteString(\", \")",
	"\t\t}",
	"\t\tb.WriteString(p)",
	"\t}",
	"\treturn b.String()",
	"}",
}}

var benchPy = benchFile{name: "shop/cart.py", comment: "# ... rest of the method unchanged ...", lines: []string{
	"import json",
	"from dataclasses import dataclass",
	"",
	"",
	"@dataclass",
	"class Item:",
	"    name: str",
	"    price: float",
	"    qty: int = 1",
	"",
	"",
	"class Cart:",
	"    def __init__(self):",
	"        self.items = []",
	"",
	"    def add(self, item):",
	"        self.items.append(item)",
	"        return self",
	"",
	"    def total(self):",
	"        result = 0.0",
	"        for item in self.items:",
	"            result += item.price * item.qty",
	"        return result",
	"",
	"    def to_json(self):",
	"        return json.dumps([i.__dict__ for i in self.items])",
	"",
	"",
	"class Handler:",
	"    def handle(self, msg): ...",
}}

var benchYAML = benchFile{name: "deploy/compose.yaml", comment: "# ...", lines: []string{
	"services:",
	"  web:",
	"    image: nginx:1.25",
	"    ports:",
	"      - \"8080:80\"",
	"    environment:",
	"      - LOG_LEVEL=info",
	"      - WORKERS=4",
	"  db:",
	"    image: postgres:16",
	"    volumes:",
	"      - data:/var/lib/postgresql/data",
	"    environment:",
	"      - POSTGRES_PASSWORD=secret",
	"volumes:",
	"  data: {}",
}}

var benchJS = benchFile{name: "src/util.js", comment: "// ... rest of the code ...", lines: []string{
	"import { readFile } from \"node:fs/promises\";",
	"",
	"export async function loadConfig(path, ...overrides) {",
	"  const text = await readFile(path, \"utf8\");",
	"  const base = JSON.parse(text);",
	"  return Object.assign({}, base, ...overrides);",
	"}",
	"",
	"export function debounce(fn, ms) {",
	"  let timer = null;",
	"  return (...args) => {",
	"    clearTimeout(timer);",
	"    timer = setTimeout(() => fn(...args), ms);",
	"  };",
	"}",
	"",
	"export const defaults = {",
	"  port: 8080,",
	"  host: \"localhost\",",
	"  retries: 3,",
	"};",
}}

var benchMD = benchFile{name: "docs/README.md", comment: "<!-- ... -->", lines: []string{
	"# Project",
	"",
	"## Install",
	"",
	"Run the installer:",
	"",
	"    make install",
	"",
	"## Usage",
	"",
	"1. Start the server.",
	"2. Open the browser.",
	"3. Log in.",
	"",
	"## License",
	"",
	"MIT",
}}

// benchScenario is one intended edit: old lines exactly as the file has
// them, and the new lines exactly as they must land.
type benchScenario struct {
	name string
	file benchFile
	old  []string
	new  []string
}

var benchScenarios = []benchScenario{
	{"go-if", benchGo,
		[]string{"\tif name == \"\" {", "\t\thttp.Error(w, \"missing name\", http.StatusBadRequest)", "\t\treturn", "\t}"},
		[]string{"\tif name == \"\" {", "\t\tlog.Printf(\"no name in %s\", r.URL.Path)", "\t\thttp.Error(w, \"missing name\", http.StatusBadRequest)", "\t\treturn", "\t}"}},
	{"go-loop", benchGo,
		[]string{"\tfor i, p := range parts {", "\t\tif i > 0 {", "\t\t\tb.WriteString(\", \")", "\t\t}", "\t\tb.WriteString(p)", "\t}"},
		[]string{"\tfor i, p := range parts {", "\t\tif i > 0 {", "\t\t\tb.WriteString(\"; \")", "\t\t}", "\t\tb.WriteString(strings.TrimSpace(p))", "\t}"}},
	{"py-total", benchPy,
		[]string{"    def total(self):", "        result = 0.0", "        for item in self.items:", "            result += item.price * item.qty", "        return result"},
		[]string{"    def total(self, discount=0.0):", "        result = 0.0", "        for item in self.items:", "            result += item.price * item.qty", "        return result * (1 - discount)"}},
	{"py-add", benchPy,
		[]string{"    def add(self, item):", "        self.items.append(item)", "        return self"},
		[]string{"    def add(self, item):", "        if item.qty <= 0:", "            raise ValueError(\"qty must be positive\")", "        self.items.append(item)", "        return self"}},
	{"yaml-env", benchYAML,
		[]string{"    environment:", "      - LOG_LEVEL=info", "      - WORKERS=4"},
		[]string{"    environment:", "      - LOG_LEVEL=debug", "      - WORKERS=4", "      - TIMEOUT=30"}},
	{"yaml-db", benchYAML,
		[]string{"    image: postgres:16", "    volumes:", "      - data:/var/lib/postgresql/data"},
		[]string{"    image: postgres:17", "    volumes:", "      - data:/var/lib/postgresql/data", "      - ./init:/docker-entrypoint-initdb.d"}},
	{"js-load", benchJS,
		[]string{"  const text = await readFile(path, \"utf8\");", "  const base = JSON.parse(text);", "  return Object.assign({}, base, ...overrides);"},
		[]string{"  const text = await readFile(path, \"utf8\");", "  const base = JSON.parse(text);", "  if (typeof base !== \"object\") {", "    throw new TypeError(\"config must be an object\");", "  }", "  return Object.assign({}, base, ...overrides);"}},
	{"js-debounce", benchJS,
		[]string{"  return (...args) => {", "    clearTimeout(timer);", "    timer = setTimeout(() => fn(...args), ms);", "  };"},
		[]string{"  return (...args) => {", "    if (timer) clearTimeout(timer);", "    timer = setTimeout(() => fn(...args), ms);", "  };"}},
	{"md-usage", benchMD,
		[]string{"1. Start the server.", "2. Open the browser.", "3. Log in."},
		[]string{"1. Start the server.", "2. Open http://localhost:8080 in the browser.", "3. Log in.", "4. Pick a project."}},
}

// benchCase is one call and its right outcome.
type benchCase struct {
	name     string
	category string
	file     string // path
	text     string // the file's text when the call is made
	tool     string
	args     map[string]any
	// want is the file's text after a right application; refuse says the
	// only right outcome is a refusal (the file unchanged).
	want   string
	refuse bool
	// near is the 1-based line a refusal should name as the nearest
	// region (any of them), none when nothing comes close.
	near []int
	// seen, when set, is the text the model read before the file
	// changed into text.
	seen string
}

// benchCall builds the tool call for old/new lines as the model sent them.
func benchCall(tool, path string, old, new []string) map[string]any {
	switch tool {
	case tools.NameEditor:
		return map[string]any{"path": path, "old_text": strings.Join(old, "\n"), "new_text": strings.Join(new, "\n")}
	case tools.NameReplaceInFile:
		return map[string]any{"path": path, "diff": "------- SEARCH\n" + strings.Join(old, "\n") + "\n=======\n" + strings.Join(new, "\n") + "\n+++++++ REPLACE\n"}
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + path + "\n@@\n")
	for _, l := range old {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range new {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch")
	return map[string]any{"input": b.String()}
}

func benchIndex(lines, sub []string) int {
	for i := 0; i+len(sub) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func benchSplice(lines []string, at, n int, repl []string) []string {
	out := slices.Clone(lines[:at])
	out = append(out, repl...)
	return append(out, lines[at+n:]...)
}

// benchComment is a trailing comment in the file's language.
func benchComment(f benchFile, word string) string {
	if strings.HasSuffix(f.name, ".go") || strings.HasSuffix(f.name, ".js") {
		return " // " + word
	}
	return "  # " + word
}

func benchJoin(lines []string, eol string) string { return strings.Join(lines, eol) + eol }

func mapLines(lines []string, f func(int, string) string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = f(i, l)
	}
	return out
}

// leadingIndent is the indentation all non-blank lines share.
func commonIndent(lines []string) string {
	var p string
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			p, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// benchCases expands every scenario into its variants, for every tool.
func benchCases() []benchCase {
	var cases []benchCase
	allTools := []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch}
	for _, s := range benchScenarios {
		at := benchIndex(s.file.lines, s.old)
		if at < 0 {
			panic("scenario " + s.name + ": old lines not in the file")
		}
		text := benchJoin(s.file.lines, "\n")
		want := benchJoin(benchSplice(s.file.lines, at, len(s.old), s.new), "\n")
		base := commonIndent(s.old)
		type variant struct {
			category string
			text     string
			old, new []string
			want     string
			refuse   bool
			near     []int
		}
		var vs []variant
		add := func(v variant) {
			if v.text == "" {
				v.text = text
			}
			if v.want == "" && !v.refuse {
				v.want = want
			}
			vs = append(vs, v)
		}
		add(variant{category: "exact", old: s.old, new: s.new})
		add(variant{category: "trailing whitespace", old: mapLines(s.old, func(i int, l string) string {
			if i%2 == 0 {
				return l + "  "
			}
			return l
		}), new: s.new})
		// The model re-typed the block at another indentation: without the
		// block's own indentation, or with two more spaces.
		shift := func(l string) string {
			if base != "" {
				return strings.TrimPrefix(l, base)
			}
			if l == "" {
				return l
			}
			return "  " + l
		}
		add(variant{category: "indentation shift", old: mapLines(s.old, func(_ int, l string) string { return shift(l) }), new: mapLines(s.new, func(_ int, l string) string { return shift(l) })})
		if strings.Contains(base, "\t") || strings.HasPrefix(s.old[0], "\t") {
			tabs := func(_ int, l string) string {
				t := strings.TrimLeft(l, "\t")
				return strings.Repeat("    ", len(l)-len(t)) + t
			}
			add(variant{category: "tabs vs spaces", old: mapLines(s.old, tabs), new: mapLines(s.new, tabs)})
		}
		crlf := benchJoin(s.file.lines, "\r\n")
		add(variant{category: "line endings", text: crlf, old: s.old, new: s.new, want: benchJoin(benchSplice(s.file.lines, at, len(s.old), s.new), "\r\n")})
		numbered := func(i int, l string) string { return fmt.Sprintf("%d | %s", at+1+i, l) }
		add(variant{category: "line-number prefix", old: mapLines(s.old, numbered), new: s.new})
		add(variant{category: "line-number prefix", old: mapLines(s.old, numbered), new: mapLines(s.new, numbered)})
		add(variant{category: "line-number prefix", old: mapLines(s.old, func(i int, l string) string { return fmt.Sprintf("%6d\t%s", at+1+i, l) }), new: s.new})
		// The user typed since the model's read: elsewhere (the edit still
		// lands), or inside the lines the model sends (it must not).
		elsewhere := slices.Clone(s.file.lines)
		other := 0
		if at == 0 {
			other = len(elsewhere) - 1
		}
		elsewhere[other] += " "
		if strings.HasSuffix(s.file.name, ".py") || strings.HasSuffix(s.file.name, ".yaml") || strings.HasSuffix(s.file.name, ".md") {
			elsewhere = benchSplice(elsewhere, other, 1, []string{elsewhere[other], ""})
		}
		ewAt := benchIndex(elsewhere, s.old)
		add(variant{category: "stale: typed elsewhere", text: benchJoin(elsewhere, "\n"), old: s.old, new: s.new, want: benchJoin(benchSplice(elsewhere, ewAt, len(s.old), s.new), "\n")})
		mid := len(s.old) / 2
		typed := slices.Clone(s.file.lines)
		typed[at+mid] += benchComment(s.file, "user")
		add(variant{category: "stale: typed inside", text: benchJoin(typed, "\n"), old: s.old, new: s.new, refuse: true, near: []int{at + 1, at + mid + 1}})
		if len(s.old) >= 3 {
			// The model's own earlier edit changed the lines between the
			// first and last, and the model sends them as they were.
			earlier := slices.Clone(s.file.lines)
			for k := at + 1; k < at+len(s.old)-1; k++ {
				earlier[k] += benchComment(s.file, "edited")
			}
			add(variant{category: "stale: own earlier edit", text: benchJoin(earlier, "\n"), old: s.old, new: s.new, refuse: true, near: []int{at + 1, at + 2}})
		}
		phIndent := commonIndent(s.new[1:])
		ph := phIndent + s.file.comment
		add(variant{category: "placeholder in new text", old: s.old, new: []string{s.new[0], ph, s.new[len(s.new)-1]}, refuse: true, near: []int{at + 1}})
		if len(s.old) >= 3 {
			add(variant{category: "placeholder in old text", old: []string{s.old[0], ph, s.old[len(s.old)-1]}, new: s.new, refuse: true, near: []int{at + 1}})
		}
		add(variant{category: "absent", old: []string{base + "totally_made_up_call(42)", base + "another_line_that_is_not_there()"}, new: s.new, refuse: true})
		for _, v := range vs {
			for _, tool := range allTools {
				cases = append(cases, benchCase{
					name: s.name + "/" + v.category + "/" + tool, category: v.category,
					file: s.file.name, text: v.text, tool: tool,
					args: benchCall(tool, s.file.name, v.old, v.new),
					want: v.want, refuse: v.refuse, near: v.near,
				})
			}
		}
	}
	return append(cases, benchHandCases()...)
}

// benchHandCases are the cases no scenario expands into: words inside
// words, ambiguous places, calls of several blocks, and real code that
// looks like a placeholder.
func benchHandCases() []benchCase {
	var cs []benchCase
	one := func(name, category, path, text, tool string, args map[string]any, want string, refuse bool, near ...int) {
		args["path"] = path
		cs = append(cs, benchCase{name: name, category: category, file: path, text: text, tool: tool, args: args, want: want, refuse: refuse, near: near})
	}
	ed := func(old, new string) map[string]any { return map[string]any{"old_text": old, "new_text": new} }
	sr := func(blocks ...[2]string) map[string]any {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString("------- SEARCH\n" + bl[0] + "\n=======\n" + bl[1] + "\n+++++++ REPLACE\n")
		}
		return map[string]any{"diff": b.String()}
	}

	// Words: a match may not start or end inside a word.
	yamlPorts := "server:\n  port: 8080\n  admin_port: 80\n"
	one("word/port inside 8080", "word boundary", "cfg.yaml", yamlPorts, tools.NameEditor, ed("port: 80", "port: 81"), "", true, 2, 3)
	yamlTwo := "server:\n  port: 8080\n  port_alt: 80\nproxy:\n  port: 80\n"
	one("word/port with a real one", "word boundary", "cfg.yaml", yamlTwo, tools.NameEditor, ed("port: 80", "port: 81"), "server:\n  port: 8080\n  port_alt: 80\nproxy:\n  port: 81\n", false)
	goIdent := "func f() {\n\tcount := 1\n\taccount := 2\n\t_ = count + account\n}\n"
	one("word/count in account", "word boundary", "a.go", goIdent, tools.NameEditor, ed("count := 2", "count := 3"), "", true, 3)
	one("word/model text starts mid-word", "word boundary", "a.go", goIdent, tools.NameEditor, ed("ccount := 2", "ccount := 5"), "", true, 3)
	jsNum := "const limits = { max: 100, min: 10 };\n"
	one("word/10 inside 100", "word boundary", "l.js", jsNum, tools.NameEditor, ed("max: 10", "max: 20"), "", true, 1)
	one("word/punctuation edges", "word boundary", "l.js", jsNum, tools.NameEditor, ed("{ max: 100,", "{ max: 200,"), "const limits = { max: 200, min: 10 };\n", false)

	barB := "def bar():\n    return 1\n\n\ndef b(x):\n    return 1\n"
	one("word/patch anchor inside a longer name", "word boundary", "w.py", barB, tools.NameApplyPatch,
		map[string]any{"input": "*** Begin Patch\n*** Update File: w.py\n@@ def b\n-    return 1\n+    return 2\n*** End Patch"},
		"def bar():\n    return 1\n\n\ndef b(x):\n    return 2\n", false)

	// Ambiguous places: never applied.
	pyTwice := "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 1\n"
	one("ambiguous/tolerant twice (replace_in_file)", "ambiguous", "ab.py", pyTwice, tools.NameReplaceInFile, sr([2]string{"def run(self):\n    return 1", "def run(self):\n    return 2"}), "", true, 2, 7)
	one("ambiguous/tolerant twice (editor)", "ambiguous", "ab.py", pyTwice, tools.NameEditor, ed("def run(self):\n  return 1", "def run(self):\n  return 2"), "", true, 2, 7)
	one("ambiguous/tolerant twice (apply_patch)", "ambiguous", "ab.py", pyTwice, tools.NameApplyPatch, map[string]any{"input": "*** Begin Patch\n*** Update File: ab.py\n@@\n-def run(self):\n-    return 1\n+def run(self):\n+    return 2\n*** End Patch"}, "", true, 2, 7)
	one("ambiguous/exact twice (editor)", "ambiguous", "ab.py", pyTwice, tools.NameEditor, ed("    def run(self):\n        return 1", "    def run(self):\n        return 2"), "", true, 2, 7)
	one("ambiguous/second block ambiguous", "ambiguous", "ab.py", pyTwice, tools.NameReplaceInFile, sr([2]string{"class A:", "class Alpha:"}, [2]string{"def run(self):\n    return 1", "def run(self):\n    return 2"}), "", true, 2, 7)
	one("ambiguous/second block absent", "ambiguous", "ab.py", pyTwice, tools.NameReplaceInFile, sr([2]string{"class A:", "class Alpha:"}, [2]string{"class C:", "class Gamma:"}), "", true)
	yamlTwice := "a:\n  items:\n    - x\n    - y\nb:\n  items:\n    - x\n    - y\n"
	one("ambiguous/yaml tolerant twice", "ambiguous", "t.yaml", yamlTwice, tools.NameReplaceInFile, sr([2]string{"items:\n  - x\n  - y", "items:\n  - x\n  - z"}), "", true, 2, 6)
	one("ambiguous/unique with context", "ambiguous", "t.yaml", yamlTwice, tools.NameReplaceInFile, sr([2]string{" b:\n   items:\n     - x\n     - y", " b:\n   items:\n     - x\n     - z"}), "a:\n  items:\n    - x\n    - y\nb:\n  items:\n    - x\n    - z\n", false)

	// The place the model read changed, and a look-alike elsewhere fits
	// loosely: refused. Where a format-on-save changed the place itself,
	// the edit lands there.
	lookAlikes := []struct {
		name, path, read, now, old, new, want string
		near                                  int
	}{
		{"python method and function", "l.py",
			"class A:\n    def run(self):\n        return 1\n\n\ndef run(self):\n    return 1\n",
			"class A:\n    def run(self):\n        return 10  # typed\n\n\ndef run(self):\n    return 1\n",
			"    def run(self):\n        return 1", "    def run(self):\n        return 2", "", 2},
		{"yaml env at two depths", "l.yaml",
			"web:\n  env:\n    - A=1\njobs:\n  build:\n    env:\n      - A=1\n",
			"web:\n  env:\n    - A=2\njobs:\n  build:\n    env:\n      - A=1\n",
			"  env:\n    - A=1", "  env:\n    - A=1\n    - B=2", "", 2},
		{"js handler at two depths", "l.js",
			"function a() {\n  if (x) {\n    go();\n  }\n}\nfunction b() {\n  run(() => {\n    if (x) {\n      go();\n    }\n  });\n}\n",
			"function a() {\n  if (x) {\n    go(1);\n  }\n}\nfunction b() {\n  run(() => {\n    if (x) {\n      go();\n    }\n  });\n}\n",
			"  if (x) {\n    go();\n  }", "  if (x) {\n    go();\n    done();\n  }", "", 2},
		{"format-on-save turned the place to tabs", "f.py",
			"class A:\n    def run(self):\n        return 1\n",
			"class A:\n\tdef run(self):\n\t\treturn 1\n",
			"    def run(self):\n        return 1", "    def run(self):\n        return 2", "class A:\n\tdef run(self):\n\t\treturn 2\n", 0},
	}
	// The user pasted a copy of the lines above them since the model's
	// read: the place the model read is the one to edit.
	copies := []struct{ name, path, read, now, old, new, want string }{
		{"python function copied above", "c.py",
			"def a():\n    return 1\n\n\ndef b():\n    return 2\n",
			"def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n",
			"def b():\n    return 2", "def b():\n    return 3",
			"def b():\n    return 2\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 3\n"},
		{"yaml item copied above", "c.yaml",
			"jobs:\n  - name: lint\n    run: make lint\n  - name: test\n    run: make test\n",
			"jobs:\n  - name: test\n    run: make test\n  - name: lint\n    run: make lint\n  - name: test\n    run: make test\n",
			"  - name: test\n    run: make test", "  - name: test\n    run: make test -race",
			"jobs:\n  - name: test\n    run: make test\n  - name: lint\n    run: make lint\n  - name: test\n    run: make test -race\n"},
	}
	for _, cp := range copies {
		for _, tool := range []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch} {
			cs = append(cs, benchCase{name: "stale/" + cp.name + "/" + tool, category: "stale: copy pasted since the read", file: cp.path, text: cp.now, tool: tool,
				args: benchCall(tool, cp.path, strings.Split(cp.old, "\n"), strings.Split(cp.new, "\n")), want: cp.want, seen: cp.read})
		}
	}
	// insert_line counts lines of the text the model read.
	readPy := benchJoin(benchPy.lines, "\n")
	typedAbove := "# added by the user\n# and another line\n" + readPy
	ins := func(n int) map[string]any {
		return map[string]any{"path": benchPy.name, "new_text": "    def clear(self):\n        self.items = []\n", "insert_line": n}
	}
	wantIns := func(text string, before int) string {
		ls := strings.SplitAfter(text, "\n")
		return strings.Join(ls[:before-1], "") + "    def clear(self):\n        self.items = []\n" + strings.Join(ls[before-1:], "")
	}
	cs = append(cs,
		benchCase{name: "stale/insert_line, lines added above", category: "stale: insert_line", file: benchPy.name, text: typedAbove, tool: tools.NameEditor,
			args: ins(20), want: wantIns(typedAbove, 22), seen: readPy},
		benchCase{name: "stale/insert_line, lines added below", category: "stale: insert_line", file: benchPy.name, text: readPy + "# added by the user\n", tool: tools.NameEditor,
			args: ins(20), want: wantIns(readPy+"# added by the user\n", 20), seen: readPy},
		benchCase{name: "stale/insert_line, the line itself changed", category: "stale: insert_line", file: benchPy.name,
			text: strings.Replace(readPy, "    def total(self):", "    def total(self, tax=0):", 1), tool: tools.NameEditor,
			args: ins(20), refuse: true, near: []int{20}, seen: readPy},
		benchCase{name: "stale/insert_line, nothing changed", category: "stale: insert_line", file: benchPy.name, text: readPy, tool: tools.NameEditor,
			args: ins(20), want: wantIns(readPy, 20), seen: readPy},
	)
	for _, la := range lookAlikes {
		for _, tool := range []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch} {
			c := benchCase{name: "stale/" + la.name + "/" + tool, category: "stale: look-alike elsewhere", file: la.path, text: la.now, tool: tool,
				args: benchCall(tool, la.path, strings.Split(la.old, "\n"), strings.Split(la.new, "\n")), want: la.want, refuse: la.want == "", seen: la.read}
			if la.near > 0 {
				c.near = []int{la.near}
			}
			cs = append(cs, c)
		}
	}

	// Real code with "..." is not a placeholder.
	one("ellipsis/go variadic", "ellipsis in real code", benchGo.name, benchJoin(benchGo.lines, "\n"), tools.NameReplaceInFile,
		sr([2]string{"func joinAll(parts ...string) string {", "func joinAll(sep string, parts ...string) string {"}),
		strings.Replace(benchJoin(benchGo.lines, "\n"), "func joinAll(parts ...string)", "func joinAll(sep string, parts ...string)", 1), false)
	one("ellipsis/js spread", "ellipsis in real code", benchJS.name, benchJoin(benchJS.lines, "\n"), tools.NameEditor,
		ed("timer = setTimeout(() => fn(...args), ms);", "timer = setTimeout(() => fn.apply(this, args), ms);"),
		strings.Replace(benchJoin(benchJS.lines, "\n"), "fn(...args), ms", "fn.apply(this, args), ms", 1), false)
	stub := "class P:\n    def f(self):\n        ...\n\n    def g(self):\n        return 2\n"
	one("ellipsis/python body in the file", "ellipsis in real code", "p.py", stub, tools.NameReplaceInFile,
		sr([2]string{"    def f(self):\n        ...", "    def f(self):\n        return 1"}), "class P:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n", false)
	one("ellipsis/python stub written", "ellipsis in real code", "p.py", stub, tools.NameReplaceInFile,
		sr([2]string{"    def g(self):\n        return 2", "    def g(self):\n        ..."}), "class P:\n    def f(self):\n        ...\n\n    def g(self):\n        ...\n", false)
	one("ellipsis/python one-line stub", "ellipsis in real code", benchPy.name, benchJoin(benchPy.lines, "\n"), tools.NameEditor,
		ed("    def handle(self, msg): ...", "    def handle(self, msg) -> None: ..."),
		strings.Replace(benchJoin(benchPy.lines, "\n"), "def handle(self, msg): ...", "def handle(self, msg) -> None: ...", 1), false)
	one("ellipsis/placeholder kept when in file", "ellipsis in real code", "n.go", "func f() {\n\t// ... existing code ...\n\treturn\n}\n", tools.NameEditor,
		ed("\t// ... existing code ...\n\treturn", "\t// ... existing code ...\n\treturn // done"), "func f() {\n\t// ... existing code ...\n\treturn // done\n}\n", false)
	// A bare "..." with more of the block after it stands for the lines
	// it leaves out, even under a line ending in ':'.
	for _, tool := range []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch} {
		cart := benchJoin(benchPy.lines, "\n")
		old := []string{"class Cart:", "    def __init__(self):", "        self.items = []", "", "    def add(self, item):", "        self.items.append(item)", "        return self"}
		cs = append(cs, benchCase{name: "placeholder/python ellipsis for a class body/" + tool, category: "placeholder in new text", file: benchPy.name, text: cart, tool: tool,
			args: benchCall(tool, benchPy.name, old, []string{"class Cart:", "    ...", "", "    def clear(self):", "        self.items = []"}), refuse: true, near: []int{12}})
	}
	// Placeholder spellings, each refused.
	for i, ph := range []string{"...", "// ...", "/* ... */", "<!-- ... -->", "# rest unchanged", "(rest of file unchanged)", "// existing code", "# ... existing code ...", "// rest of the function remains the same", "…"} {
		one(fmt.Sprintf("placeholder/spelling %d %q", i+1, ph), "placeholder in new text", "m.md", "# T\n\nintro\n\n## A\n\ntext a\n", tools.NameReplaceInFile,
			sr([2]string{"## A\n\ntext a", "## A\n" + ph + "\ntext b"}), "", true, 5)
	}
	return cs
}

// benchOutcome sorts what happened to one case.
type benchOutcome int

const (
	outApplied benchOutcome = iota
	outRefusedNear
	outRefused
	outWrong
)

var nearRE = regexp.MustCompile(`lines? (\d+)(?:\s*-\s*(\d+))?`)

// namesLine reports whether msg names one of the lines in want, alone or
// as the start or end of a range.
func namesLine(msg string, want []int) bool {
	for _, m := range nearRE.FindAllStringSubmatch(msg, -1) {
		for _, g := range m[1:] {
			var n int
			if _, err := fmt.Sscan(g, &n); err == nil && slices.Contains(want, n) {
				return true
			}
		}
	}
	return false
}

func runBenchCase(t *testing.T, c benchCase) (benchOutcome, string) {
	h := newEditHarness(t)
	h.write(c.file, c.text)
	if c.seen != "" {
		h.files.Seen(h.abs(c.file), c.seen)
	}
	res := h.schedule(c.tool, c.args)
	got, _ := h.disk(c.file)
	if res.IsError {
		if got != c.text {
			return outWrong, "refused but changed the file:\n" + got
		}
		if len(c.near) > 0 && namesLine(res.Content, c.near) {
			return outRefusedNear, res.Content
		}
		return outRefused, res.Content
	}
	if c.refuse || got != c.want {
		return outWrong, fmt.Sprintf("applied:\n%s\nwant %s", got, map[bool]string{true: "a refusal", false: ":\n" + c.want}[c.refuse])
	}
	return outApplied, res.Content
}

// TestEditBenchmark runs the corpus and fails on any edit that lands
// anywhere but where it should (or lands when it should be refused).
func TestEditBenchmark(t *testing.T) {
	cases := benchCases()
	if len(cases) < 100 {
		t.Fatalf("the corpus has %d cases, want at least 100", len(cases))
	}
	type row struct{ n, ok, near, refused, wrong int }
	rows := map[string]*row{}
	var order []string
	total := &row{}
	byTool := map[string]*row{tools.NameEditor: {}, tools.NameReplaceInFile: {}, tools.NameApplyPatch: {}}
	for _, c := range cases {
		out, msg := runBenchCase(t, c)
		r := rows[c.category]
		if r == nil {
			r = &row{}
			rows[c.category] = r
			order = append(order, c.category)
		}
		for _, x := range []*row{r, total, byTool[c.tool]} {
			x.n++
			switch out {
			case outApplied:
				x.ok++
			case outRefusedNear:
				x.near++
			case outRefused:
				x.refused++
			case outWrong:
				x.wrong++
			}
		}
		if out == outWrong {
			t.Errorf("%s: applied wrongly: %s", c.name, msg)
		}
		if testing.Verbose() && out != outApplied && !c.refuse {
			t.Logf("%s: refused where it should apply: %s", c.name, msg)
		}
	}
	var b strings.Builder
	b.WriteString("\n| category | cases | applied correctly | refused, naming the nearest line | refused, no line | applied wrongly |\n|---|---|---|---|---|---|\n")
	for _, k := range order {
		r := rows[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", k, r.n, r.ok, r.near, r.refused, r.wrong)
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | %d | %d |\n", total.n, total.ok, total.near, total.refused, total.wrong)
	b.WriteString("\n| tool | cases | applied correctly | refused, naming the nearest line | refused, no line | applied wrongly |\n|---|---|---|---|---|---|\n")
	for _, k := range []string{tools.NameEditor, tools.NameReplaceInFile, tools.NameApplyPatch} {
		r := byTool[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", k, r.n, r.ok, r.near, r.refused, r.wrong)
	}
	t.Log(b.String())
}
