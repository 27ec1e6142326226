package hooks

import (
	"encoding/json"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// oldPayload is the hook input as a map, the way it was built before
// hookInput: the bytes a hook reads must not have changed.
func oldPayload(r *Runner, in Input) []byte {
	p := map[string]any{
		"session_id":      r.opts.SessionID,
		"transcript_path": r.opts.TranscriptPath,
		"cwd":             r.opts.CWD,
		"hook_event_name": string(in.Event),
	}
	switch in.Event {
	case PreToolUse, PostToolUse:
		p["tool_name"] = Names(in.Tool, in.Args)[0]
		p["cline_tool_name"] = in.Tool
		p["tool_input"] = ToolInput(in.Tool, in.Args, in.Commands, r.opts.CWD)
		if in.Event == PostToolUse {
			resp := map[string]any{"content": in.Result, "success": !in.ResultIsError, "is_error": in.ResultIsError}
			if in.Tool == tools.NameRunCommands {
				resp["stdout"], resp["stderr"], resp["interrupted"] = in.Result, "", false
			}
			var ti map[string]any
			if json.Unmarshal(ToolInput(in.Tool, in.Args, in.Commands, r.opts.CWD), &ti) == nil {
				if fp, ok := ti["file_path"].(string); ok {
					resp["filePath"] = fp
				}
			}
			p["tool_response"] = resp
		}
	case UserPromptSubmit:
		p["prompt"] = in.Prompt
	case Stop, SubagentStop:
		p["stop_hook_active"] = in.StopHookActive
	case PreCompact:
		p["trigger"] = in.Trigger
		p["custom_instructions"] = ""
	case SessionStart:
		p["source"] = in.Source
	case SessionEnd:
		p["reason"] = in.Reason
	case Notification:
		p["message"] = in.Message
	}
	b, _ := json.Marshal(p)
	return b
}

func TestPayloadBytesAreTheMapsOnes(t *testing.T) {
	r := runner(t, "/work/<ws>&co", Config{})
	edit := json.RawMessage(`{"path":"src/a.go","diff":"------- SEARCH\nold\n=======\nnew <b>&\n+++++++ REPLACE\n"}`)
	cmds := json.RawMessage(`{"commands":["npm test && echo '<ok>'"],"timeout":30}`)
	cases := []Input{
		{Event: PreToolUse, Tool: "replace_in_file", Args: edit},
		{Event: PreToolUse, Tool: tools.NameRunCommands, Args: cmds, Commands: []string{"npm test && echo '<ok>'"}},
		{Event: PreToolUse, Tool: "read_files"}, // no arguments: tool_input null
		{Event: PreToolUse, Tool: "use_mcp_tool", Args: json.RawMessage(`{"server_name":"github","tool_name":"create_issue","arguments":{}}`)},
		{Event: PostToolUse, Tool: "write_to_file", Args: json.RawMessage(`{"path":"a.go","content":"x"}`), Result: "written"},
		{Event: PostToolUse, Tool: "replace_in_file", Args: edit, Result: "<done>"},
		{Event: PostToolUse, Tool: tools.NameRunCommands, Args: cmds, Commands: []string{"npm test"}, Result: "FAIL\n", ResultIsError: true},
		{Event: PostToolUse, Tool: "read_files", Args: json.RawMessage(`[1]`)},
		{Event: PostToolUse, Tool: "read_files", Args: json.RawMessage(`{"file_path":null}`)},
		{Event: UserPromptSubmit, Prompt: "fix <it> & \u2028 go"},
		{Event: UserPromptSubmit},
		{Event: Stop},
		{Event: SubagentStop, StopHookActive: true},
		{Event: PreCompact, Trigger: "auto"},
		{Event: SessionStart, Source: "resume"},
		{Event: SessionEnd, Reason: "clear"},
		{Event: Notification, Message: "waiting"},
		{Event: Notification},
	}
	for _, in := range cases {
		got, _ := r.payload(in)
		if want := oldPayload(r, in); string(got) != string(want) {
			t.Errorf("%s %s:\n got %s\nwant %s", in.Event, in.Tool, got, want)
		}
	}
}
