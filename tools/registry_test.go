package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/toolspec"
)

// stubTool is a Tool that is not made by NewTool, as other packages may
// write them.
type stubTool struct{ spec Spec }

func (s stubTool) Spec() Spec { return s.spec }

func (s stubTool) Build(json.RawMessage) (Invocation, error) {
	return nil, errors.New("stub tools do not build")
}

// variant returns a tool whose DisplayName tells which registration it is.
func variant(id, which string) Tool {
	return stubTool{Spec{ID: id, Name: id, DisplayName: which}}
}

func names(ts []Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Spec().Name
	}
	return out
}

func TestRegisterFirstWins(t *testing.T) {
	r := NewRegistry()
	if !r.Register(toolspec.FamilyGeneric, variant("x", "first")) {
		t.Fatal("first Register reported not added")
	}
	if r.Register(toolspec.FamilyGeneric, variant("x", "second")) {
		t.Error("second Register of the same family+ID reported added")
	}
	if !r.Register(toolspec.FamilyXS, variant("x", "xs")) {
		t.Error("same ID in another family was refused")
	}
	if !r.Register("", variant("y", "empty family")) {
		t.Error("Register with the empty family refused")
	}
	got, _ := r.Lookup("x", toolspec.FamilyGeneric)
	if got.Spec().DisplayName != "first" {
		t.Errorf("Lookup(x, generic) = %s, want first", got.Spec().DisplayName)
	}
	if got, ok := r.Lookup("y", toolspec.FamilyNextGen); !ok || got.Spec().DisplayName != "empty family" {
		t.Error("the empty family did not register as generic")
	}
}

func TestLookupOrder(t *testing.T) {
	r := NewRegistry()
	r.Register(toolspec.FamilyGeneric, variant("both", "generic"))
	r.Register(toolspec.FamilyNextGen, variant("both", "next-gen"))
	r.Register(toolspec.FamilyXS, variant("xs-and-nextgen", "xs"))
	r.Register(toolspec.FamilyNextGen, variant("xs-and-nextgen", "next-gen"))
	r.Register("zeta", variant("custom", "zeta"))
	r.Register("alpha", variant("custom", "alpha"))
	r.Register(toolspec.FamilyXS, variant("only-xs", "xs"))

	cases := []struct {
		id     string
		family toolspec.Family
		want   string // DisplayName, or "" for not found
	}{
		{"both", toolspec.FamilyNextGen, "next-gen"},           // exact family
		{"both", toolspec.FamilyXS, "generic"},                 // falls back to generic
		{"both", toolspec.FamilyGeneric, "generic"},            // exact generic
		{"xs-and-nextgen", toolspec.FamilyGeneric, "next-gen"}, // any family: next-gen before xs
		{"xs-and-nextgen", toolspec.FamilyXS, "xs"},            // exact beats the scan
		{"custom", toolspec.FamilyGeneric, "alpha"},            // unknown families by name
		{"custom", "zeta", "zeta"},                             // exact custom family
		{"only-xs", toolspec.FamilyNextGen, "xs"},              // registered in one family only
		{"missing", toolspec.FamilyGeneric, ""},
	}
	for _, c := range cases {
		got, ok := r.Lookup(c.id, c.family)
		switch {
		case c.want == "" && ok:
			t.Errorf("Lookup(%s, %s) found %s, want nothing", c.id, c.family, got.Spec().DisplayName)
		case c.want != "" && !ok:
			t.Errorf("Lookup(%s, %s) found nothing, want %s", c.id, c.family, c.want)
		case ok && got.Spec().DisplayName != c.want:
			t.Errorf("Lookup(%s, %s) = %s, want %s", c.id, c.family, got.Spec().DisplayName, c.want)
		}
	}
}

func builtinRegistry(t testing.TB) *Registry {
	t.Helper()
	r := NewRegistry()
	if err := r.RegisterBuiltins(nil); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLookupAliases(t *testing.T) {
	r := builtinRegistry(t)
	cases := map[string]string{
		"read_file":                  "read_files",
		"execute_command":            "run_commands",
		"search_files":               "search_codebase",
		"attempt_completion":         "submit_and_exit",
		"ask_followup_question":      "ask_question",
		"write_file":                 "write_to_file",
		"list_code_definition_names": "list_code_definitions",
		"new_task":                   "spawn_agent",
		"run_shell_command":          "run_commands",
		"web_fetch":                  "fetch_web_content",
		"list_directory":             "list_files",
		"todo_write":                 "update_plan",
	}
	for alias, want := range cases {
		got, ok := r.Lookup(alias, toolspec.FamilyGeneric)
		if !ok || got.Spec().Name != want {
			t.Errorf("Lookup(%s) = %v, want %s", alias, got, want)
		}
	}
	if _, ok := r.Lookup("no_such_tool", toolspec.FamilyGeneric); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	// A tool registered under an alias's name is found as itself.
	r.Register(toolspec.FamilyGeneric, variant("read_file", "own"))
	if got, _ := r.Lookup("read_file", toolspec.FamilyGeneric); got.Spec().DisplayName != "own" {
		t.Error("an alias shadowed a registered tool of that name")
	}
}

func TestEnabled(t *testing.T) {
	r := builtinRegistry(t)
	full := Context{Family: toolspec.FamilyGeneric, HasMCP: true, Skills: []string{"s"}}
	cases := []struct {
		name   string
		preset Preset
		ctx    Context
		want   []string
	}{
		{"empty preset", Preset{Name: "chat"}, full, nil},
		{"order kept", Preset{Tools: []string{"write_to_file", "read_files"}}, full, []string{"write_to_file", "read_files"}},
		{"unknown skipped", Preset{Tools: []string{"nope", "read_files"}}, full, []string{"read_files"}},
		{"alias resolved, repeat dropped", Preset{Tools: []string{"read_file", "read_files"}}, full, []string{"read_files"}},
		{"no MCP", Preset{Tools: []string{"use_mcp_tool", "access_mcp_resource", "list_files"}}, Context{}, []string{"list_files"}},
		{"MCP", Preset{Tools: []string{"use_mcp_tool", "access_mcp_resource"}}, Context{HasMCP: true}, []string{"use_mcp_tool", "access_mcp_resource"}},
		{"no skills", Preset{Tools: []string{"use_skill"}}, Context{}, nil},
		{"skills", Preset{Tools: []string{"use_skill"}}, Context{Skills: []string{"x"}}, []string{"use_skill"}},
		{"subagent run", Preset{Tools: []string{"spawn_agent", "read_files"}}, Context{Subagent: true}, []string{"read_files"}},
		{"editor variant", NewPreset("e", GroupEditor), Context{}, []string{"editor", "replace_in_file", "write_to_file"}},
		{"apply_patch variant", NewPreset("e", GroupEditor), Context{ApplyPatch: true}, []string{"apply_patch", "write_to_file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := names(r.Enabled(c.preset, c.ctx))
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("Enabled = %v, want %v", got, c.want)
			}
		})
	}
}

func TestEnabledUsesFamilyVariant(t *testing.T) {
	r := builtinRegistry(t)
	small, _ := BuiltinSpec(NameReadFiles)
	small.Description = "Read files."
	tool, err := NewTool(small, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Register(toolspec.FamilyXS, tool)
	p := Preset{Tools: []string{"read_files"}}
	if got := r.Enabled(p, Context{Family: toolspec.FamilyXS}); len(got) != 1 || got[0].Spec().Description != "Read files." {
		t.Error("xs context did not get the xs variant")
	}
	if got := r.Enabled(p, Context{Family: toolspec.FamilyNextGen}); len(got) != 1 || got[0].Spec().Description == "Read files." {
		t.Error("next-gen context got the xs variant instead of generic")
	}
}

func TestRegisterBuiltins(t *testing.T) {
	r := NewRegistry()
	if err := r.RegisterBuiltins(map[string]BuildFunc{"read_fils": nil}); err == nil {
		t.Error("an implementation for an unknown tool was accepted")
	}
	called := false
	impl := func(args json.RawMessage) (Invocation, error) { called = true; return nil, nil }
	r = NewRegistry()
	if err := r.RegisterBuiltins(map[string]BuildFunc{NameListFiles: impl}); err != nil {
		t.Fatal(err)
	}
	lf, _ := r.Lookup(NameListFiles, toolspec.FamilyGeneric)
	if _, err := lf.Build(json.RawMessage(`{"path":"."}`)); err != nil || !called {
		t.Errorf("list_files Build: err %v, implementation called %v", err, called)
	}
	rf, _ := r.Lookup(NameReadFiles, toolspec.FamilyGeneric)
	_, err := rf.Build(json.RawMessage(`{"files":[{"path":"a"}]}`))
	var ve *ValidationError
	if err == nil || errors.As(err, &ve) {
		t.Errorf("Build of a tool without implementation: %v, want a non-validation error", err)
	}
}

func TestPick(t *testing.T) {
	r := builtinRegistry(t)
	p, _ := PresetFor(ModeSearch)
	enabled := r.Enabled(p, Context{})
	cases := map[string]string{"read_files": "read_files", "read_file": "read_files", "search_files": "search_codebase",
		"editor": "", "write_file": "", "nope": ""}
	for name, want := range cases {
		got, ok := Pick(enabled, name)
		if want == "" {
			if ok {
				t.Errorf("Pick(%s) = %s, want none", name, got.Spec().Name)
			}
		} else if !ok || got.Spec().Name != want {
			t.Errorf("Pick(%s) = %v, want %s", name, got, want)
		}
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	r := builtinRegistry(t)
	p, _ := PresetFor(ModeAct)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Register(toolspec.FamilyXS, variant(fmt.Sprintf("t%d", i), "xs"))
		}()
		go func() {
			defer wg.Done()
			if len(r.Enabled(p, Context{})) == 0 {
				t.Error("no tools enabled")
			}
		}()
	}
	wg.Wait()
}
