package prompt

import (
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
)

func TestFill(t *testing.T) {
	ctx := tools.Context{Mode: "act", Family: toolspec.FamilyXS, CWD: "/w/{{MODE}}", OS: "linux", Shell: "/bin/zsh", Skills: []string{"go", "sql"}}
	tests := []struct{ in, want string }{
		{"", ""},
		{"no placeholders", "no placeholders"},
		{"cwd {{CWD}} on {{OS}} with {{SHELL}} in {{MODE}} for {{FAMILY}}", "cwd /w/{{MODE}} on linux with /bin/zsh in act for xs"},
		{"skills: {{SKILLS}}", "skills: go, sql"},
		{"{{CWD}}{{CWD}}", "/w/{{MODE}}/w/{{MODE}}"},
		{"keep {{UNKNOWN}} and {{ .Go }} and {{cwd}}", "keep {{UNKNOWN}} and {{ .Go }} and {{cwd}}"},
		{"{{{{OS}}}}", "{{linux}}"},
		{"{{A {{OS}}", "{{A linux"},
		{"open {{OS", "open {{OS"},
		{"}}{{", "}}{{"},
	}
	for _, tt := range tests {
		if got := ContextVars(ctx).Fill(tt.in); got != tt.want {
			t.Errorf("Fill(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVarsFillExtra(t *testing.T) {
	v := ContextVars(tools.Context{OS: "darwin"})
	v["TOOLS"] = "read_files"
	if got, want := v.Fill("{{TOOLS}} on {{OS}} in '{{MODE}}'"), "read_files on darwin in ''"; got != want {
		t.Errorf("Fill = %q, want %q", got, want)
	}
}
