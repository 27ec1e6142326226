package provider

import (
	"fmt"

	"github.com/cline-ls/cline-ls/toolspec"
)

// renderTools renders defs in one of the native tool formats. Their
// descriptions are already filled, so nothing is expanded.
func renderTools(format string, defs []ToolDef) ([]byte, error) {
	ds := make([]toolspec.Def, len(defs))
	for i, d := range defs {
		params := d.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object","properties":{}}`)
		}
		tree, err := toolspec.Parse(params)
		if err != nil {
			return nil, fmt.Errorf("provider: schema of tool %s: %w", d.Name, err)
		}
		ds[i] = toolspec.Def{Name: d.Name, Description: d.Description, Schema: tree}
	}
	b, err := toolspec.Render(format, ds, nil)
	if err != nil {
		return nil, fmt.Errorf("provider: rendering tools: %w", err)
	}
	return b, nil
}
