package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/toolspec"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzBuildArgs feeds arbitrary argument text to every built-in tool: a
// call either fails with a *ValidationError or reaches the
// implementation with a JSON object.
func FuzzBuildArgs(f *testing.F) {
	for _, seed := range []string{``, `{}`, `null`, `[]`, `{"files":[{"path":"a","start_line":"3"}]}`,
		`{"commands":"ls","timeout":"x"}`, `{"options":["a"]}`, `{"entries":[{"content":"c","status":"done"}]}`,
		`{"path":null}`, `{"files":"[{\"path\":1}]"}`, `{"a":1e999}`, "{\"q\":\"\xff\"}"} {
		f.Add(seed)
	}
	var tools []Tool
	var got json.RawMessage
	for _, s := range BuiltinSpecs() {
		tool, err := NewTool(s, func(args json.RawMessage) (Invocation, error) {
			got = args
			return nil, nil
		})
		if err != nil {
			f.Fatal(err)
		}
		tools = append(tools, tool)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, tool := range tools {
			got = nil
			_, err := tool.Build(json.RawMessage(args))
			var ve *ValidationError
			switch {
			case err == nil:
				var obj map[string]any
				if json.Unmarshal(got, &obj) != nil {
					t.Fatalf("%s: implementation got %q from %q", tool.Spec().Name, got, args)
				}
			case !errors.As(err, &ve) || len(ve.Problems) == 0:
				t.Fatalf("%s: %q gave %v", tool.Spec().Name, args, err)
			}
		}
	})
}

// FuzzRenderSchema renders arbitrary object schemas in every format: a
// schema NewTool accepts always renders, and the JSON formats stay JSON.
func FuzzRenderSchema(f *testing.F) {
	f.Add(issueSchema)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}}}`)
	f.Add(`{"properties":{"x":{"type":["null","integer"],"enum":[1,null]},"y":true,"z":{"items":{"const":"\u2028"}}}}`)
	f.Add(`{"properties":{"t":{"$ref":"#"},"u":{"$ref":"#/properties/t"},"v":{"$ref":"#/x~1y/0"}},"x/y":[{"type":"string"}]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		tool, err := NewTool(Spec{Name: "t", Description: "d {{CWD}}", Parameters: json.RawMessage(schema)}, nil)
		if err != nil {
			return
		}
		for _, format := range formats {
			out, err := Render(format, []Tool{tool}, Context{CWD: "\"\\"})
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if format != toolspec.FormatXML && !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", format, out)
			}
		}
	})
}

// FuzzValidateSchema checks arbitrary arguments against arbitrary
// schemas: a schema NewTool accepts either refuses the arguments with
// problems or hands the implementation a JSON object; nothing panics.
func FuzzValidateSchema(f *testing.F) {
	f.Add(issueSchema, `{"title":"t","owner":{"login":1},"target":true}`)
	f.Add(wideSchema, "{"+wideArgs+"}")
	f.Add(foreignSchema, `{"tree":{"tree":{"name":7}},"x-a":"b","count":"0"}`)
	f.Add(`{"properties":{"a":{"anyOf":[{"$ref":"#"},{"type":"integer","multipleOf":0.1}]}}}`, `{"a":{"a":0.3}}`)
	f.Add(`{"properties":{"a":{"allOf":[{"$ref":"#/properties/a"}]}}}`, `{"a":[1]}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		var got json.RawMessage
		tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(schema)}, func(a json.RawMessage) (Invocation, error) {
			got = a
			return nil, nil
		})
		if err != nil {
			return
		}
		_, err = tool.Build(json.RawMessage(args))
		var ve *ValidationError
		switch {
		case err == nil:
			var obj map[string]any
			if json.Unmarshal(got, &obj) != nil {
				t.Fatalf("implementation got %q from %q", got, args)
			}
		case !errors.As(err, &ve) || len(ve.Problems) == 0 || len(ve.Problems) > maxProblems+1:
			t.Fatalf("%q gave %v", args, err)
		}
	})
}

// FuzzWhyNotReadOnly: whatever the line, the check answers without
// panicking, never accepts a blank one, and accepts only lines that
// parse into commands whose every word is literal text: no expansion of
// any kind, no braces, no $'…', no background job, no here-document.
func FuzzWhyNotReadOnly(f *testing.F) {
	for _, seed := range []string{"ls -la", "grep 'a > b' f", `echo "$(rm x)"`, "cat <<EOF\nx\nEOF", "ls >/dev/null 2>&1",
		"sed -n '1p' f", "{ ls; }", "a=$(b) ls", "ls $((1+2))", "echo ${x:-$(rm y)}", "x[0]=1 ls", "\\", "'",
		"find . -{delete,print}", "find . -$'\\x64elete'", "sort -uo out f", "sed -e1wFILE f", "git grep --open=x y",
		"env -S 'touch x'", "ls | xargs find", "printf -v 'a[$(touch x)]' y", "test -v 'a[$(x)]'", "echo ${x@P}",
		"git ls-remote --upload-pack=x .", "go list -toolexec=x ./...", "find *", "ls ~", "git log --oneline -5",
		"LC_ALL=C sort a", "find . -name '*.go' | xargs wc -l", "cat <<< hi", "git -c core.pager=x log",
		"sort ./é* -u", "ls >/dev/null\r", "ls #\\\ntouch x", "sort $\\\n'\\x2do' out f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if WhyNotReadOnly(line) != "" {
			return
		}
		if strings.TrimSpace(line) == "" {
			t.Fatalf("an empty line %q was accepted", line)
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(line), "")
		if err != nil {
			t.Fatalf("%q accepted, but it does not parse: %v", line, err)
		}
		if strings.ContainsRune(line, '\r') {
			t.Fatalf("%q accepted with a carriage return", line)
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			bad := ""
			switch n := n.(type) {
			case *syntax.Comment:
				if strings.Contains(n.Text, "\n") {
					bad = "a comment the shell ends earlier"
				}
			case *syntax.Stmt:
				if n.Background || n.Coprocess {
					bad = "a background job"
				}
			case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ParamExp, *syntax.ExtGlob,
				*syntax.ArithmCmd, *syntax.TestClause, *syntax.Subshell, *syntax.FuncDecl, *syntax.IfClause,
				*syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.DeclClause, *syntax.LetClause:
				bad = fmt.Sprintf("%T", n)
			case *syntax.SglQuoted:
				if n.Dollar {
					bad = "$'...'"
				}
			case *syntax.DblQuoted:
				if n.Dollar {
					bad = `$"..."`
				}
			case *syntax.Redirect:
				if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
					bad = "a here-document"
				}
			case *syntax.Assign:
				if n.Index != nil || n.Array != nil {
					bad = "an array assignment"
				}
			case *syntax.Word:
				if lit, ok := n.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
					bad = "a tilde"
				} else {
					syntax.SplitBraces(n) // Walk then meets any *syntax.BraceExp
				}
			case *syntax.BraceExp:
				bad = "brace expansion"
			}
			if bad != "" {
				t.Fatalf("%q accepted with %s", line, bad)
			}
			return true
		})
	})
}
