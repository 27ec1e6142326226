package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// TestJSONSchemaTestSuite runs the required cases of the
// JSON-Schema-Test-Suite, draft 2020-12, through the validator's own
// path (compileSchema, then problems; coercion is a leniency of calls and
// is left out). The suite's remote schemas are served from memory, never
// the network. It fails under 99 %, and logs the library's own figure
// from the same run beside ours.
func TestJSONSchemaTestSuite(t *testing.T) {
	root := filepath.Join(shared.Conformance(t), "json-schema-test-suite")
	remotes := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(root, "remotes"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(root, "remotes"), p)
		b, err := os.ReadFile(p)
		remotes["http://localhost:1234/"+filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	load := func(u *url.URL) (*jsonschema.Schema, error) {
		c := *u
		c.Fragment = ""
		b, ok := remotes[c.String()]
		if !ok {
			return nil, fmt.Errorf("no remote schema %s", u)
		}
		var s jsonschema.Schema
		return &s, json.Unmarshal(b, &s)
	}
	files, err := filepath.Glob(filepath.Join(root, "tests", "draft2020-12", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files: %v", err)
	}
	var total, ours, theirs int
	var failed []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct {
				Description string
				Data        json.RawMessage
				Valid       bool
			}
		}
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range groups {
			a, err := compileSchema(g.Schema, load)
			var lib *jsonschema.Resolved
			var ls jsonschema.Schema
			if json.Unmarshal(g.Schema, &ls) == nil {
				lib, _ = ls.Resolve(&jsonschema.ResolveOptions{Loader: load})
			}
			for _, c := range g.Tests {
				total++
				var val any
				if err := json.Unmarshal(c.Data, &val); err != nil {
					t.Fatal(err)
				}
				if err == nil && a.uncompiled() == nil && (len(a.problems(val)) == 0) == c.Valid {
					ours++
				} else {
					failed = append(failed, fmt.Sprintf("%s / %s / %s (valid %v)", filepath.Base(f), g.Description, c.Description, c.Valid))
				}
				if lib != nil && (lib.Validate(val) == nil) == c.Valid {
					theirs++
				}
			}
		}
	}
	t.Logf("JSON-Schema-Test-Suite draft 2020-12, required cases: %d of %d pass (%.1f %%); jsonschema-go alone: %d of %d",
		ours, total, 100*float64(ours)/float64(total), theirs, total)
	if len(failed) > 0 {
		t.Logf("failing:\n%s", strings.Join(failed, "\n"))
	}
	if float64(ours) < 0.99*float64(total) {
		t.Errorf("%d of %d pass, under 99 %%", ours, total)
	}
}

// TestMCPSchemaWithAnchorIsChecked: a schema referring through $anchor
// was left out with its tool before; now the tool is offered and the
// reference checked.
func TestMCPSchemaWithAnchorIsChecked(t *testing.T) {
	logger, buf := logBuffer()
	specs := MCPToolSpecs([]MCPServerTools{{UID: "s", Tools: []MCPToolDef{{Name: "t", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"who":{"$ref":"#person"}},"$defs":{"p":{"$anchor":"person","type":"object","required":["name"]}}}`)}}}}, logger)
	if len(specs) != 1 || buf.Len() != 0 {
		t.Fatalf("kept %d tools, log %q; want the tool and no complaint", len(specs), buf)
	}
	tool, err := NewTool(specs[0].Spec, func(json.RawMessage) (Invocation, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Build(json.RawMessage(`{"who":{"name":"a"}}`)); err != nil {
		t.Errorf("fitting call refused: %v", err)
	}
	if _, err := tool.Build(json.RawMessage(`{"who":{}}`)); err == nil || !strings.Contains(err.Error(), "who.name: required") {
		t.Errorf("call lacking the anchored schema's required field: %v", err)
	}
}

// TestPrefixItemsWithItems: the first items fit their own schemas and
// the rest the items schema; a valid array was refused before, and the
// coercion of strings follows the position's schema.
func TestPrefixItemsWithItems(t *testing.T) {
	var got json.RawMessage
	tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(
		`{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}],"items":{"type":"integer"}}}}`)},
		func(args json.RawMessage) (Invocation, error) { got = args; return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Build(json.RawMessage(`{"p":["a",true,1,2]}`)); err != nil {
		t.Errorf("valid array refused: %v", err)
	}
	if _, err := tool.Build(json.RawMessage(`{"p":["7","true","3"]}`)); err != nil || string(got) != `{"p":["7",true,3]}` {
		t.Errorf("coerced %s, %v; want each position coerced to its own schema", got, err)
	}
	_, err = tool.Build(json.RawMessage(`{"p":["a",true,"x"]}`))
	checkProblems(t, "third item", err, false, []string{`p[2]: must be an integer, got "x"`})
}

// TestForeignReferencesHoisted: a reference into a part of the document
// no schema keyword holds (OpenAPI's components) is followed, and a
// "$ref" that is data (inside const) is left as it is.
func TestForeignReferencesHoisted(t *testing.T) {
	tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(`{"type":"object",
		"properties":{"size":{"$ref":"#/components/schemas/Size"},"raw":{"const":{"$ref":"#/components/schemas/Size"}}},
		"components":{"schemas":{"Size":{"enum":["s","m"]}}}}`)}, func(json.RawMessage) (Invocation, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if u := tool.(*specTool).v.uncompiled(); u != nil {
		t.Fatalf("not compiled: %v", u)
	}
	if _, err := tool.Build(json.RawMessage(`{"size":"m","raw":{"$ref":"#/components/schemas/Size"}}`)); err != nil {
		t.Errorf("fitting call refused: %v", err)
	}
	_, err = tool.Build(json.RawMessage(`{"size":"xl"}`))
	checkProblems(t, "size", err, false, []string{`size: must be one of "s", "m", got "xl"`})
}

// TestSelfReferringAlternativesThroughAReference: the bound on the
// library's work (affordable) counts references through $anchor and
// $dynamicRef too; the same five-way recursion as
// TestValidationOfSelfReferringAlternatives, through either, answers (it
// would take 5^40 steps otherwise, and the test would time out) and still
// reports the fault beside it.
func TestSelfReferringAlternativesThroughAReference(t *testing.T) {
	for _, kw := range []struct{ ref, anchor string }{{"$ref", "$anchor"}, {"$dynamicRef", "$dynamicAnchor"}} {
		t.Run(kw.ref, func(t *testing.T) {
			alt := `{"type":"object","properties":{"a":{"` + kw.ref + `":"#alts"}},"required":["a"]}`
			tool, err := NewTool(Spec{Name: "t", Parameters: json.RawMessage(`{"type":"object",
		"properties":{"a":{"` + kw.ref + `":"#alts"}, "b":{"type":"integer"}},
		"$defs":{"a":{"` + kw.anchor + `":"alts","anyOf":[` + strings.TrimSuffix(strings.Repeat(alt+",", 5), ",") + `]}}}`)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if u := tool.(*specTool).v.uncompiled(); u != nil {
				t.Fatalf("not compiled: %v", u)
			}
			deep := strings.Repeat(`{"a":`, 40) + "{}" + strings.Repeat("}", 40)
			_, err = tool.Build(json.RawMessage(`{"a":` + deep + `,"b":"x"}`))
			checkProblems(t, "nested 40 deep", err, true, []string{`b: must be an integer, got "x"`})
		})
	}
}
