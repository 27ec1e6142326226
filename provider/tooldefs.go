package provider

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cline-ls/cline-ls/tools"
)

// ToolDefs describes tools for a Request: names, descriptions with their
// placeholders filled from ctx, and parameter schemas.
func ToolDefs(ts []tools.Tool, ctx tools.Context) []ToolDef {
	defs := make([]ToolDef, 0, len(ts))
	for _, t := range ts {
		s := t.Spec()
		defs = append(defs, ToolDef{Name: s.Name, Description: tools.Expand(s.Description, ctx), Parameters: s.Parameters})
	}
	return defs
}

// defTool lets a ToolDef go through tools.Render, so that each API's tool
// shape is produced by the one converter package tools owns.
type defTool struct{ def ToolDef }

func (t defTool) Spec() tools.Spec {
	return tools.Spec{ID: t.def.Name, Name: t.def.Name, Description: t.def.Description, Parameters: t.def.Parameters}
}

func (t defTool) Build(json.RawMessage) (tools.Invocation, error) {
	return nil, errors.New("provider: a tool definition describes a tool but cannot run it")
}

// renderTools renders defs in one of tools' native formats. Descriptions
// are already filled, so the context is empty.
func renderTools(format string, defs []ToolDef) ([]byte, error) {
	ts := make([]tools.Tool, len(defs))
	for i, d := range defs {
		ts[i] = defTool{def: d}
	}
	b, err := tools.Render(format, ts, tools.Context{})
	if err != nil {
		return nil, fmt.Errorf("provider: rendering tools: %w", err)
	}
	return b, nil
}
