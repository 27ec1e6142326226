package session

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
)

// TestTurnContextOncePerTurn: the instructions and the environment are
// taken once per turn, however many model requests it makes; the context
// block leads the turn's user message and stays in the history, and the
// next turn sees edited instructions.
func TestTurnContextOncePerTurn(t *testing.T) {
	text := func(s string) []provider.ReplayEvent { return []provider.ReplayEvent{{Text: s}} }
	tr := &provider.Transcript{Replies: []provider.ReplayReply{
		{Expect: &provider.Expect{SystemContains: "Rule one.", LastUserContains: "<environment_details>\nGit branch: main\nOpen in the editor (tools see their unsaved text): a.go\n</environment_details>\n\nfirst"},
			Events: text("working")},
		{Expect: &provider.Expect{SystemContains: "Rule one."}, Events: text("still working")},
		{Expect: &provider.Expect{SystemContains: "Rule two.", LastUserContains: "</environment_details>\n\nnext"}, Events: text("done")},
	}}
	prov, err := provider.New(provider.Config{Name: "replay", Replay: tr})
	if err != nil {
		t.Fatal(err)
	}
	envCalls, instrCalls, rule := 0, 0, "Rule one."
	s, err := New(Config{
		ID: "s-test", Mode: "yolo", MaxTurns: 2, Provider: prov,
		Host: testHost{
			environment: func(context.Context) prompt.Environment {
				envCalls++
				return prompt.Environment{Git: &prompt.GitState{Branch: "main"}}
			},
			instructions: func() string { instrCalls++; return rule },
			openBuffers:  func() []string { return []string{"a.go"} },
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Yolo mode asks the model again after a reply without a call: two
	// requests in one turn, then the request limit.
	if stop, err := s.Prompt(context.Background(), "first"); err != nil || stop != StopMaxTurnRequests {
		t.Fatalf("first turn: %v %v", stop, err)
	}
	if envCalls != 1 || instrCalls != 1 {
		t.Errorf("one turn of two requests asked for the environment %d times and the instructions %d times, want once each", envCalls, instrCalls)
	}
	first := s.History()[0]
	if len(first.Parts) != 2 || !prompt.IsTurnContext(first.Parts[0].Text) || first.Parts[1].Text != "first" {
		t.Errorf("the turn's user message = %+v, want the context block then the text", first.Parts)
	}

	rule = "Rule two."
	if err := s.SetMode("act"); err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(context.Background(), "next"); err != nil || stop != StopEndTurn {
		t.Fatalf("second turn: %v %v", stop, err)
	}
	if envCalls != 2 || instrCalls != 2 {
		t.Errorf("after two turns: environment %d, instructions %d", envCalls, instrCalls)
	}
	if h := s.History(); !strings.Contains(h[0].Parts[0].Text, "Git branch: main") {
		t.Errorf("the first turn's block changed in the history: %+v", h[0].Parts)
	}
}
