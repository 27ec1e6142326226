package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/edit"
)

// claudeNames are Claude Code's names of the tools that have an
// equivalent here. A hook's matcher may use either name, and the hook is
// told Claude Code's, so that a script checking tool_name == "Bash" runs
// unchanged.
var claudeNames = map[string]string{
	tools.NameRunCommands:     "Bash",
	tools.NameEditor:          "Edit",
	tools.NameReplaceInFile:   "Edit",
	tools.NameApplyPatch:      "Edit",
	tools.NameWriteToFile:     "Write",
	tools.NameReadFiles:       "Read",
	tools.NameSearchCodebase:  "Grep",
	tools.NameListFiles:       "Glob",
	tools.NameFetchWebContent: "WebFetch",
}

// mcpSeparator is how the per-server MCP tools are named here:
// <server>__mcp__<tool>.
const mcpSeparator = "__mcp__"

// Names returns the names a call of tool with args answers to in a
// matcher: ours, Claude Code's alias where there is one, and
// mcp__<server>__<tool> for an MCP tool (the per-server tools and the
// generic use_mcp_tool alike). The first is the one hooks are told as
// tool_name.
func Names(tool string, args json.RawMessage) []string {
	if c, ok := claudeNames[tool]; ok {
		return []string{c, tool}
	}
	if server, name, ok := strings.Cut(tool, mcpSeparator); ok && server != "" && name != "" {
		return []string{"mcp__" + server + "__" + name, tool}
	}
	if tool == tools.NameUseMCPTool {
		var a struct {
			Server string `json:"server_name"`
			Tool   string `json:"tool_name"`
		}
		if json.Unmarshal(args, &a) == nil && a.Server != "" && a.Tool != "" {
			return []string{"mcp__" + a.Server + "__" + a.Tool, tool}
		}
	}
	return []string{tool}
}

// ToolInput is what a hook is told as tool_input: the call's arguments as
// checked, plus, for a tool with a Claude Code equivalent, that tool's
// field names — command (the commands one per line, since each runs
// whatever the one before did), file_path (absolute, against cwd),
// old_string/new_string (an edit's first replacement; every one in
// edits), content (a write), pattern and path (a search or a listing),
// and for use_mcp_tool the MCP tool's own arguments.
// A field the arguments already have is left as they have it. commands,
// when not nil, are the commands the call will run, as the invocation
// holds them.
func ToolInput(tool string, args json.RawMessage, commands []string, cwd string) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return args
	}
	set := func(k string, v any) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || cwd == "" {
			return p
		}
		return filepath.Join(cwd, p)
	}
	switch tool {
	case tools.NameRunCommands:
		if commands == nil {
			if list, ok := m["commands"].([]any); ok {
				for _, c := range list {
					if s, ok := c.(string); ok {
						commands = append(commands, s)
					}
				}
			}
		}
		set("command", strings.Join(commands, "\n"))
	case tools.NameEditor:
		set("file_path", abs(str("path")))
		set("old_string", str("old_text"))
		set("new_string", str("new_text"))
	case tools.NameReplaceInFile:
		set("file_path", abs(str("path")))
		if blocks, err := edit.ParseBlocks(str("diff")); err == nil && len(blocks) > 0 {
			set("old_string", strings.Join(blocks[0].Search, "\n"))
			set("new_string", strings.Join(blocks[0].Replace, "\n"))
			edits := make([]map[string]string, len(blocks))
			for i, b := range blocks {
				edits[i] = map[string]string{"old_string": strings.Join(b.Search, "\n"), "new_string": strings.Join(b.Replace, "\n")}
			}
			set("edits", edits)
		}
	case tools.NameApplyPatch:
		if p, err := edit.ParsePatch(str("input")); err == nil && len(p.Ops) > 0 {
			set("file_path", abs(p.Ops[0].Path))
		}
	case tools.NameWriteToFile:
		set("file_path", abs(str("path")))
	case tools.NameReadFiles:
		if list, ok := m["files"].([]any); ok && len(list) > 0 {
			if f, ok := list[0].(map[string]any); ok {
				p, _ := f["path"].(string)
				set("file_path", abs(p))
			}
		}
	case tools.NameSearchCodebase:
		if list, ok := m["queries"].([]any); ok && len(list) > 0 {
			q, _ := list[0].(string)
			set("pattern", q)
		}
		if p := str("path"); p != "" {
			m["path"] = abs(p)
		}
	case tools.NameUseMCPTool:
		// Claude Code gives an MCP tool's hook the tool's own arguments.
		if a, ok := m["arguments"].(map[string]any); ok {
			for k, v := range a {
				set(k, v)
			}
		}
	case tools.NameListFiles:
		set("pattern", "*")
		if p := str("path"); p != "" {
			m["path"] = abs(p)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// OurInput turns the updatedInput of a PreToolUse hook into the tool's
// own arguments. sent is the tool_input the hook was given. A hook written
// for Claude Code rewrites its own field names (command, file_path,
// old_string, new_string, content): where such a field differs from what
// it was sent, or the tool's own field is missing, its value becomes the
// tool's field; the mirrored fields are then dropped, since the tool's
// schema does not take them. The result is validated like any call.
func OurInput(tool string, sent, updated json.RawMessage) json.RawMessage {
	var m, was map[string]any
	if err := json.Unmarshal(updated, &m); err != nil || m == nil {
		return updated
	}
	_ = json.Unmarshal(sent, &was)
	pairs := map[string][][2]string{
		tools.NameRunCommands: {{"command", "commands"}},
		tools.NameEditor:      {{"file_path", "path"}, {"old_string", "old_text"}, {"new_string", "new_text"}},
		tools.NameWriteToFile: {{"file_path", "path"}},
	}[tool]
	for _, p := range pairs {
		theirs, ours := p[0], p[1]
		v, ok := m[theirs]
		if !ok {
			continue
		}
		_, hasOurs := m[ours]
		before, _ := json.Marshal(was[theirs])
		now, _ := json.Marshal(v)
		if !hasOurs || string(before) != string(now) {
			if ours == "commands" {
				if s, ok := v.(string); ok {
					v = []string{s}
				}
			}
			m[ours] = v
		}
		delete(m, theirs)
	}
	if tool == tools.NameReplaceInFile || tool == tools.NameEditor || tool == tools.NameWriteToFile || tool == tools.NameApplyPatch ||
		tool == tools.NameReadFiles {
		for _, k := range []string{"file_path", "old_string", "new_string", "edits"} {
			if _, had := was[k]; had {
				delete(m, k)
			}
		}
	}
	if tool == tools.NameSearchCodebase || tool == tools.NameListFiles {
		delete(m, "pattern")
	}
	out, err := json.Marshal(m)
	if err != nil {
		return updated
	}
	return out
}
