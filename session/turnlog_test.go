package session

import (
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/wire"
)

func TestTurnLogKeepsTheAnswerSinceTheLastCall(t *testing.T) {
	var l TurnLog
	l.Add(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "Looking."}})
	l.Add(wire.ToolCall{ToolCallID: "c1", Title: "Read\n  main.go"})
	l.Add(wire.ToolCallUpdate{ToolCallID: "c1", Status: wire.StatusFailed})
	l.Add(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "It is "}})
	l.Add(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "fixed."}})
	transcript, answer := l.Text()
	if answer != "It is fixed." {
		t.Errorf("answer = %q, want the words after the last call", answer)
	}
	for _, want := range []string{"Looking.", "- Read main.go", "(failed)", "It is fixed."} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, transcript)
		}
	}
}

func TestTurnLogIsBounded(t *testing.T) {
	var l TurnLog
	chunk := strings.Repeat("x", 64<<10)
	for range 40 {
		l.Add(wire.AgentMessageChunk{Content: wire.TextBlock{Text: chunk}})
	}
	transcript, answer := l.Text()
	if len(transcript) > turnLogBytes+100 || !strings.HasSuffix(transcript, "[the rest of the turn is left out]\n") {
		t.Errorf("the transcript is %d bytes, ending %q", len(transcript), transcript[len(transcript)-40:])
	}
	if len(answer) > answerBytes*2+len(chunk) {
		t.Errorf("the answer kept %d bytes", len(answer))
	}
}

func TestFirstLines(t *testing.T) {
	long := strings.Repeat("line\n", answerLines+3)
	if got := FirstLines(long); strings.Count(got, "\n") != answerLines-1 || !strings.HasSuffix(got, " …") {
		t.Errorf("FirstLines of %d lines = %q", answerLines+3, got)
	}
	wide := strings.Repeat("é", answerBytes)
	got := FirstLines(wide)
	if !strings.HasSuffix(got, " …") || !strings.HasPrefix(got, "éé") || len(got) > answerBytes+len(" …") {
		t.Errorf("FirstLines cut %d bytes to %d", len(wide), len(got))
	}
	if got := FirstLines("  short  "); got != "short" {
		t.Errorf("FirstLines(short) = %q", got)
	}
}
