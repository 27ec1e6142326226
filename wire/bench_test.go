package wire_test

import (
	"testing"

	"github.com/cline-ls/cline-ls/wire"
)

// The hot update is a message chunk, sent for every streamed piece of a
// reply. These compare the typed value with the map it replaced, both
// encoded by wire.Marshal (the daemon's codec).

func BenchmarkChunkTyped(b *testing.B) {
	n := wire.SessionNotification{SessionID: "s1", Update: wire.AgentMessageChunk{Content: wire.TextBlock{Text: "a streamed piece of a reply, "}}}
	for b.Loop() {
		if _, err := wire.Marshal(n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChunkMap(b *testing.B) {
	n := map[string]any{"sessionId": "s1", "update": map[string]any{"sessionUpdate": "agent_message_chunk",
		"content": map[string]any{"type": "text", "text": "a streamed piece of a reply, "}}}
	for b.Loop() {
		if _, err := wire.Marshal(n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolCallEndTyped(b *testing.B) {
	u := wire.ToolCallUpdate{ToolCallID: "c2", Status: wire.StatusCompleted, RawOutput: &wire.ToolOutput{},
		Content: []wire.ToolCallContent{wire.Text("Edited a.txt"), wire.Diff("/w/a.txt", "one\ntwo\n", "one\n2\n", true)}}
	for b.Loop() {
		if _, err := wire.Marshal(u); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolCallEndMap(b *testing.B) {
	u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "completed", "rawOutput": map[string]any{"isError": false},
		"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "Edited a.txt"}},
			map[string]any{"type": "diff", "path": "/w/a.txt", "oldText": "one\ntwo\n", "newText": "one\n2\n"}}}
	for b.Loop() {
		if _, err := wire.Marshal(u); err != nil {
			b.Fatal(err)
		}
	}
}
