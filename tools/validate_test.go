package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/toolspec"
)

// captureBuild returns a built-in tool whose implementation records the
// arguments it was given.
func captureBuild(t *testing.T, name string, got *json.RawMessage) Tool {
	t.Helper()
	tool, err := Builtin(name, func(args json.RawMessage) (Invocation, error) {
		*got = args
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestValidationProblems(t *testing.T) {
	cases := []struct {
		tool, args string
		want       []string
	}{
		{"read_files", `{"files":[{"start_line":1}]}`, []string{"files[0].path: required"}},
		{"read_files", `{}`, []string{"files: required"}},
		{"read_files", ``, []string{"files: required"}},
		{"read_files", `{"files":[]}`, []string{"files: must be an array of objects with at least 1 item, got 0 items"}},
		{"read_files", `{"files":[{"path":"a","start_line":0},{"path":3}]}`, []string{
			"files[0].start_line: must be an integer ≥ 1, got 0",
			"files[1].path: must be a string, got 3"}},
		{"read_files", `{"files":{"path":"a"}}`, []string{"files: must be an array of objects with at least 1 item, got an object"}},
		{"run_commands", `{"commands":["ls"],"timeout":"abc"}`, []string{`timeout: must be an integer ≥ 1, got "abc"`}},
		{"run_commands", `{"commands":["ls"],"timeout":2.5}`, []string{"timeout: must be an integer ≥ 1, got 2.5"}},
		{"run_commands", `{"commands":[1]}`, []string{"commands[0]: must be a string, got 1"}},
		{"run_commands", `{"timeout":-1}`, []string{"commands: required", "timeout: must be an integer ≥ 1, got -1"}},
		{"ask_question", `{"question":"q","options":["only"]}`, []string{"options: must be an array of strings with 2 to 5 items, got 1 item"}},
		{"ask_question", `{"question":"q","options":["a","b","c","d","e","f"]}`, []string{"options: must be an array of strings with 2 to 5 items, got 6 items"}},
		{"update_plan", `{"entries":[{"content":"x","status":"done"}]}`, []string{`entries[0].status: must be one of "pending", "in_progress", "completed", got "done"`}},
		{"spawn_agent", `{"prompt":""}`, []string{`prompt: must be a non-empty string, got ""`}},
		{"submit_and_exit", `{"summary":"s","verified":"yes"}`, []string{`verified: must be a boolean, got "yes"`}},
		{"submit_and_exit", `{"summary":null,"verified":true}`, []string{"summary: must be a string, got null"}},
		{"editor", `{"path":"a","new_text":"` + strings.Repeat("x", 50) + `","insert_line":"x"}`, []string{`insert_line: must be an integer ≥ 1, got "x"`}},
		{"read_files", `[{"path":"a"}]`, []string{"arguments must be a JSON object, got an array"}},
		{"read_files", `"a.go"`, []string{`arguments must be a JSON object, got "a.go"`}},
		{"read_files", `{"files":[{"path":"a"}]`, []string{"arguments are not valid JSON (unexpected end of JSON input at byte 23); send one JSON object with the tool's parameters"}},
		{"read_files", `{"files": nope}`, []string{"arguments are not valid JSON (invalid character 'o' in literal null (expecting 'u') at byte 12); send one JSON object with the tool's parameters"}},
	}
	for _, c := range cases {
		var got json.RawMessage
		tool := captureBuild(t, c.tool, &got)
		_, err := tool.Build(json.RawMessage(c.args))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s %s: error %v, want a *ValidationError", c.tool, c.args, err)
			continue
		}
		var probs []string
		for _, p := range ve.Problems {
			probs = append(probs, p.String())
		}
		if !slices.Equal(probs, c.want) {
			t.Errorf("%s %s:\n got %q\nwant %q", c.tool, c.args, probs, c.want)
		}
		if ve.Tool != c.tool {
			t.Errorf("ValidationError.Tool = %q, want %q", ve.Tool, c.tool)
		}
		if got != nil {
			t.Errorf("%s %s: the implementation ran on invalid arguments", c.tool, c.args)
		}
	}
}

// TestValidationNormalises covers the leniency for text-path models,
// which send every value as a string, and for null optional fields.
func TestValidationNormalises(t *testing.T) {
	cases := []struct {
		tool, args, want string
	}{
		{"run_commands", `{"commands":["go test ./..."],"timeout":"30"}`, `{"commands":["go test ./..."],"timeout":30}`},
		{"run_commands", `{"commands":"go vet ./..."}`, `{"commands":["go vet ./..."]}`},
		{"run_commands", `{"commands":"[\"a\", \"b\"]"}`, `{"commands":["a","b"]}`},
		{"list_files", `{"path":"src","recursive":"true"}`, `{"path":"src","recursive":true}`},
		{"list_files", `{"path":"src","recursive":null}`, `{"path":"src"}`},
		{"read_files", `{"files":"[{\"path\":\"a\",\"start_line\":\"2\"}]"}`, `{"files":[{"path":"a","start_line":2}]}`},
		{"submit_and_exit", `{"summary":"done","verified":" FALSE "}`, `{"summary":"done","verified":false}`},
		{"list_files", `{"path":"src","extra":1}`, `{"path":"src","extra":1}`}, // unknown fields pass untouched
		{"list_files", ` {"path": "src"} `, `{"path": "src"}`},                 // unchanged input is passed as sent
	}
	for _, c := range cases {
		var got json.RawMessage
		tool := captureBuild(t, c.tool, &got)
		if _, err := tool.Build(json.RawMessage(c.args)); err != nil {
			t.Errorf("%s %s: %v", c.tool, c.args, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s %s: implementation got %s, want %s", c.tool, c.args, got, c.want)
		}
	}
}

func TestValidationErrorText(t *testing.T) {
	e := &ValidationError{Tool: "read_files", Problems: []Problem{{Path: "files[0].path", Message: "required"}, {Message: "whole"}}}
	want := "Invalid arguments for read_files:\n- files[0].path: required\n- whole"
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}

func TestValidationOfOtherSchemas(t *testing.T) {
	cases := []struct {
		name, schema, args string
		want               []string
	}{
		{"closed object", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"additionalProperties":false}`,
			`{"a":"x","c":1,"d":2}`, []string{"c: unknown parameter; known: a, b", "d: unknown parameter; known: a, b"}},
		{"oneOf names the alternatives", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			`{"v":true}`, []string{"v: must be a string or an integer, got true"}},
		{"nullable", `{"type":"object","properties":{"n":{"type":["integer","null"],"maximum":3}}}`,
			`{"n":4}`, []string{"n: must be an integer ≤ 3 or null, got 4"}},
		{"old draft accepted", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"q":{"type":"string","minLength":2}},"required":["q"]}`,
			`{"q":"a"}`, []string{`q: must be a string of at least 2 characters, got "a"`}},
		{"pattern", `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}}}`,
			`{"id":"A1"}`, []string{`id: must be a string matching /^[a-z]+$/, got "A1"`}},
		{"local $ref", `{"type":"object","properties":{"owner":{"$ref":"#/$defs/user"}},"$defs":{"user":{"type":"object","properties":{"login":{"type":"string"}},"required":["login"]}}}`,
			`{"owner":{"login":7}}`, []string{"owner.login: must be a string, got 7"}},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0}},"required":["x","y"]}}}`,
			`{"o":{"x":0}}`, []string{"o.y: required", "o.x: must be a number > 0, got 0"}},
	}
	for _, c := range cases {
		tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(c.schema)}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = tool.Build(json.RawMessage(c.args))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a *ValidationError", c.name, err)
			continue
		}
		if len(ve.Problems) != len(c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, ve.Problems, c.want)
			continue
		}
		for i, p := range ve.Problems {
			if !strings.HasPrefix(p.String(), c.want[i]) {
				t.Errorf("%s: problem %q, want it to start with %q", c.name, p.String(), c.want[i])
			}
		}
	}
}

func TestNewToolRejectsBadSchemas(t *testing.T) {
	// Only what no call could fit is refused: no JSON, or not an object.
	for _, schema := range []string{`{"type":"array"}`, `{"type":`} {
		if _, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(schema)}, nil); err == nil {
			t.Errorf("NewTool accepted schema %s", schema)
		}
	}
}

// TestUncompilableSchemaOffersTheToolUnchecked: a schema the library
// cannot compile (a reference to nothing or outside the document, a
// keyword of the wrong shape) keeps its tool; the arguments pass as sent.
// Before, each of these left the tool out.
func TestUncompilableSchemaOffersTheToolUnchecked(t *testing.T) {
	for _, schema := range []string{`{"$ref":"http://example.com/s.json"}`,
		`{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, `{"properties":{"a":{"$ref":"#anchor"}}}`,
		`{"properties":{"a":{"type":"string","minLength":"3"}}}`, `{"properties":{"a":{"maxItems":1.5}}}`,
		`{"properties":[]}`, `{"properties":{"a":3}}`, `{"required":"a"}`, `{"type":7}`, `{"anyOf":{}}`,
		`{"properties":{"a":{"minimum":"0"}}}`, `{"properties":{"a":{"$ref":"#/properties/a/type"}}}`} {
		var got json.RawMessage
		tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(schema)}, func(args json.RawMessage) (Invocation, error) {
			got = args
			return nil, nil
		})
		if err != nil {
			t.Errorf("NewTool refused schema %s: %v", schema, err)
			continue
		}
		if tool.(*specTool).v.uncompiled() == nil {
			t.Errorf("schema %s compiled, want it reported as not compiled", schema)
		}
		if _, err := tool.Build(json.RawMessage(`{"a":[1,2]}`)); err != nil || string(got) != `{"a":[1,2]}` {
			t.Errorf("schema %s: Build = %v with %s, want the arguments passed unchecked", schema, err, got)
		}
	}
	logger, buf := logBuffer()
	specs := MCPToolSpecs([]MCPServerTools{{UID: "s", Tools: []MCPToolDef{{Name: "t", InputSchema: json.RawMessage(`{"required":"a"}`)}}}}, logger)
	if len(specs) != 1 {
		t.Fatalf("MCPToolSpecs kept %d tools, want the one whose schema does not compile", len(specs))
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.Contains(buf.String(), "unchecked") {
		t.Errorf("log, want one line saying the arguments pass unchecked:\n%s", buf)
	}
	tool, err := NewTool(Spec{Name: "noargs"}, func(json.RawMessage) (Invocation, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Build(nil); err != nil {
		t.Errorf("a tool without parameters refused empty input: %v", err)
	}
}

type readArgs struct {
	Files []struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
	} `json:"files"`
}

func TestTypedAndDecode(t *testing.T) {
	var got readArgs
	tool, err := Builtin(NameReadFiles, Typed(func(a readArgs) (Invocation, error) {
		got = a
		return nil, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Build(json.RawMessage(`{"files":[{"path":"a.go","start_line":"7"}]}`)); err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 1 || got.Files[0].Path != "a.go" || got.Files[0].StartLine != 7 {
		t.Errorf("decoded %+v", got)
	}

	// A struct that disagrees with the schema is reported by field, and
	// Build names the tool.
	type wrong struct {
		Files string `json:"files"`
	}
	tool, _ = Builtin(NameReadFiles, Typed(func(wrong) (Invocation, error) { return nil, nil }))
	_, err = tool.Build(json.RawMessage(`{"files":[{"path":"a"}]}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Tool != NameReadFiles || len(ve.Problems) != 1 || ve.Problems[0].Path != "files" {
		t.Errorf("Typed with a mismatched struct: %v", err)
	}
	if _, err := Decode[readArgs](json.RawMessage(`{`)); err == nil {
		t.Error("Decode accepted broken JSON")
	}
}

func TestDescribe(t *testing.T) {
	cases := map[string]string{
		`{"type":"string"}`:                                "a string",
		`{"type":"string","minLength":1}`:                  "a non-empty string",
		`{"type":"string","minLength":2,"maxLength":4}`:    "a string of 2 to 4 characters",
		`{"type":"string","maxLength":1}`:                  "a string of at most 1 character",
		`{"type":"integer","minimum":1,"maximum":9}`:       "an integer ≥ 1 and ≤ 9",
		`{"type":"number","exclusiveMaximum":1.5}`:         "a number < 1.5",
		`{"type":"boolean"}`:                               "a boolean",
		`{"type":"array","items":{"type":"integer"}}`:      "an array of integers",
		`{"type":"array","maxItems":3}`:                    "an array with at most 3 items",
		`{"type":"array","items":{"enum":["a","b"]}}`:      `an array of values each one of "a", "b"`,
		`{"type":"string","format":"uri"}`:                 "a string in uri format",
		`{"oneOf":[{"type":"string"},{"type":"integer"}]}`: "a string or an integer",
		`{"type":"object"}`:                                "an object",
		`{"enum":["x",1]}`:                                 `one of "x", 1`,
		`{"const":"on"}`:                                   `exactly "on"`,
		`{"type":["string","null"]}`:                       "a string or null",
		`{}`:                                               "a value",
		`{"properties":{}}`:                                "an object",
	}
	for schema, want := range cases {
		n, err := toolspec.Parse([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		s, err := parseSchema(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(s); got != want {
			t.Errorf("describe(%s) = %q, want %q", schema, got, want)
		}
	}
}

// wideArgs are arguments that fit wideSchema; a case adds or replaces
// members after them (a later duplicate key wins).
const wideArgs = `"q":"x","page":1,"mode":"fast","level":2,"at":{"x":0,"y":0},"rows":[{"id":1},{"id":2}],` +
	`"nested":{"deep":{"deeper":"d"}},"untyped":{"k":"v"},"listy":["a"],"bare":"red","ratio":0.5,` +
	`"matrix":[[1]],"flags":{"a":true},"either":"abc"`

// TestValidationMessagesOfWideSchema pins the model-facing problem of
// each keyword the explanations cover, word for word. The messages were
// taken from the validator on the schema library, before our own.
func TestValidationMessagesOfWideSchema(t *testing.T) {
	cases := []struct {
		args string
		want []string
	}{
		{``, nil},
		{`"page":"7","maybe":null,"level":null,"untyped":5,"listy":"solo","unknown":1,"yes":[1],"any":{"a":1}`, nil},
		{`"q":"é世😀 0123456789012345678901234567890123456789","short":"é"`, nil},
		{`"q":""`, []string{`q: must be a non-empty string, got ""`}},
		{`"short":"ab"`, []string{`short: must be a string of at most 1 character, got "ab"`}},
		{`"short":"éé"`, []string{`short: must be a string of at most 1 character, got "éé"`}},
		{`"code":"a"`, []string{`code: must be a string of 2 to 8 characters matching /^[A-Z]+$/, got "a"`}},
		{`"code":"abc"`, []string{`code: must be a string of 2 to 8 characters matching /^[A-Z]+$/, got "abc"`}},
		{`"code":"ABCDEFGHIJ"`, []string{`code: must be a string of 2 to 8 characters matching /^[A-Z]+$/, got "ABCDEFGHIJ"`}},
		{`"code":"` + strings.Repeat("é", 45) + `"`, []string{`code: must be a string of 2 to 8 characters matching /^[A-Z]+$/, got "` + strings.Repeat("é", 40) + `…"`}},
		{`"long":"ab"`, []string{`long: must be a string of at least 3 characters in email format, got "ab"`}},
		{`"page":0`, []string{"page: must be an integer ≥ 1 and ≤ 100, got 0"}},
		{`"page":101`, []string{"page: must be an integer ≥ 1 and ≤ 100, got 101"}},
		{`"page":"1e2"`, []string{`page: must be an integer ≥ 1 and ≤ 100, got "1e2"`}},
		{`"ratio":0`, []string{"ratio: must be a number > 0 and < 1.5, got 0"}},
		{`"ratio":1.5`, []string{"ratio: must be a number > 0 and < 1.5, got 1.5"}},
		{`"ratio":"NaN"`, []string{`ratio: must be a number > 0 and < 1.5, got "NaN"`}},
		{`"ratio":"Infinity"`, []string{`ratio: must be a number > 0 and < 1.5, got "Infinity"`}},
		{`"step":0.3`, []string{"step: must be a number ≥ -2.5, got 0.3"}},
		{`"step":-3`, []string{"step: must be a number ≥ -2.5, got -3"}},
		{`"mode":"slow"`, []string{`mode: must be exactly "fast", got "slow"`}},
		{`"level":3`, []string{`level: must be one of "low", 2, true, null, "a\u003cb", got 3`}},
		{`"sort":"up"`, []string{`sort: must be one of "asc", "desc", got "up"`}},
		{`"maybe":-1`, []string{"maybe: must be an integer ≥ 0 or null, got -1"}},
		{`"maybe":"null"`, []string{`maybe: must be an integer ≥ 0 or null, got "null"`}},
		{`"at":{"x":-2}`, []string{"at.y: required", "at.x: must be a number ≥ -1, got -2"}},
		{`"at":"here"`, []string{`at: must be an object, got "here"`}},
		{`"bare":"blue"`, []string{`bare: must be one of "red", "green", got "blue"`}},
		{`"tags":["red","blue","x","y","z"]`, []string{"tags: must be an array with 0 to 4 items, got 5 items"}},
		{`"rows":[{"id":1}]`, []string{"rows: must be an array of objects with at least 2 items, got 1 item"}},
		{`"rows":[{"id":1,"extra":2,"cells":[{"v":1},{}]},{"id":"x"}]`, []string{
			"rows[0].cells[0].v: must be a string, got 1", "rows[0].cells[1].v: required",
			"rows[0].extra: unknown parameter; known: cells, id", `rows[1].id: must be an integer, got "x"`}},
		{`"matrix":[[1,2.5],"x",[null]]`, []string{"matrix[0][1]: must be an integer, got 2.5",
			`matrix[1]: must be an array of integers, got "x"`, "matrix[2][0]: must be an integer, got null"}},
		{`"flags":{"a":"yes","b":1}`, []string{`flags.a: must be a boolean, got "yes"`, "flags.b: must be a boolean, got 1"}},
		{`"nested":{"deep":{}}`, []string{"nested.deep.deeper: required"}},
		{`"nested":{}`, []string{"nested.deep: required"}},
		{`"untyped":{"k":1}`, []string{"untyped.k: must be a string, got 1"}},
		{`"listy":[1]`, []string{"listy[0]: must be a string, got 1"}},
	}
	var got json.RawMessage
	tool, err := NewTool(wideTool(t).Spec(), func(args json.RawMessage) (Invocation, error) {
		got = args
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		args := "{" + wideArgs
		if c.args != "" {
			args += "," + c.args
		}
		args += "}"
		got = nil
		_, err := tool.Build(json.RawMessage(args))
		if c.want == nil {
			if err != nil || got == nil {
				t.Errorf("%s: %v, want it accepted", c.args, err)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a *ValidationError", c.args, err)
			continue
		}
		var probs []string
		for _, p := range ve.Problems {
			probs = append(probs, p.String())
		}
		if !slices.Equal(probs, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.args, probs, c.want)
		}
	}
}

// TestValidationOfAlternatives: a value that fits no alternative of
// anyOf or oneOf is reported at its field. When one alternative takes the
// value's type its problems are given; else the alternatives are named.
// (The schema library's text had no field and named no alternative:
// "oneOf: did not validate against any of [<anonymous schema> ...]".)
func TestValidationOfAlternatives(t *testing.T) {
	cases := []struct {
		args string
		want []string
	}{
		{`"either":[1.5,2]`, nil},
		{`"one":null`, nil},
		{`"one":{"x":1,"y":2}`, nil},
		{`"either":"abcd"`, []string{`either: must be a string of at most 3 characters, got "abcd"`}},
		{`"either":[1,"a"]`, []string{`either[1]: must be a number, got "a"`}},
		{`"either":7`, []string{"either: must be a string of at most 3 characters or an array of numbers, got 7"}},
		{`"one":{"x":1}`, []string{"one.y: required"}},
		{`"one":5`, []string{"one: must be an object or null, got 5"}},
	}
	var got json.RawMessage
	tool, err := NewTool(wideTool(t).Spec(), func(args json.RawMessage) (Invocation, error) {
		got = args
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got = nil
		_, err := tool.Build(json.RawMessage("{" + wideArgs + "," + c.args + "}"))
		checkProblems(t, c.args, err, got != nil, c.want)
	}
}

// checkProblems checks a Build's outcome: accepted when want is nil,
// else refused with exactly those problems.
func checkProblems(t *testing.T, what string, err error, ran bool, want []string) {
	t.Helper()
	if want == nil {
		if err != nil || !ran {
			t.Errorf("%s: %v, want it accepted", what, err)
		}
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: %v, want a *ValidationError", what, err)
		return
	}
	var probs []string
	for _, p := range ve.Problems {
		probs = append(probs, p.String())
	}
	if !slices.Equal(probs, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, probs, want)
	}
}

// foreignSchema is what a third-party MCP server may send: keywords the
// validator reads beside ones it passes over (the server checks those
// itself), a pattern Go's regexp cannot compile, draft 4's boolean
// exclusiveMinimum, patternProperties beside a closed object, a
// reference to the whole document and one into a member that is no
// keyword (components).
const foreignSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "$id": "https://example.com/tool.json",
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^(?!tmp)[a-z]+$", "x-ui": {"widget": "text"}},
    "count": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
    "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "contains": {"const": 1}},
    "kind": {"type": "any"},
    "when": {"if": {"const": 1}, "then": {"minimum": 5}, "dependentRequired": {"a": ["b"]}},
    "tree": {"$ref": "#"},
    "note": {"type": "string", "contentMediaType": "text/markdown", "deprecated": true, "readOnly": true},
    "size": {"$ref": "#/components/schemas/Size"}
  },
  "components": {"schemas": {"Size": {"enum": ["s", "m"]}}},
  "patternProperties": {"^x-": {"type": "string"}},
  "additionalProperties": false,
  "minProperties": 1,
  "propertyNames": {"maxLength": 8},
  "unevaluatedProperties": false
}`

// TestMCPSchemaWithUnknownKeywords: such a schema is usable and checked
// by the library; our messages where our reading has words for the fault,
// the library's otherwise.
// (The schema library refused this schema: the pattern and the boolean
// exclusiveMinimum; its tool was left out.)
func TestMCPSchemaWithUnknownKeywords(t *testing.T) {
	specs := MCPToolSpecs([]MCPServerTools{{UID: "ext", Tools: []MCPToolDef{{Name: "t", InputSchema: json.RawMessage(foreignSchema)}}}}, nil)
	if len(specs) != 1 {
		t.Fatalf("MCPToolSpecs kept %d tools, want 1", len(specs))
	}
	var got json.RawMessage
	tool, err := NewTool(specs[0].Spec, func(args json.RawMessage) (Invocation, error) {
		got = args
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args string
		want []string
	}{
		// The keywords our reading passes over are the library's to judge:
		// uniqueItems, contains, if/then, propertyNames. The pattern Go
		// cannot compile, and the type JSON Schema does not name, check
		// nothing.
		{`{"name":"tmpfile","ids":[1,2],"kind":{"any":1},"when":6,"note":"n","x-trace":"id"}`, nil},
		{`{"ids":[1,1]}`, []string{"ids: does not fit the schema's uniqueItems rule (array items 1 and 0 are equal)"}},
		{`{"ids":[2,3]}`, []string{"ids: does not fit the schema's contains rule"}},
		{`{"when":1}`, []string{"when: does not fit the schema's minimum rule (1/1 is less than 5.000000)"}},
		{`{"x-long-name":"v"}`, []string{`does not fit the schema's maxLength rule ("x-long-name" contains 11 Unicode code points, more than 8)`}},
		{`{"tree":{"tree":{"name":"ok"}}}`, nil},
		{`{"count":0}`, []string{"count: must be an integer > 0, got 0"}},
		{`{"ids":["a"]}`, []string{`ids[0]: must be an integer, got "a"`}},
		{`{"x-trace":1}`, []string{"x-trace: must be a string, got 1"}},
		{`{"other":1}`, []string{"other: unknown parameter; known: count, ids, kind, name, note, size, tree, when"}},
		{`{"tree":{"tree":{"name":7}}}`, []string{"tree.tree.name: must be a string matching /^(?!tmp)[a-z]+$/, got 7"}},
		{`{"tree":3}`, []string{"tree: must be an object, got 3"}},
		{`{"size":"xl"}`, []string{`size: must be one of "s", "m", got "xl"`}},
	}
	for _, c := range cases {
		got = nil
		_, err := tool.Build(json.RawMessage(c.args))
		checkProblems(t, c.args, err, got != nil, c.want)
	}
	// The docs describe what was read and skip the rest.
	out, err := Render(toolspec.FormatXML, []Tool{tool}, Context{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- name (optional, a string matching /^(?!tmp)[a-z]+$/)", "- count (optional, an integer > 0)", "- kind (optional, a value)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("xml docs lack %q:\n%s", want, out)
		}
	}
}

// TestValidationOfHostileArgs: whatever the arguments, Build answers
// with problems a model can act on (a field and what it must be), or
// accepts them; it never panics, and a flood of faults is cut short.
func TestValidationOfHostileArgs(t *testing.T) {
	deep := func(n int, open, close, inner string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	cases := []struct {
		tool, args string
		want       []string
	}{
		{"read_files", `{"files":` + deep(5000, "[", "]", "") + `}`, []string{"files[0]: must be an object, got an array"}},
		{"read_files", `{"files":[{"path":"a","x":` + deep(5000, `{"a":`, "}", "1") + `}]}`, nil},
		{"read_files", deep(20000, "[", "]", ""), []string{"arguments are not valid JSON (invalid character '[' exceeded max depth at byte 10001); send one JSON object with the tool's parameters"}},
		{"run_commands", `{"commands":` + many(100000, "1") + `}`, append(func() []string {
			var w []string
			for i := range maxProblems {
				w = append(w, "commands["+strconv.Itoa(i)+"]: must be a string, got 1")
			}
			return w
		}(), "and 99980 more problems")},
		{"run_commands", `{"commands":` + many(100000, `"ls"`) + `}`, nil},
		{"ask_question", `{"question":"q","options":` + many(100000, `"a"`) + `}`, []string{"options: must be an array of strings with 2 to 5 items, got 100000 items"}},
		{"read_files", `true`, []string{"arguments must be a JSON object, got true"}},
		{"read_files", `12`, []string{"arguments must be a JSON object, got 12"}},
		{"read_files", `{"files":[{"path":"a","start_line":1e999}]}`, []string{"arguments are not valid JSON (json: cannot unmarshal number 1e999 into Go value of type float64); send one JSON object with the tool's parameters"}},
		{"run_commands", `{"commands":["ls"],"timeout":"NaN"}`, []string{`timeout: must be an integer ≥ 1, got "NaN"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"Infinity"}`, []string{`timeout: must be an integer ≥ 1, got "Infinity"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"-Inf"}`, []string{`timeout: must be an integer ≥ 1, got "-Inf"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"0x10"}`, []string{`timeout: must be an integer ≥ 1, got "0x10"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"1_000"}`, []string{`timeout: must be an integer ≥ 1, got "1_000"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"١٢"}`, []string{`timeout: must be an integer ≥ 1, got "١٢"`}},
		{"run_commands", `{"commands":["ls"],"timeout":"99999999999999999999"}`, []string{`timeout: must be an integer ≥ 1, got "99999999999999999999"`}},
		// An integer ≥ 1 as the schema says; decoding it into an int is
		// the implementation's part (Decode reports it).
		{"run_commands", `{"commands":["ls"],"timeout":1e300}`, nil},
		{"run_commands", `{"commands":{"0":"ls"}}`, []string{"commands: must be an array of strings with at least 1 item, got an object"}},
		{"update_plan", `{"entries":[{"content":"\u0000\ud800","status":"☃` + strings.Repeat("é", 60) + `"}]}`,
			[]string{`entries[0].status: must be one of "pending", "in_progress", "completed", got "☃` + strings.Repeat("é", 39) + `…"`}},
		{"read_files", "{\"files\":[{\"path\":\"\xff\xfe\",\"start_line\":\"\xff\"}]}", []string{"files[0].start_line: must be an integer ≥ 1, got \"\ufffd\""}},
		{"read_files", `{"files":[{"path":"a","path":1}]}`, []string{"files[0].path: must be a string, got 1"}},
	}
	for _, c := range cases {
		var got json.RawMessage
		tool := captureBuild(t, c.tool, &got)
		what := c.tool + " " + c.args[:min(len(c.args), 60)]
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", what, r)
				}
			}()
			_, err := tool.Build(json.RawMessage(c.args))
			checkProblems(t, what, err, got != nil, c.want)
		}()
	}
}

// TestBuiltinSchemasReadWhole: every keyword of the built-in schemas is
// one the validator reads, so none of their rules goes unchecked.
func TestBuiltinSchemasReadWhole(t *testing.T) {
	read := []string{"type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "pattern", "minItems", "maxItems", "format", "description", "$ref", "items", "additionalProperties",
		"required", "properties", "$defs", "definitions", "patternProperties", "allOf", "anyOf", "oneOf"}
	for _, s := range BuiltinSpecs() {
		if a, err := compileSchema(s.Parameters, nil); err != nil || a.uncompiled() != nil {
			t.Errorf("%s: the schema library cannot compile the schema: %v %v", s.Name, err, a.uncompiled())
		}
		n, err := toolspec.Parse(s.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var walk func(n *toolspec.Node, at string)
		walk = func(n *toolspec.Node, at string) {
			for i, k := range n.Keys {
				v := n.Vals[i]
				switch {
				case !slices.Contains(read, k):
					t.Errorf("%s: %s%s is a keyword the validator passes over", s.Name, at, k)
				case k == "properties" || k == "$defs" || k == "definitions" || k == "patternProperties":
					for j, name := range v.Keys {
						walk(v.Vals[j], at+k+"."+name+".")
					}
				case k == "items" || k == "additionalProperties":
					walk(v, at+k+".")
				case k == "allOf" || k == "anyOf" || k == "oneOf":
					for _, alt := range v.Vals {
						walk(alt, at+k+".")
					}
				}
			}
		}
		walk(n, "")
	}
}

// BenchmarkBuildArgs is the validation of one call: arguments that fit,
// ones that need coercing (the XML path's strings), ones that do not fit,
// and an MCP schema with most keywords.
func BenchmarkBuildArgs(b *testing.B) {
	noop := func(json.RawMessage) (Invocation, error) { return nil, nil }
	read, err := Builtin(NameReadFiles, noop)
	if err != nil {
		b.Fatal(err)
	}
	wide, err := NewTool(wideTool(b).Spec(), noop)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tool Tool
		args string
		ok   bool
	}{
		{"fits", read, `{"files":[{"path":"a.go"},{"path":"b.go","start_line":10,"end_line":80}]}`, true},
		{"coerced", read, `{"files":"[{\"path\":\"a.go\",\"start_line\":\"10\"}]"}`, true},
		{"faulty", read, `{"files":[{"start_line":0},{"path":3}]}`, false},
		{"mcp", wide, "{" + wideArgs + "}", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw := json.RawMessage(c.args)
			for b.Loop() {
				if _, err := c.tool.Build(raw); (err == nil) != c.ok {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValidationOfSelfReferringAlternatives: five alternatives at each
// level, each descending into the value through the same definition,
// over a value 40 deep (within the depth bound) whose innermost object
// fits none. Unbounded, the walk would take 5^40 steps; bounded, the call answers (the test would
// time out otherwise), what is past the bound passes, and the fault found
// beside it is still reported.
func TestValidationOfSelfReferringAlternatives(t *testing.T) {
	alt := `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"required":["a"]}`
	tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(`{"type":"object",
		"properties":{"a":{"$ref":"#/$defs/a"}, "b":{"type":"integer"}},
		"$defs":{"a":{"anyOf":[` + strings.TrimSuffix(strings.Repeat(alt+",", 5), ",") + `]}}}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 40) + "{}" + strings.Repeat("}", 40)
	_, err = tool.Build(json.RawMessage(`{"a":` + deep + `,"b":"x"}`))
	checkProblems(t, "nested 40 deep", err, true, []string{`b: must be an integer, got "x"`})
	// Within the bounds the same schema is checked in full.
	_, err = tool.Build(json.RawMessage(`{"a":{"a":{"a":{}}}}`))
	checkProblems(t, "nested 3 deep", err, true, []string{"a.a.a.a: required"})
}
