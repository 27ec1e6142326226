package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/toolspec"
)

// Render renders tools in a format, their descriptions' placeholders
// filled from ctx. The native formats (toolspec.FormatAnthropic, OpenAI,
// Gemini) give the JSON value of the request's tools field, as
// toolspec.Render does; toolspec.FormatXML gives the tools'
// documentation for the system prompt, one block per tool, the prompt
// around it saying how to call them.
func Render(format string, tools []Tool, ctx Context) ([]byte, error) {
	ex := expander(ctx)
	if format != toolspec.FormatXML {
		defs := make([]toolspec.Def, len(tools))
		for i, t := range tools {
			spec := t.Spec()
			tree, _, err := schemasOf(t)
			if err != nil {
				return nil, err
			}
			defs[i] = toolspec.Def{Name: spec.Name, Description: spec.Description, Schema: tree}
		}
		return toolspec.Render(format, defs, ex)
	}
	// A built-in tool's documentation is about 400 bytes.
	b := make([]byte, 0, 512*len(tools))
	for i, t := range tools {
		tree, schema, err := schemasOf(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, "\n\n"...)
		}
		b = appendXMLDoc(b, t.Spec(), tree, schema, ex)
	}
	if len(b) > 0 {
		b = append(b, '\n')
	}
	return b, nil
}

// schemasOf returns a tool's parameter schema as an ordered tree and as
// parsed; tools made by NewTool have both at hand.
func schemasOf(t Tool) (*toolspec.Node, *schema, error) {
	if st, ok := t.(interface {
		schemas() (*toolspec.Node, *schema)
	}); ok {
		n, s := st.schemas()
		return n, s, nil
	}
	spec := t.Spec()
	params := spec.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	n, err := toolspec.Parse(params)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: schema of %s: %w", spec.Name, err)
	}
	s, err := parseSchema(n)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: schema of %s: %w", spec.Name, err)
	}
	return n, s, nil
}

// Expand fills the template placeholders {{CWD}}, {{OS}}, {{SHELL}},
// {{MODE}} and {{SKILLS}} (the skill names, comma-separated) from ctx.
// Unknown placeholders are left as they are.
func Expand(text string, ctx Context) string {
	return expander(ctx)(text)
}

func expander(ctx Context) func(string) string {
	var r *strings.Replacer
	return func(s string) string {
		if !strings.Contains(s, "{{") {
			return s
		}
		if r == nil {
			r = strings.NewReplacer(
				"{{CWD}}", ctx.CWD,
				"{{OS}}", ctx.OS,
				"{{SHELL}}", ctx.Shell,
				"{{MODE}}", ctx.Mode,
				"{{SKILLS}}", strings.Join(ctx.Skills, ", "),
			)
		}
		return r.Replace(s)
	}
}
