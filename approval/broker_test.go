package approval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// fakeCaller is the editor: each request and notification the broker
// sends arrives on its channels, and a test answers the requests.
type fakeCaller struct {
	calls chan *call
	notes chan note
}

type call struct {
	method string
	params any
	result any
	reply  chan func() error
}

type note struct {
	method string
	params any
}

func newFakeCaller() *fakeCaller {
	return &fakeCaller{calls: make(chan *call, 8), notes: make(chan note, 8)}
}

func (f *fakeCaller) Call(ctx context.Context, method string, params, result any) error {
	c := &call{method: method, params: params, result: result, reply: make(chan func() error, 1)}
	f.calls <- c
	select {
	case fn := <-c.reply:
		return fn()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeCaller) Notify(_ context.Context, method string, params any) error {
	f.notes <- note{method: method, params: params}
	return nil
}

// answer answers c with the JSON result.
func (c *call) answer(t *testing.T, result string) {
	t.Helper()
	c.reply <- func() error { return json.Unmarshal([]byte(result), c.result) }
}

func (c *call) fail(err error) { c.reply <- func() error { return err } }

func (f *fakeCaller) nextCall(t *testing.T) *call {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no request sent")
		return nil
	}
}

func (f *fakeCaller) noCall(t *testing.T) {
	t.Helper()
	select {
	case c := <-f.calls:
		t.Fatalf("unexpected %s: %+v", c.method, c.params)
	case <-time.After(50 * time.Millisecond):
	}
}

func (f *fakeCaller) nextNote(t *testing.T) note {
	t.Helper()
	select {
	case n := <-f.notes:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notification sent")
		return note{}
	}
}

type result struct {
	out session.ApprovalOutcome
	err error
}

// ask runs b.Ask in the background.
func ask(ctx context.Context, b *Broker, sessionID string, req session.ApprovalRequest) <-chan result {
	ch := make(chan result, 1)
	go func() {
		out, err := b.Ask(ctx, sessionID, req)
		ch <- result{out, err}
	}()
	return ch
}

func outcome(t *testing.T, ch <-chan result) session.ApprovalOutcome {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Ask: %v", r.err)
		}
		return r.out
	case <-time.After(5 * time.Second):
		t.Fatal("Ask did not return")
		return session.ApprovalOutcome{}
	}
}

func waiting(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("Ask returned %+v before it was answered", r)
	case <-time.After(50 * time.Millisecond):
	}
}

func editRequest(callID string) session.ApprovalRequest {
	newText := "b\n"
	return session.ApprovalRequest{
		CallID: callID,
		Tool:   "replace_in_file",
		Args:   json.RawMessage(`{"path":"a.txt"}`),
		Always: "edits of a.txt",
		Description: tools.Description{
			Title:     "Edit a.txt",
			Kind:      tools.KindEdit,
			Locations: []tools.Location{{Path: "a.txt"}},
			Preview:   "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-a\n+b\n",
			Changes:   []tools.Change{{Path: "/w/a.txt", OldText: "a\n", NewText: &newText, Existed: true}},
		},
	}
}

func newBroker(c Client, f *fakeCaller) *Broker {
	b := New(Options{Caller: f})
	b.SetChannels(ChannelsFor(c))
	return b
}

func TestChannelsFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Client
		want Channels
	}{
		{"nothing declared", Client{}, Channels{Approval: ShowMessage, Question: None}},
		{"stock client", Client{ShowMessageRequest: true, ShowDocument: true}, Channels{Approval: ShowMessage, Question: ShowMessage, ShowDocument: true}},
		{"plugin", Client{ClineApprovals: true, ClineQuestions: true, ShowMessageRequest: true}, Channels{Approval: ClineApproval, Question: ClineQuestion}},
		{"approvals only", Client{ClineApprovals: true}, Channels{Approval: ClineApproval, Question: None}},
		{"ACP", Client{ACP: true, ClineApprovals: true, ClineQuestions: true, ShowMessageRequest: true, ShowDocument: true}, Channels{Approval: RequestPermission, Question: None}},
	} {
		got := ChannelsFor(tc.c)
		if got != tc.want {
			t.Errorf("%s: ChannelsFor = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if c := ChannelsFor(Client{ClineQuestions: true}); !c.CanAsk() || !c.FreeText() {
		t.Errorf("cline/askQuestion: CanAsk %v FreeText %v, want both", c.CanAsk(), c.FreeText())
	}
	if c := ChannelsFor(Client{ShowMessageRequest: true}); !c.CanAsk() || c.FreeText() {
		t.Errorf("window/showMessageRequest: CanAsk %v FreeText %v, want only CanAsk", c.CanAsk(), c.FreeText())
	}
	if c := ChannelsFor(Client{ACP: true}); c.CanAsk() {
		t.Error("ACP: CanAsk, want no questions")
	}
	if c := New(Options{}).Channels(); c != ChannelsFor(Client{}) {
		t.Errorf("a new broker asks as %+v, want as a client that declared nothing", c)
	}
}

// Several cline/approvalRequests are pending at once; each answer goes
// to the approval it names, in whatever order they come.
func TestClineApprovalsAnsweredByID(t *testing.T) {
	f := newFakeCaller()
	b := newBroker(Client{ClineApprovals: true}, f)
	ctx := context.Background()

	first := ask(ctx, b, "s1", editRequest("c1"))
	n1 := f.nextNote(t)
	second := ask(ctx, b, "s2", editRequest("c2"))
	n2 := f.nextNote(t)
	if n1.method != "cline/approvalRequest" || n2.method != "cline/approvalRequest" {
		t.Fatalf("sent %s and %s", n1.method, n2.method)
	}
	p1 := n1.params.(wire.ApprovalRequestParams)
	p2 := n2.params.(wire.ApprovalRequestParams)
	if p1.ApprovalID == p2.ApprovalID {
		t.Fatalf("both approvals are %q", p1.ApprovalID)
	}
	if p1.SessionID != "s1" || p1.ToolCall.ToolCallID != "c1" || p1.Diff == "" || p1.ToolCall.Title != "Edit a.txt" {
		t.Errorf("first request: %+v", p1)
	}
	var names []string
	for _, o := range p1.Options {
		names = append(names, o.OptionID+"="+o.Name)
	}
	if got, want := strings.Join(names, ", "), "allow_once=Allow, allow_always=Always allow edits of a.txt, reject_once=Reject, reject_always=Always reject edits of a.txt"; got != want {
		t.Errorf("options: %s, want %s", got, want)
	}
	waiting(t, first)
	waiting(t, second)

	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: p2.ApprovalID, Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "reject_once"}, Feedback: "not that"}); err != nil {
		t.Fatal(err)
	}
	if out := outcome(t, second); out.Choice != session.RejectOnce || out.Feedback != "not that" {
		t.Errorf("second: %+v", out)
	}
	waiting(t, first)
	kept := "kept\n"
	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: p1.ApprovalID, Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "allow_once"}, KeptText: &kept}); err != nil {
		t.Fatal(err)
	}
	if out := outcome(t, first); out.Choice != session.AllowOnce || out.Kept == nil || *out.Kept != kept {
		t.Errorf("first: %+v", out)
	}
	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: p1.ApprovalID, Outcome: &wire.PermissionOutcome{Outcome: "cancelled"}}); err == nil ||
		!strings.Contains(err.Error(), "unknown or already answered") {
		t.Errorf("a second answer: %v", err)
	}
}

func TestCancelSessionWithdrawsItsOwn(t *testing.T) {
	f := newFakeCaller()
	b := newBroker(Client{ClineApprovals: true}, f)
	ctx := context.Background()
	mine := ask(ctx, b, "s1", editRequest("c1"))
	id1 := f.nextNote(t).params.(wire.ApprovalRequestParams).ApprovalID
	other := ask(ctx, b, "s2", editRequest("c2"))
	id2 := f.nextNote(t).params.(wire.ApprovalRequestParams).ApprovalID

	b.CancelSession("s1")
	if out := outcome(t, mine); out.Choice != session.ApprovalCancelled {
		t.Errorf("cancelled session's approval: %+v", out)
	}
	waiting(t, other)
	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: id1, Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "allow_once"}}); err == nil {
		t.Error("an answer to a withdrawn approval was taken")
	}
	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: id2, Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "allow_always"}}); err != nil {
		t.Fatal(err)
	}
	if out := outcome(t, other); out.Choice != session.AllowAlways {
		t.Errorf("other session's approval: %+v", out)
	}
}

func TestClineApprovalContextEnds(t *testing.T) {
	f := newFakeCaller()
	b := newBroker(Client{ClineApprovals: true}, f)
	ctx, cancel := context.WithCancel(context.Background())
	got := ask(ctx, b, "s1", editRequest("c1"))
	id := f.nextNote(t).params.(wire.ApprovalRequestParams).ApprovalID
	waiting(t, got)
	cancel()
	if out := outcome(t, got); out.Choice != session.ApprovalCancelled {
		t.Errorf("after the context ended: %+v", out)
	}
	if err := b.Respond(wire.ApprovalResponseParams{ApprovalID: id, Outcome: &wire.PermissionOutcome{Outcome: "cancelled"}}); err == nil {
		t.Error("the approval given up is still pending")
	}
}

func TestRespondRefuses(t *testing.T) {
	b := newBroker(Client{ClineApprovals: true}, newFakeCaller())
	kept := "x"
	for _, tc := range []struct {
		p    wire.ApprovalResponseParams
		want string
	}{
		{wire.ApprovalResponseParams{Outcome: &wire.PermissionOutcome{Outcome: "cancelled"}}, "approvalId: required"},
		{wire.ApprovalResponseParams{ApprovalID: "a1"}, "outcome: required"},
		{wire.ApprovalResponseParams{ApprovalID: "a1", Outcome: &wire.PermissionOutcome{Outcome: "picked"}}, `outcome.outcome: must be "selected" or "cancelled", got "picked"`},
		{wire.ApprovalResponseParams{ApprovalID: "a1", Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "yes"}}, `outcome.optionId: must be allow_once, allow_always, reject_once or reject_always, got "yes"`},
		{wire.ApprovalResponseParams{ApprovalID: "a1", Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "reject_once"}, KeptText: &kept}, "keptText: only with the option allow_once"},
		{wire.ApprovalResponseParams{ApprovalID: "a9", Outcome: &wire.PermissionOutcome{Outcome: "selected", OptionID: "allow_once"}}, `approvalId: "a9" is unknown or already answered`},
	} {
		err := b.Respond(tc.p)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Respond(%+v) = %v, want %s", tc.p, err, tc.want)
		}
	}
}

// window/showMessageRequest approvals are asked one at a time, in the
// order they came; one that stops waiting its turn is never sent.
func TestMessageApprovalsOneAtATime(t *testing.T) {
	f := newFakeCaller()
	b := newBroker(Client{ShowMessageRequest: true}, f)
	ctx := context.Background()
	first := ask(ctx, b, "s1", editRequest("c1"))
	c1 := f.nextCall(t)
	second := ask(ctx, b, "s2", editRequest("c2"))
	gaveUpCtx, giveUp := context.WithCancel(ctx)
	gaveUp := ask(gaveUpCtx, b, "s3", editRequest("c3"))
	f.noCall(t)

	giveUp()
	if out := outcome(t, gaveUp); out.Choice != session.ApprovalCancelled {
		t.Errorf("given up while waiting its turn: %+v", out)
	}
	f.noCall(t)
	c1.answer(t, `{"title":"Allow"}`)
	if out := outcome(t, first); out.Choice != session.AllowOnce {
		t.Errorf("first: %+v", out)
	}
	c2 := f.nextCall(t)
	if c2.method != "window/showMessageRequest" {
		t.Fatalf("sent %s", c2.method)
	}
	if p := c2.params.(wire.ShowMessageRequestParams); !strings.Contains(p.Message, "replace_in_file: Edit a.txt") {
		t.Errorf("second asks %q", p.Message)
	}
	waiting(t, second)
	c2.answer(t, `{"title":"Always allow edits of a.txt"}`)
	if out := outcome(t, second); out.Choice != session.AllowAlways {
		t.Errorf("second: %+v", out)
	}
	f.noCall(t)
}

func TestMessageApprovalAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(*call)
		want session.ApprovalOutcome
	}{
		{"dismissed", func(c *call) { c.answer(t, `null`) }, session.ApprovalOutcome{Choice: session.RejectOnce}},
		{"not offered", func(c *call) { c.answer(t, `{"title":"Sure"}`) }, session.ApprovalOutcome{Choice: session.RejectOnce}},
		{"old title", func(c *call) { c.answer(t, `{"title":"Always allow"}`) }, session.ApprovalOutcome{Choice: session.AllowAlways}},
		{"refused", func(c *call) { c.fail(jsonrpc2.NewError(jsonrpc2.MethodNotFound, "no prompts here")) },
			session.ApprovalOutcome{Choice: session.RejectOnce, Feedback: "the editor could not ask: no prompts here"}},
	} {
		f := newFakeCaller()
		b := newBroker(Client{}, f)
		got := ask(context.Background(), b, "s1", editRequest("c1"))
		tc.do(f.nextCall(t))
		if out := outcome(t, got); out.Choice != tc.want.Choice || out.Feedback != tc.want.Feedback {
			t.Errorf("%s: %+v, want %+v", tc.name, out, tc.want)
		}
	}

	f := newFakeCaller()
	b := newBroker(Client{}, f)
	got := ask(context.Background(), b, "s1", editRequest("c1"))
	f.nextCall(t).fail(errors.New("connection closed"))
	if r := <-got; r.err == nil {
		t.Errorf("a failed connection: %+v, want an error", r.out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	got = ask(ctx, b, "s1", editRequest("c1"))
	f.nextCall(t)
	cancel()
	if out := outcome(t, got); out.Choice != session.ApprovalCancelled {
		t.Errorf("cancelled while the editor asks: %+v", out)
	}
	// The turn is free for the next approval.
	got = ask(context.Background(), b, "s1", editRequest("c2"))
	f.nextCall(t).answer(t, `{"title":"Allow"}`)
	if out := outcome(t, got); out.Choice != session.AllowOnce {
		t.Errorf("after a cancel: %+v", out)
	}
}

func titles(actions []wire.MessageAction) string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Title)
	}
	return strings.Join(out, "|")
}

// "Show diff" opens the change and asks again; when it cannot be shown
// the message carries the diff instead.
func TestMessageApprovalShowDiff(t *testing.T) {
	f := newFakeCaller()
	shown := make(chan string, 2)
	// The first is shown, the second cannot be.
	errs := make(chan error, 2)
	errs <- nil
	errs <- errors.New("no documents")
	b := New(Options{Caller: f, ShowDiff: func(_ context.Context, req session.ApprovalRequest) error {
		shown <- req.CallID
		return <-errs
	}})
	b.SetChannels(ChannelsFor(Client{ShowMessageRequest: true, ShowDocument: true}))

	got := ask(context.Background(), b, "s1", editRequest("c1"))
	c := f.nextCall(t)
	p := c.params.(wire.ShowMessageRequestParams)
	if titles(p.Actions) != "Show diff|Reject|Allow|Always allow edits of a.txt" || !strings.HasSuffix(p.Message, "Show diff opens the change.") || strings.Contains(p.Message, "+b") {
		t.Errorf("asked %q with %s", p.Message, titles(p.Actions))
	}
	c.answer(t, `{"title":"Show diff"}`)
	if id := <-shown; id != "c1" {
		t.Errorf("showed %s", id)
	}
	c = f.nextCall(t)
	c.answer(t, `{"title":"Show diff"}`)
	<-shown
	c = f.nextCall(t)
	p = c.params.(wire.ShowMessageRequestParams)
	if titles(p.Actions) != "Reject|Allow|Always allow edits of a.txt" || !strings.Contains(p.Message, "+b") {
		t.Errorf("asked again %q with %s", p.Message, titles(p.Actions))
	}
	c.answer(t, `{"title":"Allow"}`)
	if out := outcome(t, got); out.Choice != session.AllowOnce {
		t.Errorf("%+v", out)
	}
}

// A question of the request's own options (the hooks' trust question)
// never offers an approving action first, and a title picks its option.
func TestMessageOwnOptions(t *testing.T) {
	req := session.ApprovalRequest{
		Description: tools.Description{Title: "Trust the hooks of /w?", Command: "rm -rf /"},
		Options: []wire.PermissionOption{
			{OptionID: string(session.AllowAlways), Name: "Trust", Kind: wire.AllowAlways},
			{OptionID: string(session.RejectAlways), Name: "Do not trust", Kind: wire.RejectAlways},
		},
	}
	f := newFakeCaller()
	b := newBroker(Client{ShowMessageRequest: true, ShowDocument: true}, f)
	got := ask(context.Background(), b, "s1", req)
	c := f.nextCall(t)
	p := c.params.(wire.ShowMessageRequestParams)
	if titles(p.Actions) != "Do not trust|Trust" || p.Message != "cline-ls: Trust the hooks of /w?\n\nrm -rf /" {
		t.Errorf("asked %q with %s", p.Message, titles(p.Actions))
	}
	c.answer(t, `{"title":"Trust"}`)
	if out := outcome(t, got); out.Choice != session.AllowAlways {
		t.Errorf("%+v", out)
	}
	if out := messageOutcome(req, "Allow"); out.Choice != session.RejectOnce {
		t.Errorf("a title not offered: %+v", out)
	}
}

func TestACPRequestPermission(t *testing.T) {
	for _, tc := range []struct {
		result string
		want   session.ApprovalOutcome
	}{
		{`{"outcome":{"outcome":"selected","optionId":"allow_always"}}`, session.ApprovalOutcome{Choice: session.AllowAlways}},
		{`{"outcome":{"outcome":"selected","optionId":"reject_once"}}`, session.ApprovalOutcome{Choice: session.RejectOnce}},
		{`{"outcome":{"outcome":"cancelled"}}`, session.ApprovalOutcome{Choice: session.ApprovalCancelled}},
		{`{"outcome":{"outcome":"selected","optionId":"maybe"}}`, session.ApprovalOutcome{Choice: session.RejectOnce, Feedback: "unknown option maybe"}},
		{`{}`, session.ApprovalOutcome{Choice: session.ApprovalCancelled}},
	} {
		f := newFakeCaller()
		b := New(Options{Caller: f, AbsLocations: func(l []wire.Location) []wire.Location {
			out := append([]wire.Location(nil), l...)
			for i := range out {
				out[i].Path = "/w/" + out[i].Path
			}
			return out
		}})
		b.SetChannels(ChannelsFor(Client{ACP: true}))
		got := ask(context.Background(), b, "s1", editRequest("c1"))
		c := f.nextCall(t)
		if c.method != "session/request_permission" {
			t.Fatalf("sent %s", c.method)
		}
		p := c.params.(wire.RequestPermissionParams)
		if p.SessionID != "s1" || p.ToolCall.ToolCallID != "c1" || p.ToolCall.Status != wire.StatusPending ||
			len(p.ToolCall.Locations) != 1 || p.ToolCall.Locations[0].Path != "/w/a.txt" || len(p.ToolCall.Content) != 1 || len(p.Options) != 4 {
			t.Errorf("asked %+v", p)
		}
		c.answer(t, tc.result)
		if out := outcome(t, got); out != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.result, out, tc.want)
		}
	}

	f := newFakeCaller()
	b := newBroker(Client{ACP: true}, f)
	ctx, cancel := context.WithCancel(context.Background())
	got := ask(ctx, b, "s1", editRequest("c1"))
	f.nextCall(t)
	cancel()
	if out := outcome(t, got); out.Choice != session.ApprovalCancelled {
		t.Errorf("cancelled while the client asks: %+v", out)
	}
}

// The title says which changes go to disk rather than to a buffer, in
// every channel.
func TestDiskNoteInTitle(t *testing.T) {
	f := newFakeCaller()
	b := New(Options{Caller: f, DiskNote: func(sessionID string, changes []tools.Change) string {
		if sessionID != "s1" || len(changes) != 1 {
			t.Errorf("DiskNote(%q, %d changes)", sessionID, len(changes))
		}
		return "writes a.txt to disk (not open in the editor)"
	}})
	b.SetChannels(ChannelsFor(Client{ClineApprovals: true}))
	got := ask(context.Background(), b, "s1", editRequest("c1"))
	p := f.nextNote(t).params.(wire.ApprovalRequestParams)
	if p.ToolCall.Title != "Edit a.txt: writes a.txt to disk (not open in the editor)" {
		t.Errorf("title %q", p.ToolCall.Title)
	}
	b.CancelSession("s1")
	outcome(t, got)
}

func TestQuestion(t *testing.T) {
	type answer struct {
		text string
		ok   bool
		err  error
	}
	question := func(b *Broker, opts []string) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			a, ok, err := b.Question(context.Background(), "s1", "Which?", opts)
			ch <- answer{a, ok, err}
		}()
		return ch
	}
	for _, tc := range []struct {
		client Client
		method string
		result string
		want   answer
	}{
		{Client{ClineQuestions: true}, "cline/askQuestion", `{"answer":"typed"}`, answer{"typed", true, nil}},
		{Client{ClineQuestions: true}, "cline/askQuestion", `{"answer":null}`, answer{"", false, nil}},
		{Client{ShowMessageRequest: true}, "window/showMessageRequest", `{"title":"b"}`, answer{"b", true, nil}},
		{Client{ShowMessageRequest: true}, "window/showMessageRequest", `null`, answer{"", false, nil}},
	} {
		f := newFakeCaller()
		b := newBroker(tc.client, f)
		got := question(b, []string{"a", "b"})
		c := f.nextCall(t)
		if c.method != tc.method {
			t.Fatalf("sent %s, want %s", c.method, tc.method)
		}
		switch p := c.params.(type) {
		case wire.AskQuestionParams:
			if p.SessionID != "s1" || p.Question != "Which?" || len(p.Options) != 2 {
				t.Errorf("asked %+v", p)
			}
		case wire.ShowMessageRequestParams:
			if p.Message != "Which?" || titles(p.Actions) != "a|b" {
				t.Errorf("asked %+v", p)
			}
		}
		c.answer(t, tc.result)
		if a := <-got; a != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.result, a, tc.want)
		}
	}

	f := newFakeCaller()
	b := newBroker(Client{ACP: true, ClineQuestions: true}, f)
	if a := <-question(b, nil); !errors.Is(a.err, ErrCannotAsk) {
		t.Errorf("ACP: %+v, want ErrCannotAsk", a)
	}
	f.noCall(t)
}
