package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/wire"
)

// recordingApprover rejects every call and counts the questions.
type recordingApprover struct {
	mu    sync.Mutex
	asked []string
}

func (a *recordingApprover) Approve(_ context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Tool)
	return ApprovalOutcome{Choice: RejectOnce}, nil
}

// parityArgs are plausible arguments for each built-in tool.
var parityArgs = map[string]any{
	tools.NameReadFiles:           map[string]any{"files": []any{map[string]any{"path": "a.txt"}}},
	tools.NameListFiles:           map[string]any{"path": "."},
	tools.NameSearchCodebase:      map[string]any{"queries": []string{"one"}},
	tools.NameListCodeDefinitions: map[string]any{"path": "."},
	tools.NameRunCommands:         map[string]any{"commands": []string{"echo hi"}},
	tools.NameEditor:              map[string]any{"path": "a.txt", "old_text": "one", "new_text": "two"},
	tools.NameReplaceInFile:       map[string]any{"path": "a.txt", "diff": "------- SEARCH\none\n=======\ntwo\n+++++++ REPLACE\n"},
	tools.NameApplyPatch:          map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"},
	tools.NameWriteToFile:         map[string]any{"path": "new.txt", "content": "x\n"},
	tools.NameFetchWebContent:     map[string]any{"requests": []any{map[string]any{"url": "http://127.0.0.1:1/", "prompt": "x"}}},
	tools.NameUpdatePlan:          map[string]any{"entries": []any{map[string]any{"content": "a", "priority": "high", "status": "pending"}}},
	tools.NameUseSkill:            map[string]any{"skill": "none"},
	tools.NameSubmitAndExit:       map[string]any{"summary": "done", "verified": true},
	tools.NamePlanModeRespond:     map[string]any{"response": "the plan"},
	tools.NameAskQuestion:         map[string]any{"question": "which?", "options": []string{"a", "b"}},
	tools.NameSpawnAgent:          map[string]any{"prompt": "look"},
	"no_such_tool":                map[string]any{},
}

// timing is the part of a command's result that differs between runs.
var timing = regexp.MustCompile(`, [0-9.]+(ns|µs|ms|s)\]`)

// paritySession is a session on a fresh copy of the test workspace whose
// model, when prompted, makes one call and then ends the turn.
func paritySession(t *testing.T, mode string, call *provider.ToolCall) (*Session, *recordingApprover, *[]wire.SessionUpdate) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	files, err := toolstest.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr := &provider.Transcript{Replies: []provider.ReplayReply{{Events: []provider.ReplayEvent{{Text: "unused"}}}}}
	if call != nil {
		tr.Replies = []provider.ReplayReply{
			{Events: []provider.ReplayEvent{{ToolCall: call}}},
			{Events: []provider.ReplayEvent{{Text: "ok"}}},
			{Events: []provider.ReplayEvent{{ToolCall: &provider.ToolCall{ID: "end", Name: tools.NameSubmitAndExit, Args: json.RawMessage(`{"summary":"x","verified":true}`)}}}},
		}
	}
	prov, err := provider.New(provider.Config{Name: "replay", Replay: tr})
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := NewPolicy(PolicyConfig{})
	impls := tools.EditTools(files)
	for name, b := range tools.WorkspaceTools(files) {
		impls[name] = b
	}
	var mu sync.Mutex
	var ups []wire.SessionUpdate
	ap := &recordingApprover{}
	s, err := New(Config{ID: "s-parity", CWD: dir, Mode: mode, Provider: prov, Impls: impls, Files: files,
		Policy: policy, Approver: ap, MaxTurns: 3,
		Host: testHost{update: func(u wire.SessionUpdate) { mu.Lock(); ups = append(ups, u); mu.Unlock() }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, ap, &ups
}

// TestModelAndEditorCallsDecideAlike: for every mode and every built-in
// tool, a call the model makes and the same call from the editor take one
// path: the same refusal or approval question, the same result.
func TestModelAndEditorCallsDecideAlike(t *testing.T) {
	for _, mode := range tools.Modes() {
		for name, args := range parityArgs {
			t.Run(mode+"/"+name, func(t *testing.T) {
				raw, _ := json.Marshal(args)
				call := provider.ToolCall{ID: "c1", Name: name, Args: raw}

				ms, mAsk, mUps := paritySession(t, mode, &call)
				if _, err := ms.Prompt(context.Background(), "go"); err != nil {
					t.Fatalf("model turn: %v", err)
				}
				var model *provider.ToolResult
				for _, m := range ms.History() {
					for _, p := range m.Parts {
						if p.Kind == provider.PartToolResult && p.Result.CallID == "c1" {
							model = p.Result
						}
					}
				}
				if model == nil {
					t.Fatalf("the model's call got no result; updates %v", *mUps)
				}

				es, eAsk, _ := paritySession(t, mode, nil)
				r := es.CallTool(context.Background(), name, raw)
				editorErr := r.Result.IsError || r.State != StateSuccess

				if model.IsError != editorErr {
					t.Errorf("model call error=%v, editor call error=%v\nmodel: %s\neditor: %s", model.IsError, editorErr, model.Content, r.Result.Content)
				}
				if a, b := timing.ReplaceAllString(model.Content, "]"), timing.ReplaceAllString(r.Result.Content, "]"); a != b {
					t.Errorf("results differ:\nmodel:  %s\neditor: %s", a, b)
				}
				if fmt.Sprint(mAsk.asked) != fmt.Sprint(eAsk.asked) {
					t.Errorf("asked: model %v, editor %v", mAsk.asked, eAsk.asked)
				}
			})
		}
	}
}
