package tools

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cline-ls/cline-ls/toolspec"
)

// Registry holds the tools registered for each model family. A Server
// builds one at start-up (NewRegistry, then Register or
// RegisterBuiltins) and sessions read it concurrently.
type Registry struct {
	mu       sync.RWMutex
	byFamily map[toolspec.Family][]Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byFamily: map[toolspec.Family][]Tool{}}
}

// Register adds t for a model family; the empty family means generic. A
// second tool with the same family and ID is ignored, so the first
// registration wins; Register reports whether t was added.
func (r *Registry) Register(family toolspec.Family, t Tool) bool {
	if family == "" {
		family = toolspec.FamilyGeneric
	}
	id := t.Spec().ID
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.ContainsFunc(r.byFamily[family], func(o Tool) bool { return o.Spec().ID == id }) {
		return false
	}
	r.byFamily[family] = append(r.byFamily[family], t)
	return true
}

// RegisterBuiltins registers every built-in tool for the generic family,
// each with its implementation from impls (keyed by tool name). A tool
// missing from impls is still registered, so it can be listed and
// rendered, and its Build says it has no implementation. A key that names
// no built-in tool is an error, to catch typos.
func (r *Registry) RegisterBuiltins(impls map[string]BuildFunc) error {
	specs := BuiltinSpecs()
	for name := range impls {
		if !slices.ContainsFunc(specs, func(s Spec) bool { return s.Name == name }) {
			return fmt.Errorf("tools: implementation given for unknown built-in tool %q", name)
		}
	}
	for _, s := range specs {
		t, err := NewTool(s, impls[s.Name])
		if err != nil {
			return err
		}
		r.Register(toolspec.FamilyGeneric, t)
	}
	return nil
}

// Lookup finds a tool by ID: registered for family, else for generic,
// else for any family (in the order generic, next-gen, xs, then others by
// name). An ID found nowhere is tried again as a legacy alias
// (read_file → read_files and the like; see Alias).
func (r *Registry) Lookup(id string, family toolspec.Family) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.lookup(id, family); ok {
		return t, true
	}
	if to, ok := Alias(id); ok {
		return r.lookup(to, family)
	}
	return nil, false
}

func (r *Registry) lookup(id string, family toolspec.Family) (Tool, bool) {
	find := func(f toolspec.Family) (Tool, bool) {
		for _, t := range r.byFamily[f] {
			if t.Spec().ID == id {
				return t, true
			}
		}
		return nil, false
	}
	if t, ok := find(family); ok {
		return t, true
	}
	if t, ok := find(toolspec.FamilyGeneric); ok {
		return t, true
	}
	for _, f := range r.families() {
		if t, ok := find(f); ok {
			return t, true
		}
	}
	return nil, false
}

// families returns the registered families in a fixed order: the known
// ones first, as declared, then the rest sorted by name.
func (r *Registry) families() []toolspec.Family {
	known := []toolspec.Family{toolspec.FamilyGeneric, toolspec.FamilyNextGen, toolspec.FamilyXS}
	var out, rest []toolspec.Family
	for _, f := range known {
		if len(r.byFamily[f]) > 0 {
			out = append(out, f)
		}
	}
	for f := range r.byFamily {
		if !slices.Contains(known, f) {
			rest = append(rest, f)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Enabled returns the tools a preset enables in a context: the preset's
// IDs resolved by Lookup for ctx.Family, in the preset's order, keeping
// those whose ContextRequirements hold and dropping repeats (two IDs that
// resolve to the same name). IDs that resolve to nothing are skipped. An
// empty preset enables no tools: a plain conversation. MCP and subagent
// tools are not registered; Preset.Filter admits them.
func (r *Registry) Enabled(p Preset, ctx Context) []Tool {
	var out []Tool
	for _, id := range p.Tools {
		t, ok := r.Lookup(id, ctx.Family)
		if !ok {
			continue
		}
		s := t.Spec()
		if s.ContextRequirements != nil && !s.ContextRequirements(ctx) {
			continue
		}
		if slices.ContainsFunc(out, func(o Tool) bool { return o.Spec().Name == s.Name }) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Pick finds the tool a model called among the enabled ones, by name or
// else by legacy alias. When it reports false, the session answers the
// call with NotAvailable.
func Pick(enabled []Tool, name string) (Tool, bool) {
	find := func(n string) (Tool, bool) {
		for _, t := range enabled {
			if t.Spec().Name == n {
				return t, true
			}
		}
		return nil, false
	}
	if t, ok := find(name); ok {
		return t, true
	}
	if to, ok := Alias(name); ok {
		return find(to)
	}
	return nil, false
}

// Alias maps a legacy or foreign tool name (Cline's older names, Gemini
// CLI's and Claude Code's common ones) to the built-in tool that does the
// same job. The arguments may still differ; validation then tells the
// model which fields the tool wants.
func Alias(name string) (string, bool) {
	switch name {
	case "read_file", "read_many_files", "view_file":
		return NameReadFiles, true
	case "execute_command", "run_command", "run_shell_command", "shell", "bash":
		return NameRunCommands, true
	case "search_files", "search_file_content", "grep":
		return NameSearchCodebase, true
	case "list_code_definition_names":
		return NameListCodeDefinitions, true
	case "list_directory", "ls":
		return NameListFiles, true
	case "write_file", "create_file":
		return NameWriteToFile, true
	case "edit_file", "str_replace", "replace":
		return NameEditor, true
	case "attempt_completion":
		return NameSubmitAndExit, true
	case "ask_followup_question":
		return NameAskQuestion, true
	case "new_task", "use_subagents", "task":
		return NameSpawnAgent, true
	case "web_fetch", "fetch_url":
		return NameFetchWebContent, true
	case "focus_chain", "todo_write", "update_todo_list":
		return NameUpdatePlan, true
	case "skills", "load_skill":
		return NameUseSkill, true
	}
	return "", false
}
