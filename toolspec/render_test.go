package toolspec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRenderEachFormat(t *testing.T) {
	tree, err := Parse([]byte(`{"type":"object","properties":{"path":{"type":"string","description":"In {{CWD}}."}},"required":["path"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defs := []Def{{Name: "read", Description: "Reads in {{CWD}}.", Schema: tree}}
	ex := func(s string) string { return strings.ReplaceAll(s, "{{CWD}}", "/w") }
	for format, want := range map[string]string{
		FormatAnthropic: `[{"name":"read","description":"Reads in /w.","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"In /w."}},"required":["path"]}}]`,
		FormatOpenAI:    `[{"type":"function","function":{"name":"read","description":"Reads in /w.","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string","description":"In /w."}},"required":["path"],"additionalProperties":false}}}]`,
		FormatResponses: `[{"type":"function","name":"read","description":"Reads in /w.","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string","description":"In /w."}},"required":["path"],"additionalProperties":false}}]`,
		FormatGemini:    `[{"functionDeclarations":[{"name":"read","description":"Reads in /w.","parameters":{"type":"OBJECT","properties":{"path":{"type":"STRING","description":"In /w."}},"required":["path"]}}]}]`,
	} {
		got, err := Render(format, defs, ex)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", format, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON", format)
		}
	}
}

func TestRenderRefusesOtherFormats(t *testing.T) {
	for _, f := range []string{FormatXML, "", "Anthropic", "yaml"} {
		if _, err := Render(f, nil, nil); err == nil {
			t.Errorf("Render(%q) accepted", f)
		}
	}
}

func TestResolvePointer(t *testing.T) {
	root, err := Parse([]byte(`{"$defs":{"a/b":{"type":"string"},"list":[{"type":"integer"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"#":               "",
		"#/$defs/a~1b":    "string",
		"#/$defs/list/0":  "integer",
		"#/$defs/list/1":  "error",
		"#/$defs/missing": "error",
		"#anchor":         "error",
		"#/$defs/a%2Fb":   "error", // %2F is a slash, not an escaped one
	} {
		n, err := ResolvePointer(root, ref)
		got := ""
		switch {
		case err != nil:
			got = "error"
		case n != root:
			got = n.Get("type").Str
		}
		if got != want {
			t.Errorf("ResolvePointer(%q) = %q (%v), want %q", ref, got, err, want)
		}
	}
}
