package mcpbridge

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

func TestPromptsAsSlashCommands(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "local")}, Options{})
	h.waitState(t, "local", StateRunning)
	ps := h.m.Prompts()
	if len(ps) != 1 || ps[0].Command() != "mcp:local:review" || ps[0].Hint() != "file [focus]" || ps[0].Description != "Review a file." {
		t.Fatalf("prompts = %+v", ps)
	}
	if st := h.statusOf(t, "local"); st.Prompts != 1 || st.Templates != 1 {
		t.Errorf("status = %+v, want 1 prompt and 1 template", st)
	}
	ctx := context.Background()
	for _, c := range []struct{ line, want string }{
		{"/mcp:local:review main.go", "Review main.go for anything."},
		{"/mcp:local:review file=main.go focus=errors", "Review main.go for errors."},
		{`/mcp:local:review focus="error handling" cmd/x.go`, "Review cmd/x.go for error handling."},
		{"  /mcp:local:review a.go the error paths  ", "Review a.go for the error paths."},
	} {
		text, err := h.m.RunPromptCommand(ctx, c.line)
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if !strings.HasPrefix(text, strings.TrimSpace(c.line)+"\n") || !strings.Contains(text, c.want) ||
			!strings.Contains(text, "(as the assistant) I will read it first.") || !strings.Contains(text, "[resource test://style]\nTabs, not spaces.") {
			t.Errorf("%s:\n%s\nwant the command, %q, the assistant's line and the embedded resource", c.line, text, c.want)
		}
	}
	for _, c := range []struct{ line, says string }{
		{"/mcp:local:review", "missing file (the file to review)"},
		{"/mcp:local:review focus=x", "missing file"},
		{"/mcp:local:nope", `has no prompt "nope"; its prompts are: review`},
		{"/mcp:elsewhere:review x", `no MCP server "elsewhere"; the servers are: local`},
		{"/mcp:local", "/mcp:SERVER:PROMPT"},
		{`/mcp:local:review "main.go`, "not closed"},
	} {
		if _, err := h.m.RunPromptCommand(ctx, c.line); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want %q", c.line, err, c.says)
		}
	}
	if !IsPromptCommand(" /mcp:x:y") || IsPromptCommand("/mcpx") || IsPromptCommand("please /mcp:x:y") {
		t.Error("IsPromptCommand")
	}
}

func TestResourceTemplates(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "local")}, Options{})
	access := h.builtin(t, tools.NameAccessMCPResource)
	if res := run(t, access, `{"server_name":"local","uri":"test://notes/todo"}`); res.IsError || !strings.Contains(res.Content, "note todo") {
		t.Errorf("a templated resource = %+v", res)
	}
	res := run(t, access, `{"server_name":"local","uri":"test://notes/missing"}`)
	if !res.IsError || !strings.Contains(res.Content, "test://notes/{name}") || !strings.Contains(res.Content, "test://greeting") {
		t.Errorf("a failed read = %+v, want the resources and the templates named", res)
	}
}
