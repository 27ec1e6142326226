package session

import (
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/wire"
)

// TestReplayEndsWithTotals: a loaded session's replay ends with its usage
// totals as restored from its history, so a client's meter shows what the
// session used so far; a session that used nothing sends no usage.
func TestReplayEndsWithTotals(t *testing.T) {
	prov, err := provider.New(provider.Config{Name: "replay", Replay: &provider.Transcript{Replies: []provider.ReplayReply{{Events: []provider.ReplayEvent{{Text: "x"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		acp  bool
		used provider.Usage
	}{
		{"lsp", false, provider.Usage{InputTokens: 1830, OutputTokens: 42}},
		{"acp", true, provider.Usage{InputTokens: 1830, OutputTokens: 42}},
		{"no usage", false, provider.Usage{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ups []wire.SessionUpdate
			s, err := New(Config{ID: "s-totals", Mode: "act", ACP: c.acp, Provider: prov, Host: testHost{update: func(u wire.SessionUpdate) { ups = append(ups, u) }}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Restore(Resumed{Usage: c.used})
			s.Replay([]Record{{Type: RecordMessage, Message: &provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Text: "hi"}}}}})
			var last wire.SessionUpdate
			if len(ups) > 0 {
				last = ups[len(ups)-1]
			}
			switch u := last.(type) {
			case wire.ClineUsageUpdate:
				if c.used == (provider.Usage{}) || c.acp || u.Session.InputTokens != 1830 || u.Session.OutputTokens != 42 || u.InputTokens != 0 {
					t.Errorf("replay ended with %+v", u)
				}
			case wire.UsageUpdate:
				if !c.acp || c.used == (provider.Usage{}) {
					t.Errorf("replay ended with %+v", u)
				}
			default:
				if c.used != (provider.Usage{}) {
					t.Errorf("replay did not end with the totals: %T %+v", last, last)
				}
			}
		})
	}
}
