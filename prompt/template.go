package prompt

import (
	"strings"

	"github.com/cline-ls/cline-ls/tools"
)

// Vars maps placeholder names, without braces, to their values.
type Vars map[string]string

// ContextVars returns the placeholders a tool context fills: {{CWD}},
// {{OS}}, {{SHELL}}, {{MODE}}, {{FAMILY}} and {{SKILLS}} (the skill names,
// comma-separated), the same set tools.Expand fills in descriptions. Empty
// fields still fill their placeholder (with nothing), so a model never
// sees a raw {{OS}} because a client did not report one.
func ContextVars(ctx tools.Context) Vars {
	return Vars{
		"CWD":    ctx.CWD,
		"OS":     ctx.OS,
		"SHELL":  ctx.Shell,
		"MODE":   ctx.Mode,
		"FAMILY": string(ctx.Family),
		"SKILLS": strings.Join(ctx.Skills, ", "),
	}
}

// Fill replaces every {{NAME}} in s that v defines by its value, in one
// pass: values are not scanned again, so a path that happens to contain
// braces stays as it is. Placeholders v does not define are left intact,
// which keeps text that merely looks like a template (Go templates,
// Handlebars in a tool description) unchanged.
func (v Vars) Fill(s string) string {
	i := strings.Index(s, "{{")
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		end := strings.Index(s, "}}")
		if end < 0 {
			break
		}
		if val, ok := v[s[2:end]]; ok {
			b.WriteString(val)
			s = s[end+2:]
		} else {
			// Not ours: keep "{{" and look again after it, since
			// "{{{{CWD}}" still holds a placeholder.
			b.WriteString("{{")
			s = s[2:]
		}
		i = strings.Index(s, "{{")
	}
	b.WriteString(s)
	return b.String()
}
