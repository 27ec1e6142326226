package tools

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Names of the built-in tools, as the model sees them.
const (
	NameReadFiles           = "read_files"
	NameListFiles           = "list_files"
	NameSearchCodebase      = "search_codebase"
	NameListCodeDefinitions = "list_code_definitions"
	NameRunCommands         = "run_commands"
	NameReadCommandOutput   = "read_command_output"
	NameStopCommand         = "stop_command"
	NameEditor              = "editor"
	NameReplaceInFile       = "replace_in_file"
	NameApplyPatch          = "apply_patch"
	NameWriteToFile         = "write_to_file"
	NameFetchWebContent     = "fetch_web_content"
	NameAskQuestion         = "ask_question"
	NameSubmitAndExit       = "submit_and_exit"
	NamePlanModeRespond     = "plan_mode_respond"
	NameUpdatePlan          = "update_plan"
	NameUseSkill            = "use_skill"
	NameSpawnAgent          = "spawn_agent"
	NameUseMCPTool          = "use_mcp_tool"
	NameAccessMCPResource   = "access_mcp_resource"
	NameFindReferences      = "find_references"
	NameGoToDefinition      = "go_to_definition"
	NameDocumentSymbols     = "document_symbols"
	NameRenameSymbol        = "rename_symbol"
)

// specFiles holds each built-in tool's model-facing description
// (<name>.md) and parameter schema (<name>.json), kept as files so they
// can be read and reviewed as the model will see them.
//
//go:embed specs/*.md specs/*.json
var specFiles embed.FS

// builtinMeta is what the Go side adds to a built-in's two files.
type builtinMeta struct {
	name     string
	display  string
	kind     Kind
	readOnly bool
	requires func(Context) bool
}

// builtinTable lists the built-in tools in the order of the table in
// docs/DESIGN.md §2. Read-only here means "needs no approval by default"
// (approvals, same section): web fetches and MCP calls ask, so they are
// not read-only.
func builtinTable() []builtinMeta {
	notApplyPatch := func(c Context) bool { return !c.ApplyPatch }
	return []builtinMeta{
		{NameReadFiles, "Read files", KindRead, true, nil},
		{NameListFiles, "List files", KindRead, true, nil},
		{NameSearchCodebase, "Search", KindSearch, true, nil},
		{NameListCodeDefinitions, "List definitions", KindRead, true, nil},
		{NameRunCommands, "Run commands", KindExecute, false, nil},
		// Offered only while the session has background commands, so
		// that a session that starts none pays nothing for them.
		{NameReadCommandOutput, "Command output", KindRead, true, hasBackground},
		{NameStopCommand, "Stop command", KindOther, true, hasBackground},
		{NameEditor, "Edit", KindEdit, false, notApplyPatch},
		{NameReplaceInFile, "Replace in file", KindEdit, false, notApplyPatch},
		{NameApplyPatch, "Apply patch", KindEdit, false, func(c Context) bool { return c.ApplyPatch }},
		{NameWriteToFile, "Write file", KindEdit, false, nil},
		{NameFetchWebContent, "Fetch", KindFetch, false, nil},
		{NameAskQuestion, "Ask", KindOther, true, nil},
		{NameSubmitAndExit, "Submit", KindOther, true, nil},
		{NamePlanModeRespond, "Respond", KindOther, true, nil},
		{NameUpdatePlan, "Update plan", KindThink, true, nil},
		{NameUseSkill, "Use skill", KindRead, true, func(c Context) bool { return len(c.Skills) > 0 }},
		// A subagent spawning subagents could recurse without end.
		{NameSpawnAgent, "Subagent", KindOther, true, func(c Context) bool { return !c.Subagent }},
		{NameUseMCPTool, "MCP tool", KindOther, false, func(c Context) bool { return c.HasMCP }},
		{NameAccessMCPResource, "MCP resource", KindRead, false, func(c Context) bool { return c.HasMCP }},
		// The editor's language servers (PROTOCOL.md §11), offered for
		// what the client declared.
		{NameFindReferences, "Find references", KindSearch, true, needsLSP(NameFindReferences)},
		{NameGoToDefinition, "Go to definition", KindRead, true, needsLSP(NameGoToDefinition)},
		{NameDocumentSymbols, "Document symbols", KindRead, true, needsLSP(NameDocumentSymbols)},
		{NameRenameSymbol, "Rename symbol", KindEdit, false, needsLSP(NameRenameSymbol)},
	}
}

func hasBackground(c Context) bool { return c.Background }

// BuiltinNames lists the built-in tools' names in BuiltinSpecs' order,
// without building their specs (which reads and compacts every schema):
// initialize announces the names and needs nothing else.
func BuiltinNames() []string {
	table := builtinTable()
	names := make([]string, len(table))
	for i, m := range table {
		names[i] = m.name
	}
	return names
}

// BuiltinSpecs returns the spec of every built-in tool, in a fixed order.
// Each call returns fresh values the caller may change.
func BuiltinSpecs() []Spec {
	table := builtinTable()
	specs := make([]Spec, len(table))
	for i, m := range table {
		specs[i] = m.spec()
	}
	return specs
}

// BuiltinSpec returns the spec of the built-in tool with that name.
func BuiltinSpec(name string) (Spec, bool) {
	for _, m := range builtinTable() {
		if m.name == name {
			return m.spec(), true
		}
	}
	return Spec{}, false
}

func (m builtinMeta) spec() Spec {
	var params bytes.Buffer
	if err := json.Compact(&params, specFile(m.name+".json")); err != nil {
		// The files are compiled in and every one is checked by the tests.
		panic(fmt.Sprintf("tools: specs/%s.json: %v", m.name, err))
	}
	return Spec{
		ID:                  m.name,
		Name:                m.name,
		DisplayName:         m.display,
		Description:         strings.TrimSpace(string(specFile(m.name + ".md"))),
		Parameters:          params.Bytes(),
		ContextRequirements: m.requires,
		Kind:                m.kind,
		ReadOnly:            m.readOnly,
	}
}

func specFile(name string) []byte {
	b, err := specFiles.ReadFile("specs/" + name)
	if err != nil {
		panic(fmt.Sprintf("tools: built-in spec file missing: %v", err))
	}
	return b
}

// BuildFunc turns validated, normalised arguments into an invocation. It
// is the part of a tool that its implementation supplies.
type BuildFunc func(args json.RawMessage) (Invocation, error)

// NewTool pairs a spec with the build function of its implementation.
// The returned tool's Build checks arguments against spec.Parameters
// (resolved once, here) before build sees them, so build may assume they
// fit the schema. A nil build gives a tool that validates and then
// reports that it has no implementation, which is enough to list and
// render it. NewTool fails when the schema cannot be used.
func NewTool(spec Spec, build BuildFunc) (Tool, error) {
	if len(bytes.TrimSpace(spec.Parameters)) == 0 {
		spec.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if c, ok := builtinSchemas()[spec.Name]; ok && bytes.Equal(c.params, spec.Parameters) {
		r := c.resolve()
		if r.err != nil {
			return nil, r.err
		}
		return &specTool{spec: spec, v: r.v, build: build}, nil
	}
	r := resolveSchema(spec.Name, spec.Parameters)
	if r.err != nil {
		return nil, r.err
	}
	return &specTool{spec: spec, v: r.v, build: build}, nil
}

// resolvedSchema is a tool schema made ready for Build: a validator
// holding the parsed schema and its JSON. It is read-only once made.
type resolvedSchema struct {
	v   *validator
	err error
}

func resolveSchema(name string, params json.RawMessage) resolvedSchema {
	v, err := newValidator(name, params)
	return resolvedSchema{v: v, err: err}
}

// builtinSchemas resolves each built-in tool's schema at most once per
// process: the schemas are compiled in, so their resolved form is as
// constant as they are, and every session's registry can share it
// (resolving them all took a millisecond per session). The table itself
// is built on first use, not at package init: a daemon that only answers
// initialize never needs it.
var builtinSchemas = sync.OnceValue(func() map[string]struct {
	params  json.RawMessage
	resolve func() resolvedSchema
} {
	m := map[string]struct {
		params  json.RawMessage
		resolve func() resolvedSchema
	}{}
	for _, meta := range builtinTable() {
		spec := meta.spec()
		m[spec.Name] = struct {
			params  json.RawMessage
			resolve func() resolvedSchema
		}{spec.Parameters, sync.OnceValue(func() resolvedSchema { return resolveSchema(spec.Name, spec.Parameters) })}
	}
	return m
})

// Builtin returns the built-in tool called name with its implementation.
func Builtin(name string, build BuildFunc) (Tool, error) {
	spec, ok := BuiltinSpec(name)
	if !ok {
		return nil, fmt.Errorf("tools: no built-in tool %q", name)
	}
	return NewTool(spec, build)
}

// specTool is the Tool NewTool returns.
type specTool struct {
	spec  Spec
	v     *validator
	build BuildFunc
}

// Spec returns the tool's spec.
func (t *specTool) Spec() Spec { return t.spec }

// Build validates raw arguments, then hands them to the implementation.
func (t *specTool) Build(raw json.RawMessage) (Invocation, error) {
	args, err := t.v.check(raw)
	if err != nil {
		return nil, err
	}
	return t.buildChecked(args)
}

func (t *specTool) buildChecked(args json.RawMessage) (Invocation, error) {
	if t.build == nil {
		return nil, fmt.Errorf("tools: %s has no implementation", t.spec.Name)
	}
	inv, err := t.build(args)
	var ve *ValidationError
	if errors.As(err, &ve) && ve.Tool == "" {
		ve.Tool = t.spec.Name
	}
	return inv, err
}

// BuildChecked is t.Build that also returns the arguments as the tool's
// implementation receives them: validated, coerced to the schema's types
// and with null optional fields dropped. Whatever judges a call's
// arguments (the approval rules) judges these, not what the model sent.
// A tool that does not check a schema of its own returns raw.
func BuildChecked(t Tool, raw json.RawMessage) (Invocation, json.RawMessage, error) {
	st, ok := t.(*specTool)
	if !ok {
		inv, err := t.Build(raw)
		return inv, raw, err
	}
	args, err := st.v.check(raw)
	if err != nil {
		return nil, nil, err
	}
	inv, err := st.buildChecked(args)
	return inv, args, err
}

// schemas returns the parsed forms the converters need.
func (t *specTool) schemas() (*node, *schema) { return t.v.tree, t.v.schema }

// Typed adapts a build function that takes its arguments decoded into T,
// a struct whose json tags match the schema's properties.
func Typed[T any](build func(args T) (Invocation, error)) BuildFunc {
	return func(raw json.RawMessage) (Invocation, error) {
		args, err := Decode[T](raw)
		if err != nil {
			return nil, err
		}
		return build(args)
	}
}

// Decode decodes validated arguments into T. A value that does not fit
// T's fields (a schema and struct that disagree, or a number too large)
// is reported as a *ValidationError naming the field.
func Decode[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return v, &ValidationError{Problems: []Problem{{
			Path:    te.Field,
			Message: fmt.Sprintf("must be a %s, got %s", te.Type, te.Value),
		}}}
	}
	if err != nil {
		return v, fmt.Errorf("tools: decoding arguments: %w", err)
	}
	return v, nil
}

// TrainedOnApplyPatch reports whether a model is one of the families
// trained on the apply_patch grammar (OpenAI GPT-5 and codex), for which
// the editor group offers apply_patch (see Context.ApplyPatch).
func TrainedOnApplyPatch(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "gpt-5") || strings.Contains(m, "codex")
}
