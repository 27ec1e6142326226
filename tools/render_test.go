package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var formats = []string{FormatAnthropic, FormatOpenAI, FormatGemini, FormatXML}

// renderCtx is the context the goldens and budget checks render with.
func renderCtx() Context {
	return Context{Mode: ModeAct, Family: FamilyGeneric, CWD: "/home/dev/project", OS: "linux",
		Shell: "/bin/bash", Skills: []string{"go-testing", "release-notes"}, HasMCP: true}
}

// issueSchema is an MCP server's schema using what servers send and
// Gemini refuses: $schema, $defs/$ref, oneOf, nullable type lists,
// formats, non-string enums, closed objects.
const issueSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "title": {"type": "string", "description": "Issue title"},
    "labels": {"type": "array", "items": {"type": "string", "enum": ["bug", "feature"]}},
    "priority": {"type": "integer", "enum": [1, 2, 3]},
    "due": {"type": "string", "format": "date-time"},
    "homepage": {"type": "string", "format": "uri"},
    "assignee": {"type": ["string", "null"]},
    "meta": {"type": "object", "properties": {"estimate": {"type": "number", "minimum": 0}}, "additionalProperties": false},
    "owner": {"$ref": "#/$defs/user", "description": "Who owns it"},
    "target": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
  },
  "required": ["title"],
  "additionalProperties": false,
  "$defs": {"user": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}}
}`

// wideSchema is an MCP server's schema using every keyword the tool docs
// describe, each in more than one form: bounds inclusive and exclusive,
// lengths, patterns, formats, const, enums of several types, type lists,
// anyOf and oneOf, references with and without a description, arrays of
// objects, objects of arrays, open and closed objects, and keywords the
// docs ignore (title, default, examples, x-extensions).
const wideSchema = `{
  "type": "object",
  "title": "Query",
  "properties": {
    "q": {"type": "string", "minLength": 1, "description": "Search text <b> & \"quoted\" {{CWD}}"},
    "short": {"type": "string", "maxLength": 1},
    "code": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[A-Z]+$"},
    "long": {"type": "string", "minLength": 3, "format": "email"},
    "page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 1},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
    "step": {"type": "number", "multipleOf": 0.5, "minimum": -2.5},
    "mode": {"const": "fast"},
    "level": {"enum": ["low", 2, true, null, "a<b"]},
    "sort": {"type": "string", "enum": ["asc", "desc"], "description": "Order"},
    "maybe": {"type": ["integer", "null"], "minimum": 0},
    "either": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "array", "items": {"type": "number"}}]},
    "one": {"oneOf": [{"$ref": "#/definitions/point"}, {"type": "null"}]},
    "at": {"$ref": "#/definitions/point", "description": "Where"},
    "bare": {"$ref": "#/definitions/tag"},
    "tags": {"type": "array", "items": {"$ref": "#/definitions/tag"}, "minItems": 0, "maxItems": 4},
    "rows": {"type": "array", "minItems": 2, "items": {"type": "object", "properties": {
      "id": {"type": "integer", "description": "Row id"},
      "cells": {"type": "array", "items": {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}}
    }, "required": ["id"], "additionalProperties": false}},
    "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
    "flags": {"type": "object", "additionalProperties": {"type": "boolean"}, "x-order": 3},
    "nested": {"type": "object", "properties": {"deep": {"type": "object", "properties": {"deeper": {"type": "string"}}, "required": ["deeper"]}}, "required": ["deep"]},
    "any": {},
    "yes": true,
    "untyped": {"properties": {"k": {"type": "string"}}, "required": ["k"]},
    "listy": {"items": {"type": "string"}},
    "examples": {"type": "string", "examples": ["x"], "title": "Examples"}
  },
  "required": ["q", "page", "mode", "level", "at", "rows", "nested", "untyped", "listy", "bare", "ratio", "matrix", "flags", "either"],
  "definitions": {"point": {"type": "object", "properties": {"x": {"type": "number", "minimum": -1}, "y": {"type": "number"}}, "required": ["x", "y"], "description": "A point"},
    "tag": {"type": "string", "enum": ["red", "green"]}}
}`

func issueTool(t testing.TB) Tool {
	t.Helper()
	return mcpTool(t, "github", "create_issue", "Open an issue in {{CWD}}'s repository.", issueSchema)
}

func wideTool(t testing.TB) Tool {
	t.Helper()
	return mcpTool(t, "search", "query", "Query the {{OS}} index.", wideSchema)
}

func mcpTool(t testing.TB, server, name, desc, schema string) Tool {
	t.Helper()
	specs := MCPToolSpecs([]MCPServerTools{{UID: server, Tools: []MCPToolDef{{
		Name: name, Description: desc, InputSchema: json.RawMessage(schema),
	}}}}, nil)
	if len(specs) != 1 {
		t.Fatalf("MCPToolSpecs gave %d specs", len(specs))
	}
	tool, err := NewTool(specs[0].Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func goldenPath(format, name string) string {
	ext := ".json"
	if format == FormatXML {
		ext = ".txt"
	}
	return filepath.Join("testdata", "golden", format, name+ext)
}

// TestRenderGolden renders every built-in tool, and one MCP tool, alone
// in every format. JSON goldens are stored indented for review; the
// rendered bytes must equal them compacted, so key order is checked too.
func TestRenderGolden(t *testing.T) {
	tools := []Tool{issueTool(t), wideTool(t)}
	for _, s := range BuiltinSpecs() {
		tool, err := NewTool(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	want := map[string]bool{}
	for _, tool := range tools {
		for _, f := range formats {
			name := tool.Spec().Name
			path := goldenPath(f, name)
			want[path] = true
			out, err := Render(f, []Tool{tool}, renderCtx())
			if err != nil {
				t.Fatalf("Render(%s, %s): %v", f, name, err)
			}
			stored := out
			if f != FormatXML {
				var ind bytes.Buffer
				if err := json.Indent(&ind, out, "", "  "); err != nil {
					t.Fatalf("Render(%s, %s) is not JSON: %v\n%s", f, name, err, out)
				}
				ind.WriteByte('\n')
				stored = ind.Bytes()
			}
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, stored, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%v (run go test ./tools -update)", err)
				continue
			}
			if f != FormatXML {
				var c bytes.Buffer
				if err := json.Compact(&c, golden); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				golden = c.Bytes()
			}
			if !bytes.Equal(out, golden) {
				t.Errorf("Render(%s, %s) differs from %s:\n got %s\nwant %s", f, name, path, out, golden)
			}
		}
	}
	// Goldens of tools that no longer exist would go unnoticed.
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "*"))
	for _, f := range files {
		if !want[f] && !*update {
			t.Errorf("stale golden file %s", f)
		}
	}
}

// actTools are the tools act mode sends with every built-in enabled.
func actTools(t testing.TB) []Tool {
	t.Helper()
	p, _ := PresetFor(ModeAct)
	return builtinRegistry(t).Enabled(p, renderCtx())
}

func TestRenderShapes(t *testing.T) {
	tools := append(actTools(t), issueTool(t))
	var want []string
	for _, tool := range tools {
		want = append(want, tool.Spec().Name)
	}
	ctx := renderCtx()

	out, _ := Render(FormatAnthropic, tools, ctx)
	var anth []map[string]json.RawMessage
	mustUnmarshal(t, out, &anth)
	for i, a := range anth {
		if got := sortedKeys(a); !slices.Equal(got, []string{"description", "input_schema", "name"}) {
			t.Errorf("anthropic tool %d keys %v", i, got)
		}
		var schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		mustUnmarshal(t, a["input_schema"], &schema)
		if schema.Type != "object" || schema.Properties == nil {
			t.Errorf("anthropic tool %d input_schema %s", i, a["input_schema"])
		}
	}

	out, _ = Render(FormatOpenAI, tools, ctx)
	var oai []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string `json:"name"`
			Strict     *bool  `json:"strict"`
			Parameters struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
				Additional *bool          `json:"additionalProperties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	mustUnmarshal(t, out, &oai)
	var got []string
	for _, o := range oai {
		got = append(got, o.Function.Name)
		p := o.Function.Parameters
		if o.Type != "function" || o.Function.Strict == nil || *o.Function.Strict || p.Type != "object" ||
			p.Properties == nil || p.Additional == nil || *p.Additional {
			t.Errorf("openai tool %s has the wrong shape", o.Function.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("openai names %v, want %v", got, want)
	}

	out, _ = Render(FormatGemini, tools, ctx)
	var gem []struct {
		FunctionDeclarations []map[string]any `json:"functionDeclarations"`
	}
	mustUnmarshal(t, out, &gem)
	if len(gem) != 1 || len(gem[0].FunctionDeclarations) != len(tools) {
		t.Fatalf("gemini: %d tools with %v", len(gem), gem)
	}
	for _, d := range gem[0].FunctionDeclarations {
		checkGeminiSchema(t, d["name"].(string), d["parameters"])
	}
	rf := gem[0].FunctionDeclarations[0]["parameters"].(map[string]any)["properties"].(map[string]any)["files"].(map[string]any)
	if item := rf["items"].(map[string]any); item["type"] != "OBJECT" || item["properties"] == nil {
		t.Errorf("gemini read_files lost its item schema: %v", rf)
	}

	out, _ = Render(FormatXML, tools, ctx)
	text := string(out)
	for _, name := range want {
		for _, part := range []string{"## " + name + "\n", "Usage: <" + name + ">", "</" + name + ">\n"} {
			if !strings.Contains(text, part) {
				t.Errorf("xml docs lack %q", part)
			}
		}
	}
}

// checkGeminiSchema walks a converted schema for what the Gemini API
// refuses: lower-case types and keywords outside its Schema object.
func checkGeminiSchema(t *testing.T, tool string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		allowed := []string{"type", "format", "description", "nullable", "enum", "items", "properties", "required",
			"minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf", "title",
			"minProperties", "maxProperties"}
		for k, sub := range v {
			if k == "properties" {
				for _, p := range sub.(map[string]any) {
					checkGeminiSchema(t, tool, p)
				}
				continue
			}
			if !slices.Contains(allowed, k) {
				t.Errorf("gemini %s: keyword %q", tool, k)
			}
			if k == "type" && !slices.Contains([]string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}, sub.(string)) {
				t.Errorf("gemini %s: type %v", tool, sub)
			}
			if k == "items" || k == "anyOf" {
				checkGeminiSchema(t, tool, sub)
			}
		}
	case []any:
		for _, e := range v {
			checkGeminiSchema(t, tool, e)
		}
	}
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}

func TestGeminiConversion(t *testing.T) {
	out, err := Render(FormatGemini, []Tool{issueTool(t)}, renderCtx())
	if err != nil {
		t.Fatal(err)
	}
	var decl []struct {
		FunctionDeclarations []struct {
			Parameters json.RawMessage `json:"parameters"`
		} `json:"functionDeclarations"`
	}
	mustUnmarshal(t, out, &decl)
	want := `{"type":"OBJECT","properties":{` +
		`"title":{"type":"STRING","description":"Issue title"},` +
		`"labels":{"type":"ARRAY","items":{"type":"STRING","enum":["bug","feature"]}},` +
		`"priority":{"type":"INTEGER","description":"one of: 1, 2, 3"},` +
		`"due":{"type":"STRING","format":"date-time"},` +
		`"homepage":{"type":"STRING"},` +
		`"assignee":{"type":"STRING","nullable":true},` +
		`"meta":{"type":"OBJECT","properties":{"estimate":{"type":"NUMBER","minimum":0}}},` +
		`"owner":{"type":"OBJECT","properties":{"login":{"type":"STRING"}},"required":["login"],"description":"Who owns it"},` +
		`"target":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}},` +
		`"required":["title"]}`
	if got := string(decl[0].FunctionDeclarations[0].Parameters); got != want {
		t.Errorf("gemini parameters\n got %s\nwant %s", got, want)
	}

	// A recursive definition is inlined to a bounded depth.
	rec, err := NewTool(Spec{Name: "tree", Parameters: json.RawMessage(`{"type":"object",
		"properties":{"root":{"$ref":"#/definitions/node"}},
		"definitions":{"node":{"type":"object","properties":{"child":{"$ref":"#/definitions/node"}}}}}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err = Render(FormatGemini, []Tool{rec}, renderCtx())
	if err != nil || !json.Valid(out) {
		t.Fatalf("recursive schema: %v %s", err, out)
	}
	if n := strings.Count(string(out), `"child"`); n != geminiMaxRefDepth {
		t.Errorf("recursive schema inlined %d levels, want %d", n, geminiMaxRefDepth)
	}

	// No parameters: no parameters member.
	none, _ := NewTool(Spec{Name: "ping", Description: "Ping."}, nil)
	out, _ = Render(FormatGemini, []Tool{none}, renderCtx())
	if string(out) != `[{"functionDeclarations":[{"name":"ping","description":"Ping."}]}]` {
		t.Errorf("tool without parameters: %s", out)
	}
}

func TestRenderPlaceholders(t *testing.T) {
	ctx := renderCtx()
	for _, f := range formats {
		out, err := Render(f, append(actTools(t), issueTool(t)), ctx)
		if err != nil {
			t.Fatal(err)
		}
		text := string(out)
		if strings.Contains(text, "{{") {
			t.Errorf("%s: unfilled placeholder", f)
		}
		for _, v := range []string{"/bin/bash", "/home/dev/project", "go-testing, release-notes"} {
			if !strings.Contains(text, v) {
				t.Errorf("%s: %q not filled in", f, v)
			}
		}
	}
	// Values are escaped for JSON, and property descriptions are filled.
	tool, _ := NewTool(Spec{Name: "t", Description: "in {{CWD}} ({{MODE}}) {{UNKNOWN}}",
		Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string","description":"under {{CWD}}"}}}`)}, nil)
	out, _ := Render(FormatAnthropic, []Tool{tool}, Context{CWD: `C:\x "y"`, Mode: "plan"})
	want := `[{"name":"t","description":"in C:\\x \"y\" (plan) {{UNKNOWN}}","input_schema":{"type":"object","properties":{"p":{"type":"string","description":"under C:\\x \"y\""}}}}]`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if got := Expand("{{OS}}/{{SHELL}}", Context{OS: "darwin", Shell: "zsh"}); got != "darwin/zsh" {
		t.Errorf("Expand = %q", got)
	}
}

func TestRenderForeignTools(t *testing.T) {
	// A Tool not made by NewTool renders exactly like one that is.
	ctx := renderCtx()
	var own, foreign []Tool
	for _, s := range BuiltinSpecs() {
		tool, _ := NewTool(s, nil)
		own = append(own, tool)
		foreign = append(foreign, stubTool{s})
	}
	for _, f := range formats {
		a, err1 := Render(f, own, ctx)
		b, err2 := Render(f, foreign, ctx)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: foreign tools render differently (%v, %v)", f, err1, err2)
		}
		c, _ := Render(f, own, ctx)
		if !bytes.Equal(a, c) {
			t.Errorf("%s: two renders differ", f)
		}
	}
	if _, err := Render(FormatOpenAI, []Tool{stubTool{Spec{Name: "bad", Parameters: json.RawMessage(`{`)}}}, ctx); err == nil {
		t.Error("Render accepted a tool with a broken schema")
	}
}

func TestRenderEdgeCases(t *testing.T) {
	want := map[string]string{FormatAnthropic: "[]", FormatOpenAI: "[]", FormatGemini: "[]", FormatXML: ""}
	for f, w := range want {
		out, err := Render(f, nil, Context{})
		if err != nil || string(out) != w {
			t.Errorf("Render(%s, no tools) = %q, %v; want %q", f, out, err, w)
		}
	}
	if _, err := Render("bedrock", nil, Context{}); err == nil {
		t.Error("Render accepted an unknown format")
	}
	cases := map[string]string{"anthropic": FormatAnthropic, "Bedrock": FormatAnthropic, "gemini": FormatGemini,
		"openai": FormatOpenAI, "ollama": FormatOpenAI, "openrouter": FormatOpenAI}
	for p, f := range cases {
		if got := FormatFor(p); got != f {
			t.Errorf("FormatFor(%s) = %s, want %s", p, got, f)
		}
	}
}

// TestActModeToolSize records what act mode's tool list costs per request
// in each format and holds it to the budget (docs/DESIGN.md §2: system prompt
// plus tools within 12,000 characters natively, 16,000 on the XML path;
// the tools' share is kept under 7,000).
func TestActModeToolSize(t *testing.T) {
	tools := actTools(t)
	for _, f := range formats {
		out, err := Render(f, tools, renderCtx())
		if err != nil {
			t.Fatal(err)
		}
		n := len([]rune(string(out)))
		t.Logf("act mode, %d tools, %s: %d characters", len(tools), f, n)
		if n > 7000 {
			t.Errorf("%s: act mode tools take %d characters, over the 7,000 budget", f, n)
		}
	}
	// While background commands run, their two tools join the list: a
	// cost only the sessions that start one pay.
	p, _ := PresetFor(ModeAct)
	ctx := renderCtx()
	ctx.Background = true
	withBg := builtinRegistry(t).Enabled(p, ctx)
	if len(withBg) != len(tools)+2 {
		t.Fatalf("%d tools with background commands, want %d", len(withBg), len(tools)+2)
	}
	for _, f := range formats {
		out, err := Render(f, withBg, ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("act mode with background commands, %d tools, %s: %d characters", len(withBg), f, len([]rune(string(out))))
	}
	// With a plugin lending the editor's language servers, their four
	// tools join, within a share of their own: the sessions of clients
	// that declare them pay for them.
	ctx = renderCtx()
	ctx.LSP = LSPFeatures()
	withLSP := builtinRegistry(t).Enabled(p, ctx)
	if len(withLSP) != len(tools)+4 {
		t.Fatalf("%d tools with the language servers, want %d", len(withLSP), len(tools)+4)
	}
	for _, f := range formats {
		base, _ := Render(f, tools, renderCtx())
		out, err := Render(f, withLSP, ctx)
		if err != nil {
			t.Fatal(err)
		}
		more := len([]rune(string(out))) - len([]rune(string(base)))
		t.Logf("act mode with the language servers, %d tools, %s: %d characters (%d more)", len(withLSP), f, len([]rune(string(out))), more)
		if more > 2000 {
			t.Errorf("%s: the language-server tools take %d characters, over their 2,000", f, more)
		}
	}
}

func BenchmarkRenderActTools(b *testing.B) {
	tools := actTools(b)
	ctx := renderCtx()
	for _, f := range formats {
		b.Run(f, func(b *testing.B) {
			var n int
			for b.Loop() {
				out, err := Render(f, tools, ctx)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

func TestGeminiRefBlowUpIsBounded(t *testing.T) {
	// Each level refers to itself five times: 5^8 copies if only the
	// depth were bounded.
	tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(`{"type":"object",
		"properties":{"a":{"$ref":"#/$defs/a"}},
		"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}}}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(FormatGemini, []Tool{tool}, Context{})
	if err != nil || !json.Valid(out) {
		t.Fatalf("%v %s", err, out)
	}
	if n := strings.Count(string(out), "anyOf"); n > geminiMaxRefs {
		t.Errorf("%d anyOf copies, want at most %d", n, geminiMaxRefs)
	}
}

// TestRenderEveryList pins the bytes of every tool list a session can
// send: each family, mode and context that changes the list, with the
// subagent and MCP tools beside the built-ins, in every format. The
// per-tool goldens show a difference; this test catches one that only
// a list shows (separators, order, a tool that drops out). The sums were
// taken from the renderer as it was before the schema type of our own.
func TestRenderEveryList(t *testing.T) {
	r := builtinRegistry(t)
	var subagents []Tool
	for _, sp := range SubagentSpecs([]SubagentConfig{{Name: "Reviewer", Description: "Reviews {{CWD}}."}}, Context{}, nil) {
		tool, err := NewTool(sp.Spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		subagents = append(subagents, tool)
	}
	extra := append(subagents, issueTool(t), wideTool(t))
	var lines []string
	for _, family := range []Family{FamilyGeneric, FamilyNextGen, FamilyXS} {
		for _, mode := range Modes() {
			p, _ := PresetFor(mode)
			for _, variant := range []struct {
				name string
				edit func(*Context)
			}{
				{"plain", func(*Context) {}},
				{"apply_patch", func(c *Context) { c.ApplyPatch = true }},
				{"background", func(c *Context) { c.Background = true }},
				{"subagent", func(c *Context) { c.Subagent, c.HasMCP, c.Skills = true, false, nil }},
			} {
				ctx := renderCtx()
				ctx.Family, ctx.Mode = family, mode
				variant.edit(&ctx)
				list := append(r.Enabled(p, ctx), extra...)
				for _, f := range formats {
					out, err := Render(f, list, ctx)
					if err != nil {
						t.Fatal(err)
					}
					sum := sha256.Sum256(out)
					lines = append(lines, fmt.Sprintf("%s %s %s %s %d %x", family, mode, variant.name, f, len(out), sum[:8]))
				}
			}
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "render_sums.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -update)", err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if len(wantLines) != len(lines) {
		t.Fatalf("%d lists rendered, %s has %d", len(lines), path, len(wantLines))
	}
	for i := range lines {
		if lines[i] != wantLines[i] {
			t.Errorf("rendered list differs (family mode context format bytes sha256):\n got %s\nwant %s", lines[i], wantLines[i])
		}
	}
}
