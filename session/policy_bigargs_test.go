package session

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

// bigEditCall is an editor call with about 2n bytes of arguments, as an
// edit of thousands of lines has.
func bigEditCall(n int) PolicyCall {
	text := strings.Repeat("\tvalue := compute(1, \"the quick brown fox\")\n", n/44+1)
	args, _ := json.Marshal(map[string]string{"path": "big.go", "old_text": text, "new_text": strings.ReplaceAll(text, "compute", "evaluate")})
	return PolicyCall{Tool: tools.NameEditor, Kind: tools.KindEdit, Args: args, Mode: "yolo", Root: "/w"}
}

// TestExplainLeavesBigArgumentsAlone: judging a call that no rule with
// an argument pattern applies to does not decode and re-encode its
// arguments (twice each, for the canonical and the raw forms), which for
// an edit of megabytes cost more than the edit. It counts the bytes
// Explain allocates, which do not depend on the machine's speed.
func TestExplainLeavesBigArgumentsAlone(t *testing.T) {
	c := bigEditCall(1 << 20)
	for _, cfg := range []PolicyConfig{
		{Approvals: Approvals{Edit: Allow}},
		// A rule for another tool and one with no pattern need no
		// arguments either.
		{Approvals: Approvals{Edit: Ask}, Rules: []Rule{
			{Tool: "run_commands", ArgPattern: "rm ", Decision: Deny},
			{Tool: tools.NameEditor, Decision: Allow},
		}},
	} {
		p, err := NewPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := p.Explain(c)
		runtime.ReadMemStats(&after)
		if v.Decision != Allow {
			t.Fatalf("%+v: decision %s (%s), want allow", cfg, v.Decision, v.Reason)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(c.Args))/8 {
			t.Errorf("%+v: Explain allocated %d bytes for %d bytes of arguments", cfg, n, len(c.Args))
		}
	}
}

// TestExplainStillReadsArgumentsForPatterns: a rule whose pattern reads
// the arguments still sees them, canonical (paths as the workspace sees
// them) for an allow, raw as well for a deny.
func TestExplainStillReadsArgumentsForPatterns(t *testing.T) {
	c := bigEditCall(1 << 20)
	c.Mode = "act"
	c.Args, _ = json.Marshal(map[string]string{"path": "./docs/../big.go", "old_text": "a", "new_text": "b"})
	for _, tc := range []struct {
		rule Rule
		want Decision
	}{
		{Rule{Tool: tools.NameEditor, ArgPattern: `"path":"big\.go"`, Decision: Allow}, Allow},
		{Rule{Tool: tools.NameEditor, ArgPattern: `"path":"\./docs/`, Decision: Allow}, Ask},
		{Rule{Tool: tools.NameEditor, ArgPattern: `"path":"\./docs/`, Decision: Deny}, Deny},
		{Rule{Tool: tools.NameEditor, ArgPattern: `"old_text":"a"`, Decision: Deny}, Deny},
	} {
		p, err := NewPolicy(PolicyConfig{Approvals: Approvals{Edit: Ask}, Rules: []Rule{tc.rule}})
		if err != nil {
			t.Fatal(err)
		}
		if v := p.Explain(c); v.Decision != tc.want {
			t.Errorf("rule %+v: decision %s (%s), want %s", tc.rule, v.Decision, v.Reason, tc.want)
		}
	}
}

// BenchmarkExplainBigEdit is the policy's verdict on an editor call with
// 0.9 MB of arguments (bench/edits' case 1), no argument rule applying.
func BenchmarkExplainBigEdit(b *testing.B) {
	c := bigEditCall(450 << 10)
	p, _ := NewPolicy(PolicyConfig{Approvals: Approvals{Edit: Allow}})
	b.ReportAllocs()
	for b.Loop() {
		p.Explain(c)
	}
}
