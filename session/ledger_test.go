package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/wire"
)

// ledgerSession is a session on a real folder whose read_files,
// editor and run_commands act as the real ones report: a read names its
// path, an edit writes the file, a command fails with exit code 1.
func ledgerSession(t *testing.T, m *scriptModel, instr func() string) (*Session, string, *[]wire.SessionUpdate) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package a\n"), 0o644)
	files, err := toolstest.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(Meta{SessionID: "s1", Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	policy, err := NewPolicy(PolicyConfig{Approvals: Approvals{Edit: Allow, Read: Allow, Execute: Allow}})
	if err != nil {
		t.Fatal(err)
	}
	impls := map[string]tools.BuildFunc{
		tools.NameReadFiles: tools.Typed(func(a struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
		}) (tools.Invocation, error) {
			return funcInvocation{desc: tools.Description{Title: "Read", Kind: tools.KindRead, Locations: []tools.Location{{Path: a.Files[0].Path}}},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					return tools.Result{Content: strings.Repeat("x", 8000)}, nil
				}}, nil
		}),
		tools.NameEditor: tools.Typed(func(a struct {
			Path string `json:"path"`
		}) (tools.Invocation, error) {
			return funcInvocation{desc: tools.Description{Title: "Edit", Kind: tools.KindEdit, Locations: []tools.Location{{Path: a.Path}}},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					err := os.WriteFile(filepath.Join(dir, a.Path), []byte("package a\n\nfunc A() {}\n\nfunc B() {}\n"), 0o644)
					return tools.Result{Content: "Edited " + a.Path, Edits: []tools.FileEdit{{Path: a.Path}}}, err
				}}, nil
		}),
		tools.NameRunCommands: tools.Typed(func(a struct {
			Commands []string `json:"commands"`
		}) (tools.Invocation, error) {
			return funcInvocation{desc: tools.Description{Title: "Run", Kind: tools.KindExecute, Command: a.Commands[0]},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					return tools.Result{Content: "$ " + a.Commands[0] + "\nFAIL parser\n[exit code 1, 0.20s]\n", IsError: true,
						Commands: []tools.CommandOutcome{{Command: a.Commands[0], Status: "exit code 1, 0.20s"}}}, nil
				}}, nil
		}),
	}
	var mu sync.Mutex
	var updates []wire.SessionUpdate
	s, err := New(Config{ID: "s1", Mode: "act", Provider: m, Impls: impls, Policy: policy, Log: log, MaxTurns: 200, ContextWindow: 20000,
		Files: files, Host: testHost{instructions: instr,
			ask:    func(context.Context, string, []string) (string, bool, error) { return "", false, nil },
			update: func(u wire.SessionUpdate) { mu.Lock(); updates = append(updates, u); mu.Unlock() }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, &updates
}

// TestWhatSurvivesACompaction reads the first request after a
// compaction at the model's end: the user's latest request verbatim, the
// instructions as they are now (changed since the turn began, so re-read,
// not summarised) in the system prompt, the plan, a ledger from the
// workspace (the files read and changed with their line counts now, the
// failed command with its exit code, the question left open) and the
// last assistant message; the user is told of the compaction, and the
// replaced turns stay in the history file.
func TestWhatSurvivesACompaction(t *testing.T) {
	const request = "Fix the parser in pkg/a.go.\nKeep the public API exactly as it is."
	const lastWords = "The test fails in the parser; I will read big.txt again to see why."
	var instrMu sync.Mutex
	instr := "AGENTS.md: version one of the rules"
	m := &scriptModel{summary: func(provider.Request) (string, error) { return "## Task\nfix things", nil }}
	m.reply = func(n int, req provider.Request) ([]provider.Event, error) {
		id := fmt.Sprintf("c%d", n)
		switch n {
		case 0:
			return callEvents(id, tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "big.txt"}}}), nil
		case 1:
			return callEvents(id, tools.NameEditor, map[string]any{"path": "pkg/a.go", "old_text": "a", "new_text": "b"}), nil
		case 2:
			return callEvents(id, tools.NameRunCommands, map[string]any{"commands": []any{"go test ./pkg/"}}), nil
		case 3:
			return callEvents(id, tools.NameAskQuestion, map[string]any{"question": "Which parser version should stay supported?", "options": []any{"v1", "v2"}}), nil
		case 4:
			// The rules change on disk mid-turn.
			instrMu.Lock()
			instr = "AGENTS.md: version two of the rules"
			instrMu.Unlock()
			return callEvents(id, tools.NameUpdatePlan, map[string]any{"entries": []any{
				map[string]any{"content": "fix the parser", "status": "in_progress"}}}), nil
		case 5:
			evs := callEvents(id, tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "big.txt"}}})
			return append([]provider.Event{{Kind: provider.EventText, Text: lastWords}}, evs...), nil
		}
		if isFacts(req.Messages[0]) {
			return textEvents("Done."), nil
		}
		return callEvents(id, tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "big.txt"}}}), nil
	}
	s, _, updates := ledgerSession(t, m, func() string { instrMu.Lock(); defer instrMu.Unlock(); return instr })
	if stop, err := s.Prompt(t.Context(), request); err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	var after *provider.Request
	for _, r := range m.requests() {
		if len(r.Messages) > 0 && isFacts(r.Messages[0]) {
			after = &r
			break
		}
	}
	if after == nil {
		t.Fatal("no request after a compaction")
	}
	facts := messageText(after.Messages[0])
	for _, want := range []string{
		"<request>\n" + request + "\n</request>",
		"- [in_progress] fix the parser",
		"- pkg/a.go: changed, 5 lines",
		"- big.txt: read, 3 lines",
		"- `go test ./pkg/`: exit code 1, 0.20s",
		"Which parser version should stay supported? (the user dismissed it without answering)",
		"<message>\n" + lastWords + "\n</message>",
	} {
		if !strings.Contains(facts, want) {
			t.Errorf("the first request after the compaction lacks %q; its facts:\n%s", want, facts)
		}
	}
	if !strings.Contains(after.System, "version two of the rules") || strings.Contains(after.System, "version one") {
		t.Errorf("the system prompt after the compaction does not hold the instructions as they are now")
	}
	told := false
	for _, u := range *updates {
		if c, ok := u.(wire.Compaction); ok {
			told = true
			if c.HistoryFile != s.cfg.Log.Path() {
				t.Errorf("the compaction update names %q as the history file, want %q", c.HistoryFile, s.cfg.Log.Path())
			}
		}
	}
	if !told {
		t.Error("the user was not told of the compaction")
	}
	// The replaced turns stay in the history file.
	s.flush()
	_, recs, err := s.cfg.Log.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	r := Resume(Meta{}, recs)
	if r.Messages <= len(r.History) || !strings.Contains(fmt.Sprint(recs[1].Message), "Fix the parser") {
		t.Errorf("history file: %d messages, view %d", r.Messages, len(r.History))
	}
	if len(r.Read) != 1 || r.Read[0] != "big.txt" {
		t.Errorf("files read, reloaded: %v", r.Read)
	}
}
