package wire_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/shared"
	"github.com/cline-ls/cline-ls/wire"
)

func ptr[T any](v T) *T { return &v }

// updates are one example of every session update, with the bytes the
// map builders the types replaced wrote for the same value (members
// sorted, HTML characters unescaped). acp marks the ACP schema's
// variants; the others are the LSP dialect's own.
var updates = []struct {
	name string
	u    wire.SessionUpdate
	want string
	acp  bool
}{
	{"agent message", wire.AgentMessageChunk{Content: wire.TextBlock{Text: "a <b> & c"}},
		`{"content":{"text":"a <b> & c","type":"text"},"sessionUpdate":"agent_message_chunk"}`, true},
	{"agent thought", wire.AgentThoughtChunk{Content: wire.TextBlock{Text: "hm"}},
		`{"content":{"text":"hm","type":"text"},"sessionUpdate":"agent_thought_chunk"}`, true},
	{"user message", wire.UserMessageChunk{Content: wire.TextBlock{Text: "fix it"}},
		`{"content":{"text":"fix it","type":"text"},"sessionUpdate":"user_message_chunk"}`, true},
	{"tool call", wire.ToolCall{ToolCallID: "c1", Title: "Read a.txt", Kind: wire.KindRead, Status: wire.StatusPending,
		Locations: []wire.Location{{Path: "/w/a.txt", Line: 3}}, RawInput: map[string]any{"files": []any{map[string]any{"path": "a.txt"}}}},
		`{"kind":"read","locations":[{"path":"/w/a.txt","line":3}],"rawInput":{"files":[{"path":"a.txt"}]},"sessionUpdate":"tool_call","status":"pending","title":"Read a.txt","toolCallId":"c1"}`, true},
	{"tool call running", wire.ToolCallUpdate{ToolCallID: "c2", Status: wire.StatusInProgress, Title: "Edit a.txt", Kind: wire.KindEdit,
		Locations: []wire.Location{}},
		`{"kind":"edit","locations":[],"sessionUpdate":"tool_call_update","status":"in_progress","title":"Edit a.txt","toolCallId":"c2"}`, true},
	{"tool call output", wire.ToolCallUpdate{ToolCallID: "c3", Status: wire.StatusInProgress, Content: []wire.ToolCallContent{wire.Text("line 1\n")}},
		`{"content":[{"content":{"text":"line 1\n","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c3"}`, true},
	{"tool call end", wire.ToolCallUpdate{ToolCallID: "c2", Status: wire.StatusCompleted, RawOutput: &wire.ToolOutput{},
		Content: []wire.ToolCallContent{wire.Text("Edited"), wire.Diff("/w/a.txt", "a\n", "b\n", true), wire.Diff("/w/n.txt", "", "new\n", false)}},
		`{"content":[{"content":{"text":"Edited","type":"text"},"type":"content"},{"newText":"b\n","oldText":"a\n","path":"/w/a.txt","type":"diff"},{"newText":"new\n","oldText":null,"path":"/w/n.txt","type":"diff"}],"rawOutput":{"isError":false},"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c2"}`, true},
	{"tool call failed", wire.ToolCallUpdate{ToolCallID: "c4", Status: wire.StatusFailed, RawOutput: &wire.ToolOutput{IsError: true},
		Content: []wire.ToolCallContent{wire.Text("no match")}},
		`{"content":[{"content":{"text":"no match","type":"text"},"type":"content"}],"rawOutput":{"isError":true},"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"c4"}`, true},
	{"plan", wire.Plan{Entries: []wire.PlanEntry{{Content: "read", Priority: wire.PriorityHigh, Status: wire.PlanCompleted}, {Content: "edit", Priority: wire.PriorityLow, Status: wire.PlanPending}}},
		`{"entries":[{"content":"read","priority":"high","status":"completed"},{"content":"edit","priority":"low","status":"pending"}],"sessionUpdate":"plan"}`, true},
	{"mode", wire.CurrentModeUpdate{CurrentModeID: "plan"},
		`{"currentModeId":"plan","sessionUpdate":"current_mode_update"}`, true},
	{"commands", wire.AvailableCommandsUpdate{AvailableCommands: []wire.AvailableCommand{{Name: "compact", Description: "Compact the history", Input: &wire.CommandInput{Hint: "why"}}}},
		`{"availableCommands":[{"description":"Compact the history","input":{"hint":"why"},"name":"compact"}],"sessionUpdate":"available_commands_update"}`, true},
	{"config options", wire.ConfigOptionUpdate{ConfigOptions: []wire.ConfigOption{{ID: "mode", Name: "Mode", Category: "mode", Type: "select", CurrentValue: "act",
		Options: []wire.ConfigValue{{Value: "plan", Name: "Plan"}, {Value: "act", Name: "Act", Description: "edits"}}}}},
		`{"configOptions":[{"category":"mode","currentValue":"act","id":"mode","name":"Mode","options":[{"name":"Plan","value":"plan"},{"description":"edits","name":"Act","value":"act"}],"type":"select"}],"sessionUpdate":"config_option_update"}`, true},
	{"usage (ACP)", wire.UsageUpdate{Used: 10, Size: 200000, Cost: &wire.Cost{Amount: 0.25, Currency: "USD"}},
		`{"cost":{"amount":0.25,"currency":"USD"},"sessionUpdate":"usage_update","size":200000,"used":10}`, true},
	{"usage (ACP, unpriced)", wire.UsageUpdate{Used: 10, Size: 200000},
		`{"sessionUpdate":"usage_update","size":200000,"used":10}`, true},
	{"usage (LSP)", wire.ReplyUsage(wire.Tokens{InputTokens: 5, OutputTokens: 3, CacheReadTokens: 2, CostUSD: ptr(0.0)},
		wire.Tokens{InputTokens: 5, OutputTokens: 3}, wire.Tokens{InputTokens: 50, OutputTokens: 30, CostUSD: ptr(0.5)},
		wire.ContextUse{Used: 10, Size: 200}),
		`{"cacheReadTokens":2,"context":{"size":200,"used":10},"costUsd":0,"inputTokens":5,"outputTokens":3,"session":{"costUsd":0.5,"inputTokens":50,"outputTokens":30},"sessionUpdate":"usage_update","turn":{"inputTokens":5,"outputTokens":3}}`, false},
	{"compaction", wire.Compaction{Before: 100, After: 10, Summary: "so far"},
		`{"after":10,"before":100,"sessionUpdate":"compaction","summary":"so far"}`, false},
}

// TestUpdatesEncodeAsBefore: every variant writes the bytes its map
// builder wrote, with its discriminator.
func TestUpdatesEncodeAsBefore(t *testing.T) {
	for _, c := range updates {
		b, err := wire.Marshal(c.u)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(b) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, b, c.want)
		}
	}
}

// TestUpdatesMatchTheSchema: every ACP variant is a valid SessionUpdate,
// alone and inside session/update's params; the LSP dialect's own are not
// (they are never sent to an ACP client).
func TestUpdatesMatchTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	for _, c := range updates {
		b, _ := wire.Marshal(c.u)
		err := schema.Validate("SessionUpdate", b)
		switch {
		case c.acp && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.acp && err == nil:
			t.Errorf("%s: the LSP dialect's update is valid ACP; mark it so", c.name)
		}
		if !c.acp {
			continue
		}
		n, _ := wire.Marshal(wire.SessionNotification{SessionID: "s1", Update: c.u})
		if err := schema.Validate("SessionNotification", n); err != nil {
			t.Errorf("%s in session/update: %v", c.name, err)
		}
	}
}

// TestUpdatesDecodeBack: each example decodes to the value it was made
// from, through the notification as a client reads it.
func TestUpdatesDecodeBack(t *testing.T) {
	for _, c := range updates {
		b, _ := wire.Marshal(wire.SessionNotification{SessionID: "s1", Update: c.u})
		var n wire.SessionNotification
		if err := n.UnmarshalJSON(b); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if n.SessionID != "s1" || !reflect.DeepEqual(n.Update, c.u) {
			t.Errorf("%s: decoded %#v\nfrom %s", c.name, n.Update, b)
		}
	}
	if _, err := wire.DecodeSessionUpdate([]byte(`{"sessionUpdate":"nonsense"}`)); err == nil {
		t.Error("an unknown sessionUpdate decoded")
	}
	if _, err := wire.DecodeSessionUpdate([]byte(`{"content":{"type":"text","text":"x"}}`)); err == nil {
		t.Error("an update without sessionUpdate decoded")
	}
}

// TestEmptyListsAreSent: a tool call without locations and an empty plan
// send [] (the schema's arrays), not null.
func TestEmptyListsAreSent(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	for _, c := range []struct {
		u    wire.SessionUpdate
		want string
	}{
		{wire.ToolCall{ToolCallID: "c", Title: "t", Kind: wire.KindOther, Status: wire.StatusPending, RawInput: map[string]any{}},
			`{"kind":"other","locations":[],"rawInput":{},"sessionUpdate":"tool_call","status":"pending","title":"t","toolCallId":"c"}`},
		{wire.Plan{}, `{"entries":[],"sessionUpdate":"plan"}`},
	} {
		b, _ := wire.Marshal(c.u)
		if string(b) != c.want {
			t.Errorf("got %s, want %s", b, c.want)
		}
		if err := schema.Validate("SessionUpdate", b); err != nil {
			t.Error(err)
		}
	}
}

// TestContentBlocksMatchTheSchema: every content block the daemon may
// send or take is valid and decodes back.
func TestContentBlocksMatchTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	for _, b := range []wire.ContentBlock{
		wire.TextBlock{Text: "x"},
		wire.ImageBlock{Data: "iVBORw0KGgo=", MimeType: "image/png"},
		wire.ResourceLinkBlock{Name: "a.txt", URI: "file:///w/a.txt", Size: ptr(int64(4))},
		wire.ResourceBlock{Resource: wire.EmbeddedResource{URI: "file:///w/a.txt", Text: "one\n", MimeType: "text/plain"}},
		wire.ResourceBlock{Resource: wire.EmbeddedResource{URI: "file:///w/a.bin", Blob: "AAE="}},
	} {
		data, err := wire.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate("ContentBlock", data); err != nil {
			t.Errorf("%s: %v", data, err)
		}
		back, err := wire.DecodeContentBlock(data)
		if err != nil || !reflect.DeepEqual(back, b) {
			t.Errorf("%s decoded as %#v (%v)", data, back, err)
		}
	}
}

// TestRequestsMatchTheSchema: the ACP requests the daemon sends.
func TestRequestsMatchTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	opts := []wire.PermissionOption{{OptionID: "allow_once", Name: "Allow", Kind: wire.AllowOnce}, {OptionID: "reject_once", Name: "Reject", Kind: wire.RejectOnce}}
	perm := wire.RequestPermissionParams{SessionID: "s1", Options: opts, ToolCall: wire.PermissionToolCall{
		ToolCallID: "c1", Title: "Edit a.txt", Kind: wire.KindEdit, Status: wire.StatusPending,
		Locations: []wire.Location{{Path: "/w/a.txt"}}, RawInput: map[string]any{"path": "a.txt"},
		Content: []wire.ToolCallContent{wire.Diff("/w/a.txt", "a\n", "b\n", true), wire.Text("$ make")},
	}}
	for _, c := range []struct {
		def string
		v   any
	}{
		{"RequestPermissionRequest", perm},
		{"ReadTextFileRequest", wire.ReadTextFileParams{SessionID: "s1", Path: "/w/a.txt"}},
		{"WriteTextFileRequest", wire.WriteTextFileParams{SessionID: "s1", Path: "/w/a.txt", Content: "b\n"}},
		{"NewSessionResponse", wire.NewSessionResult{SessionID: "s1", Modes: wire.SessionModes{CurrentModeID: "act", AvailableModes: []wire.Mode{{ID: "act", Name: "Act", Description: "does"}}}}},
		{"ListSessionsResponse", wire.ListSessionsResult{Sessions: []wire.SessionInfo{{SessionID: "s1", Cwd: "/w", Title: "t", UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, {SessionID: "s2", Cwd: "/w", HeldBy: 4242, UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}}},
		{"PromptResponse", wire.PromptResult{StopReason: "end_turn"}},
		{"InitializeResponse", wire.ACPInitializeResult{ProtocolVersion: 1, AuthMethods: []wire.AuthMethod{}, AgentInfo: wire.Implementation{Name: "cline-ls", Version: "v"},
			AgentCapabilities: wire.AgentCapabilities{LoadSession: true, PromptCapabilities: wire.PromptCapabilities{Image: true, EmbeddedContext: true},
				SessionCapabilities: wire.SessionCapabilities{List: &wire.Empty{}, Close: &wire.Empty{}}, MCPCapabilities: wire.MCPCapabilities{HTTP: true, SSE: true}}}},
		{"SetSessionModeResponse", wire.Empty{}},
		{"LoadSessionResponse", wire.ModesResult{Modes: wire.SessionModes{CurrentModeID: "act", AvailableModes: []wire.Mode{{ID: "act", Name: "Act", Description: "does"}}}}},
	} {
		b, err := wire.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(c.def, b); err != nil {
			t.Errorf("%s: %v\n%s", c.def, err, b)
		}
	}
	b, _ := wire.Marshal(perm)
	var back wire.RequestPermissionParams
	if err := back.ToolCall.UnmarshalJSON(mustMember(t, b, "toolCall")); err != nil || !reflect.DeepEqual(back.ToolCall, perm.ToolCall) {
		t.Errorf("the permission's tool call decoded as %#v (%v)", back.ToolCall, err)
	}
}

// TestEnumsAreTheSchemas: the typed constants are exactly the values the
// schema allows.
func TestEnumsAreTheSchemas(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	check := func(def string, got []string) {
		want := schema.Enum(def)
		slices.Sort(want)
		slices.Sort(got)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: ours %v, the schema's %v", def, got, want)
		}
	}
	check("ToolKind", strs(wire.ToolKinds))
	check("ToolCallStatus", strs(wire.ToolCallStatuses))
	check("PlanEntryPriority", strs(wire.PlanPriorities))
	check("PlanEntryStatus", strs(wire.PlanStatuses))
	check("PermissionOptionKind", strs(wire.PermissionKinds))
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// TestMembersSortedAsAMap: whatever the text holds (quotes, braces,
// commas, backslashes), an update encodes as the same value held in maps
// does, discriminators included, so the discriminator's place is found by
// reading the members, not the text.
func TestMembersSortedAsAMap(t *testing.T) {
	tricky := []string{``, `}`, `"},"z":{`, `\`, `\"}`, `a,b]`, "<&>\u2028", `{"sessionUpdate":"x"}`}
	var cases []wire.SessionUpdate
	for _, s := range tricky {
		cases = append(cases,
			wire.AgentMessageChunk{Content: wire.TextBlock{Text: s}},
			wire.ToolCall{ToolCallID: s, Title: s, Kind: wire.KindEdit, Status: wire.StatusPending, RawInput: map[string]any{"z": s, "a": []any{s}}},
			wire.ToolCallUpdate{ToolCallID: s, Content: []wire.ToolCallContent{wire.Text(s), wire.Diff(s, s, s, true)}},
			wire.Compaction{Summary: s},
		)
	}
	for _, c := range updates {
		if tc, ok := c.u.(wire.ToolCall); ok && len(tc.Locations) > 0 {
			continue // a location was a struct before too: path, then line
		}
		cases = append(cases, c.u)
	}
	for _, u := range cases {
		b, err := wire.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want, _ := wire.Marshal(v)
		if string(b) != string(want) {
			t.Errorf("\n got %s\nwant %s", b, want)
		}
	}
}

// TestClineParamsEncodeAsBefore: the LSP dialect's notifications, requests
// and results write the bytes their maps wrote.
func TestClineParamsEncodeAsBefore(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{wire.DiffParams{SessionID: "s1", ToolCallID: "c1", URI: "file:///w/a.txt", Version: ptr(int32(4)), Diff: "-a\n+b\n", Added: 1, Removed: 1},
			`{"added":1,"diff":"-a\n+b\n","removed":1,"sessionId":"s1","toolCallId":"c1","uri":"file:///w/a.txt","version":4}`},
		{wire.DiffParams{SessionID: "s1", ToolCallID: "c1", URI: "file:///w/b.txt", Diff: "+b\n", Added: 1},
			`{"added":1,"diff":"+b\n","removed":0,"sessionId":"s1","toolCallId":"c1","uri":"file:///w/b.txt","version":null}`},
		{wire.ApprovalRequestParams{SessionID: "s1", ApprovalID: "a1", Command: "make", Options: []wire.PermissionOption{{OptionID: "allow_once", Name: "Allow", Kind: wire.AllowOnce}},
			ToolCall: wire.ApprovalToolCall{ToolCallID: "c1", Title: "Run make", Kind: wire.KindExecute, Locations: []wire.Location{}, RawInput: map[string]any{"commands": []any{"make"}}}},
			`{"approvalId":"a1","command":"make","options":[{"optionId":"allow_once","name":"Allow","kind":"allow_once"}],"sessionId":"s1","toolCall":{"kind":"execute","locations":[],"rawInput":{"commands":["make"]},"title":"Run make","toolCallId":"c1"}}`},
		{wire.ProgressParams{Token: "t1", Value: wire.ProgressBegin{Title: "cline: go", Cancellable: true}},
			`{"token":"t1","value":{"cancellable":true,"kind":"begin","title":"cline: go"}}`},
		{wire.ProgressParams{Token: "t1", Value: wire.ProgressReport{Message: "reading"}}, `{"token":"t1","value":{"kind":"report","message":"reading"}}`},
		{wire.ProgressParams{Token: "t1", Value: wire.ProgressEnd{Message: ""}}, `{"token":"t1","value":{"kind":"end","message":""}}`},
		{wire.MessageParams{Type: wire.MessageInfo, Message: "done"}, `{"message":"done","type":3}`},
		{wire.ShowMessageRequestParams{Type: wire.MessageInfo, Message: "ok?", Actions: []wire.MessageAction{{Title: "Allow"}}},
			`{"actions":[{"title":"Allow"}],"message":"ok?","type":3}`},
		{wire.AskQuestionParams{SessionID: "s1", Question: "which?", Options: []string{"a", "b"}}, `{"options":["a","b"],"question":"which?","sessionId":"s1"}`},
		{wire.CancelParams{ID: 7}, `{"id":7}`},
		{wire.CallToolResult{Content: "x", IsError: true}, `{"content":"x","isError":true}`},
		{wire.CommandArgs{Text: "fix <this>"}, `{"text":"fix <this>"}`},
		{wire.Empty{}, `{}`},
		{wire.InitializeResult{ServerInfo: wire.Implementation{Name: "cline-ls", Version: "v"}, Capabilities: wire.ServerCapabilities{
			PositionEncoding: "utf-16", TextDocumentSync: wire.TextDocumentSyncOptions{OpenClose: true, Change: 2},
			ExecuteCommandProvider: wire.ExecuteCommandOptions{Commands: []string{"cline.prompt"}}, CodeActionProvider: wire.CodeActionOptions{CodeActionKinds: []string{"quickfix"}},
			Workspace:    wire.WorkspaceCapabilities{WorkspaceFolders: wire.WorkspaceFoldersCapabilities{Supported: true, ChangeNotifications: true}},
			Experimental: wire.Experimental{Cline: wire.ClineCapabilities{ProtocolVersion: 2, Modes: []string{"act"}, Tools: []string{}}}}},
			`{"capabilities":{"codeActionProvider":{"codeActionKinds":["quickfix"]},"executeCommandProvider":{"commands":["cline.prompt"]},"experimental":{"cline":{"modes":["act"],"protocolVersion":2,"tools":[]}},"positionEncoding":"utf-16","textDocumentSync":{"change":2,"openClose":true,"save":{"includeText":false}},"workspace":{"workspaceFolders":{"changeNotifications":true,"supported":true}}},"serverInfo":{"name":"cline-ls","version":"v"}}`},
	} {
		b, err := wire.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.v, b, c.want)
		}
	}
}
