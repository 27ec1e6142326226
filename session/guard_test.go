//go:build linux

package session

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
)

// askLog is an approver that records what it was asked and answers from
// a list (the last answer repeats); with no answers it rejects.
type askLog struct {
	mu      sync.Mutex
	asked   []ApprovalRequest
	answers []ApprovalChoice
}

func (a *askLog) Approve(_ context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if len(a.answers) == 0 {
		return ApprovalOutcome{Choice: RejectOnce}, nil
	}
	c := a.answers[0]
	if len(a.answers) > 1 {
		a.answers = a.answers[1:]
	}
	return ApprovalOutcome{Choice: c}, nil
}

func (a *askLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// guardSession is a session on a temporary folder with the real
// workspace tools, /bin/sh for commands, and the approver given.
func guardSession(t *testing.T, mode string, cfg PolicyConfig, ap Approver) (*Session, string) {
	t.Helper()
	root := t.TempDir()
	files, err := toolstest.New(root)
	if err != nil {
		t.Fatal(err)
	}
	bg := tools.NewBackground(0)
	policy, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	impls := tools.WorkspaceTools(files, tools.CommandShell("/bin/sh"), tools.BackgroundCommands(bg))
	maps.Copy(impls, tools.EditTools(files))
	s, err := New(Config{ID: "s1", CWD: root, Mode: mode, Impls: impls,
		Files: files, Policy: policy, Approver: ap, Background: bg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, root
}

// TestPlanModeRefusesEveryArgumentShape: plan mode's read-only rule holds
// whatever shape run_commands' arguments take on their way to the runner
// (validation coerces a bare string, a JSON list inside a string, string
// booleans; the XML tool-call path sends every value as a string; Go's
// decoder takes the last of duplicated keys). Each is refused before
// anyone is asked, and nothing runs. Every string shape ran in plan mode,
// asking the user to approve touch, while the guard decoded the raw
// arguments itself.
func TestPlanModeRefusesEveryArgumentShape(t *testing.T) {
	for _, args := range []string{
		`{"commands":["touch made"]}`,
		`{"commands":"touch made"}`,
		`{"commands":" touch made "}`,
		`{"commands":"[\"touch made\"]"}`,
		`{"commands":"[\"ls\", \"touch made\"]"}`,
		`{"commands":["touch made"],"background":true}`,
		`{"commands":"touch made","background":true}`,
		`{"commands":"touch made","background":"true"}`,
		`{"commands":"touch made","timeout":"5"}`,
		`{"commands":"touch made","extra":{"commands":["ls"]}}`,
		`{"commands":["ls"],"commands":["touch made"]}`,
		`{"commands":["ls"],"commands":"touch made"}`,
		`{"commands":"ls","commands":"[\"touch made\"]"}`,
		`{"commands":["ls"],"Commands":["touch made"]}`,
		`{"commands":["ls"],"COMMANDS":"touch made"}`,
		`{"commands":["ls"],"commandſ":["touch made"]}`,
		`{"commands":[["touch made"]]}`,
		`{"commands":{"0":"touch made"}}`,
		`{"commands":"echo hi > made"}`,
		`{"commands":"ls; touch made"}`,
		`{"commands":"ls\ntouch made"}`,
		`{"comm\u0061nds":"touch made"}`,
		`{"commands":"[\"[\\\"touch made\\\"]\"]"}`,
		`{"commands":["touch made"],"background":"yes"}`,
		`{"commands":null}`,
		`{"commands":[]}`,
		`{"commands":[""]}`,
	} {
		t.Run(args, func(t *testing.T) {
			ap := &askLog{answers: []ApprovalChoice{AllowOnce}}
			s, root := guardSession(t, tools.ModePlan, PolicyConfig{}, ap)
			r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(args))
			if !r.Result.IsError || r.State != StateError {
				t.Errorf("not refused: %s %+v", r.State, r.Result)
			}
			if n := ap.count(); n != 0 {
				t.Errorf("the user was asked %d times about a call plan mode refuses", n)
			}
			if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
				t.Errorf("the command ran in plan mode")
			}
		})
	}
}

// TestPlanModeRunsReadOnlyShapes: the guard judges the commands the
// runner will run, so a read-only command in any shape still runs.
func TestPlanModeRunsReadOnlyShapes(t *testing.T) {
	for _, args := range []string{
		`{"commands":"ls"}`,
		`{"commands":"[\"ls\"]"}`,
		`{"commands":["touch made"],"commands":["ls"]}`,
	} {
		ap := &askLog{answers: []ApprovalChoice{AllowOnce}}
		s, _ := guardSession(t, tools.ModePlan, PolicyConfig{}, ap)
		r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(args))
		if r.Result.IsError || !strings.Contains(r.Result.Content, "$ ls") {
			t.Errorf("%s: %s %+v", args, r.State, r.Result)
		}
	}
}

// TestPlanModeRefusesEdits: an edit that reaches plan mode's tool path
// (every editor tool is outside the mode's set) is refused, naming the
// mode, and never asked about.
func TestPlanModeRefusesEdits(t *testing.T) {
	ap := &askLog{answers: []ApprovalChoice{AllowOnce}}
	s, root := guardSession(t, tools.ModePlan, PolicyConfig{Approvals: Approvals{Edit: Allow}}, ap)
	r := s.CallTool(t.Context(), tools.NameWriteToFile, []byte(`{"path":"made","content":"x"}`))
	if !r.Result.IsError || !strings.Contains(r.Result.Content, "plan mode") {
		t.Errorf("write_to_file in plan mode: %s %+v", r.State, r.Result)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err == nil || ap.count() != 0 {
		t.Errorf("the file was written or the user asked (%d)", ap.count())
	}
}

// TestRulesJudgeCoercedCommands: a configured deny matches the commands
// the runner will run, not the raw JSON they came in; "rm -r dir" sent as
// a bare string or a JSON list inside a string went through a deny of
// ^rm, which was matched against the raw arguments.
func TestRulesJudgeCoercedCommands(t *testing.T) {
	for _, args := range []string{
		`{"commands":["rm -r dir"]}`,
		`{"commands":"rm -r dir"}`,
		`{"commands":"[\"rm -r dir\"]"}`,
		`{"commands":"rm -r dir","background":true}`,
		`{"commands":["ls"],"commands":"rm -r dir"}`,
		`{"commands":"ls && rm -r dir"}`,
		`{"commands":"FORCE=1 rm -r dir"}`,
		`{"commands":"env rm -r dir"}`,
		`{"commands":"timeout 5 rm -r dir"}`,
		`{"commands":"echo $(rm -r dir)"}`,
		`{"commands":"sh -c 'rm -r dir'"}`,
		`{"commands":"eval 'rm -r dir'"}`,
	} {
		t.Run(args, func(t *testing.T) {
			ap := &askLog{answers: []ApprovalChoice{AllowOnce}}
			s, root := guardSession(t, tools.ModeAct, PolicyConfig{
				Approvals: Approvals{Execute: Allow},
				Rules:     []Rule{{Tool: tools.NameRunCommands, ArgPattern: "^rm ", Decision: Deny}},
			}, ap)
			os.Mkdir(filepath.Join(root, "dir"), 0o755)
			r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(args))
			if !r.Result.IsError || !strings.Contains(r.Result.Content, "denies") {
				t.Errorf("not denied: %s %+v", r.State, r.Result)
			}
			if _, err := os.Stat(filepath.Join(root, "dir")); err != nil {
				t.Errorf("the command ran: %v", err)
			}
		})
	}
}

// TestAlwaysAllowOfABareStringIsScoped: "always allow" on a command sent
// as a bare string covers that command's program and subcommand, not
// every command: it was stored with no pattern, and touch then ran
// without asking.
func TestAlwaysAllowOfABareStringIsScoped(t *testing.T) {
	for _, first := range []string{`{"commands":"echo one"}`, `{"commands":"[\"echo one\"]"}`} {
		t.Run(first, func(t *testing.T) {
			ap := &askLog{answers: []ApprovalChoice{AllowAlways, RejectOnce}}
			s, root := guardSession(t, tools.ModeAct, PolicyConfig{}, ap)
			if r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(first)); r.Result.IsError {
				t.Fatalf("first call: %+v", r.Result)
			}
			if r := s.CallTool(t.Context(), tools.NameRunCommands, []byte(`{"commands":"echo one two"}`)); r.Result.IsError || ap.count() != 1 {
				t.Errorf("the same program and subcommand was asked about again (%d) or failed: %+v", ap.count(), r.Result)
			}
			for _, next := range []string{`{"commands":"touch made"}`, `{"commands":"echo one; touch made"}`, `{"commands":"echo one $(touch made)"}`} {
				before := ap.count()
				s.CallTool(t.Context(), tools.NameRunCommands, []byte(next))
				if ap.count() != before+1 {
					t.Errorf("%s ran without asking after always allow of %s", next, first)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
				t.Errorf("touch ran")
			}
		})
	}
}

// TestAlwaysAllowOfAnEditIsTheFile: "always allow" on an edit covers the
// file the user saw, not the tool: after allowing docs/a.txt, a write of
// src/b.txt went through unasked.
func TestAlwaysAllowOfAnEditIsTheFile(t *testing.T) {
	ap := &askLog{answers: []ApprovalChoice{AllowAlways, RejectOnce}}
	s, root := guardSession(t, tools.ModeAct, PolicyConfig{}, ap)
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	for i, content := range []string{"one\n", "two\n"} {
		r := s.CallTool(t.Context(), tools.NameWriteToFile, []byte(`{"path":"docs/a.txt","content":"`+strings.TrimSpace(content)+`"}`))
		if r.Result.IsError || ap.count() != 1 {
			t.Fatalf("write %d of docs/a.txt: asked %d times, %+v", i+1, ap.count(), r.Result)
		}
	}
	if got := ap.asked[0].Always; got != "edits of docs/a.txt" {
		t.Errorf("the always option names %q, want the file", got)
	}
	for _, args := range []string{`{"path":"src/b.txt","content":"x"}`, `{"path":"docs/new.txt","content":"x"}`} {
		before := ap.count()
		s.CallTool(t.Context(), tools.NameWriteToFile, []byte(args))
		if ap.count() != before+1 {
			t.Errorf("%s went through unasked after always allowing docs/a.txt", args)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "src", "b.txt")); err == nil {
		t.Error("src/b.txt was written")
	}
}

// TestRulesSeePathsAsTheWorkspaceDoes: a rule's pattern on an edit's
// arguments sees its paths cleaned and relative to the session's folder,
// however the model spelt them; a deny of "path":"secrets/ was passed by
// ./secrets/x, docs/../secrets/x and the absolute path, and an allow of
// "path":"docs/ let docs/../secrets/x through unasked.
func TestRulesSeePathsAsTheWorkspaceDoes(t *testing.T) {
	spellings := func(root string) []string {
		return []string{"secrets/x.txt", "./secrets/x.txt", "secrets//x.txt", "docs/../secrets/x.txt",
			filepath.Join(root, "secrets", "x.txt"), "file://" + filepath.Join(root, "secrets", "x.txt")}
	}
	t.Run("deny", func(t *testing.T) {
		ap := &askLog{answers: []ApprovalChoice{AllowOnce}}
		s, root := guardSession(t, tools.ModeAct, PolicyConfig{
			Approvals: Approvals{Edit: Allow},
			Rules:     []Rule{{Tool: tools.NameWriteToFile, ArgPattern: `"path":"secrets/`, Decision: Deny}},
		}, ap)
		os.Mkdir(filepath.Join(root, "secrets"), 0o755)
		for _, p := range spellings(root) {
			args, _ := json.Marshal(map[string]string{"path": p, "content": "x"})
			r := s.CallTool(t.Context(), tools.NameWriteToFile, args)
			if !r.Result.IsError || !strings.Contains(r.Result.Content, "denies") {
				t.Errorf("%s: not denied: %s %+v", p, r.State, r.Result)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "secrets", "x.txt")); err == nil {
			t.Error("the file was written")
		}
	})
	t.Run("allow", func(t *testing.T) {
		ap := &askLog{}
		s, root := guardSession(t, tools.ModeAct, PolicyConfig{
			Approvals: Approvals{Edit: Ask},
			Rules:     []Rule{{Tool: tools.NameWriteToFile, ArgPattern: `"path":"docs/`, Decision: Allow}},
		}, ap)
		os.Mkdir(filepath.Join(root, "secrets"), 0o755)
		os.Mkdir(filepath.Join(root, "docs"), 0o755)
		for _, p := range []string{"docs/../secrets/x.txt", "docs/./../secrets/x.txt"} {
			args, _ := json.Marshal(map[string]string{"path": p, "content": "x"})
			s.CallTool(t.Context(), tools.NameWriteToFile, args)
		}
		if len(ap.asked) != 2 {
			t.Errorf("asked %d times, want 2: the allow of docs/ covered a path outside it", len(ap.asked))
		}
		if _, err := os.Stat(filepath.Join(root, "secrets", "x.txt")); err == nil {
			t.Error("the file was written")
		}
		args, _ := json.Marshal(map[string]string{"path": "./docs/a.txt", "content": "x"})
		if r := s.CallTool(t.Context(), tools.NameWriteToFile, args); r.Result.IsError || len(ap.asked) != 2 {
			t.Errorf("./docs/a.txt was not allowed by the rule: %+v (asked %d)", r.Result, len(ap.asked))
		}
	})
}
