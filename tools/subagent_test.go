package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSubagentSpecs(t *testing.T) {
	configs := []SubagentConfig{
		{Name: "Code Reviewer", Description: "Reviews a change for bugs.", Prompt: "You review code."},
		{Name: "docs", Prompt: "You write docs."},
		{Name: "code_reviewer", Description: "Another reviewer."},
		{Name: "  ", Description: "nameless"},
		{Name: strings.Repeat("very-long-name-", 6)},
	}
	logger, buf := logBuffer()
	specs := SubagentSpecs(configs, Context{}, logger)
	var got []string
	for _, s := range specs {
		got = append(got, s.Spec.Name)
	}
	if len(got) != 4 || !slices.Equal(got[:3], []string{"subagent_code_reviewer", "subagent_docs", "subagent_code_reviewer_2"}) {
		t.Fatalf("names %v", got)
	}
	if long := got[3]; len(long) > MaxToolNameLen || !strings.HasPrefix(long, "subagent_very-long-name-") {
		t.Errorf("long name %q", long)
	}
	if specs[0].Config.Prompt != "You review code." || specs[1].Config.Name != "docs" {
		t.Error("configs not carried with their specs")
	}
	if !strings.HasPrefix(specs[0].Spec.Description, "Reviews a change for bugs. ") ||
		!strings.HasPrefix(specs[1].Spec.Description, "Delegate a task to the docs subagent. ") {
		t.Errorf("descriptions %q, %q", specs[0].Spec.Description, specs[1].Spec.Description)
	}
	spawn, _ := BuiltinSpec(NameSpawnAgent)
	for _, s := range specs {
		if string(s.Spec.Parameters) != string(spawn.Parameters) || s.Spec.ID != s.Spec.Name {
			t.Errorf("%s: parameters %s, ID %s", s.Spec.Name, s.Spec.Parameters, s.Spec.ID)
		}
		if s.Spec.ContextRequirements(Context{Subagent: true}) || !s.Spec.ContextRequirements(Context{}) {
			t.Errorf("%s: requirements do not exclude subagent runs", s.Spec.Name)
		}
	}
	log := buf.String()
	if !strings.Contains(log, "description=nameless") || !strings.Contains(log, "renamed") || !strings.Contains(log, "shortened") {
		t.Errorf("log:\n%s", log)
	}

	if inside := SubagentSpecs(configs, Context{Subagent: true}, logger); len(inside) != 0 {
		t.Errorf("a subagent run got %d subagent tools", len(inside))
	}

	// A subagent tool is an ordinary tool once built, allowed where
	// spawn_agent is.
	tool, err := NewTool(specs[0].Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := tool.Build(json.RawMessage(`{}`)); !errors.As(err, &ve) || ve.Problems[0].String() != "prompt: required" {
		t.Errorf("Build without prompt: %v", err)
	}
	for mode, want := range map[string]bool{ModeAct: true, ModePlan: true, ModeSearch: true, ModeMinimal: true, ModeYolo: false} {
		if got := modeAllows(mode, specs[0].Spec.Name); got != want {
			t.Errorf("modeAllows(%s, %s) = %v", mode, specs[0].Spec.Name, got)
		}
	}
}
