package session

import "github.com/cline-ls/cline-ls/provider"

// interrupted is the result given to a call that never returned one.
const interrupted = "The call was interrupted before it returned a result (the reply was cut off or the turn cancelled); it may not have run."

// repairHistory returns a history every provider accepts: each tool call
// an assistant message makes is answered by a result in the tool message
// right after it, and no result answers a call that is not there. A reply
// cut off after a call (a cancel, a dropped stream while a second parallel
// call streamed) leaves a call unanswered, which Anthropic and OpenAI
// refuse for every later request; such calls get a result saying they
// were interrupted. Results for unknown calls are dropped. The input is
// not changed; when nothing needs repair it is returned as is.
func repairHistory(h []provider.Message) []provider.Message {
	if historyIntact(h) {
		return h
	}
	out := make([]provider.Message, 0, len(h)+1)
	for i := 0; i < len(h); i++ {
		m := h[i]
		if m.Role == provider.RoleTool {
			// A tool message not right after the calls it answers: its
			// results answer nothing.
			continue
		}
		out = append(out, m)
		calls := callsOf(m)
		if len(calls) == 0 {
			continue
		}
		var results []provider.Part
		if i+1 < len(h) && h[i+1].Role == provider.RoleTool {
			results = h[i+1].Parts
			i++
		}
		answered := make(map[string]provider.Part, len(results))
		for _, p := range results {
			if p.Kind == provider.PartToolResult && p.Result != nil {
				answered[p.Result.CallID] = p
			}
		}
		msg := provider.Message{Role: provider.RoleTool}
		for _, c := range calls {
			if p, ok := answered[c.ID]; ok {
				msg.Parts = append(msg.Parts, p)
				continue
			}
			msg.Parts = append(msg.Parts, provider.ResultPart(provider.ToolResult{CallID: c.ID, Name: c.Name, Content: interrupted, IsError: true}))
		}
		out = append(out, msg)
	}
	return out
}

// historyIntact reports whether every call is answered right after it and
// every result answers a call.
func historyIntact(h []provider.Message) bool {
	for i, m := range h {
		switch m.Role {
		case provider.RoleTool:
			if i == 0 {
				return false
			}
			want := map[string]bool{}
			for _, c := range callsOf(h[i-1]) {
				want[c.ID] = true
			}
			n := 0
			for _, p := range m.Parts {
				if p.Kind != provider.PartToolResult || p.Result == nil || !want[p.Result.CallID] {
					return false
				}
				n++
			}
			if n != len(want) {
				return false
			}
		default:
			if len(callsOf(m)) > 0 && (i+1 >= len(h) || h[i+1].Role != provider.RoleTool) {
				return false
			}
		}
	}
	return true
}

func callsOf(m provider.Message) []provider.ToolCall {
	if m.Role != provider.RoleAssistant {
		return nil
	}
	var out []provider.ToolCall
	for _, p := range m.Parts {
		if p.Kind == provider.PartToolCall && p.Call != nil {
			out = append(out, *p.Call)
		}
	}
	return out
}
