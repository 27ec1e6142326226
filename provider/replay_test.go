package provider

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestReplayDemoTranscript(t *testing.T) {
	p, err := New(Config{Name: "replay", Transcript: filepath.Join("testdata", "replay", "demo.json")})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "replay" || p.Model() != "replay-demo" || !p.NativeTools() {
		t.Errorf("name/model/native = %s/%s/%v", p.Name(), p.Model(), p.NativeTools())
	}
	tools := []ToolDef{{Name: "read_files"}, {Name: "editor"}}
	hist := []Message{UserText("Change the greeting please.")}
	results := []string{"1 | fmt.Println(\"Hello, world\")", "Edited main.go\n```diff\n-1: Hello, world\n+1: Hello, cline-ls\n```"}
	for turn := 0; ; turn++ {
		s, err := p.Stream(context.Background(), Request{Messages: hist, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(t, s)
		if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		}
		for _, ev := range evs {
			if (ev.Kind == EventText || ev.Kind == EventThinking) && (len(ev.Text) > 8 || !utf8.ValidString(ev.Text)) {
				t.Errorf("turn %d: chunk %q is not a small whole-character chunk", turn+1, ev.Text)
			}
		}
		var reply Reply
		for _, ev := range evs {
			reply.Add(ev)
		}
		if !reply.Done || reply.Usage.InputTokens == 0 {
			t.Errorf("turn %d: reply not done or without usage: %+v", turn+1, reply)
		}
		hist = append(hist, reply.Message)
		calls := reply.Calls()
		if len(calls) == 0 {
			if turn != 2 || reply.Stop != StopEndTurn || !strings.Contains(reply.Text(), "Hello, cline-ls") {
				t.Errorf("turn %d ended the conversation: %+v", turn+1, reply)
			}
			break
		}
		if reply.Stop != StopToolUse {
			t.Errorf("turn %d: stop = %q with calls", turn+1, reply.Stop)
		}
		if turn == 0 {
			if reply.Message.Parts[0].Kind != PartThinking || calls[0].Name != "read_files" {
				t.Errorf("first reply = %+v", reply.Message.Parts)
			}
			assertJSON(t, calls[0].Args, `{"files":[{"path":"main.go"}]}`)
		}
		hist = append(hist, Message{Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: calls[0].ID, Name: calls[0].Name, Content: results[turn]})}})
	}
	r := p.(*Replay)
	if r.Remaining() != 0 || len(r.Requests()) != 3 {
		t.Errorf("remaining %d, requests %d; want 0 and 3", r.Remaining(), len(r.Requests()))
	}
	s, _ := p.Stream(context.Background(), Request{Messages: hist})
	if _, err := Collect(s); err == nil || !strings.Contains(err.Error(), "request 4 has no reply") {
		t.Errorf("error past the end = %v", err)
	}
}

func TestReplayXMLTranscript(t *testing.T) {
	p, err := New(Config{Name: "replay", Transcript: filepath.Join("testdata", "replay", "xml.json")})
	if err != nil {
		t.Fatal(err)
	}
	if p.NativeTools() {
		t.Fatal("xml.json replays the XML path")
	}
	s, _ := p.Stream(context.Background(), Request{Messages: []Message{UserText("Which files are there?")}})
	reply, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Calls()) != 0 || !strings.Contains(reply.Text(), "<list_files>\n<path>.</path>") || reply.Stop != StopEndTurn {
		t.Errorf("reply = %+v, want XML in plain text", reply)
	}
}

func TestReplayDetectsDrift(t *testing.T) {
	isErr := true
	r, err := NewReplay(Transcript{Replies: []ReplayReply{
		{Expect: &Expect{LastToolResultContains: "3 passed", LastToolResultIsError: &isErr}, Events: []ReplayEvent{{Text: "ok"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hist := []Message{UserText("run the tests"), {Role: RoleTool, Parts: []Part{ResultPart(ToolResult{CallID: "c", Name: "run_commands", Content: "2 passed, 1 failed"})}}}
	s, _ := r.Stream(context.Background(), Request{Messages: hist})
	evs, err := drain(t, s)
	if err == nil || len(evs) != 0 {
		t.Fatalf("events %v, error %v; want no events and a drift error", evs, err)
	}
	for _, want := range []string{"reply 1", "3 passed", "2 passed, 1 failed", "run_commands"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("drift error %q lacks %q", err, want)
		}
	}
}

func TestReplayExpectations(t *testing.T) {
	hist := []Message{UserText("hello there"), {Role: RoleTool, Parts: []Part{ResultPart(ToolResult{Name: "x", Content: "out"})}}}
	req := Request{System: "be brief", Messages: hist, Tools: []ToolDef{{Name: "read_files"}}}
	no := false
	for _, tc := range []struct {
		expect Expect
		ok     bool
	}{
		{Expect{SystemContains: "brief"}, true},
		{Expect{SystemContains: "verbose"}, false},
		{Expect{LastUserContains: "hello"}, true},
		{Expect{LastUserContains: "bye"}, false},
		{Expect{LastToolResultContains: "out", LastToolResultIsError: &no}, true},
		{Expect{LastToolResultContains: "in"}, false},
		{Expect{Tools: []string{"read_files"}}, true},
		{Expect{Tools: []string{"read_files", "editor"}}, false},
		{Expect{Messages: 2}, true},
		{Expect{Messages: 3}, false},
	} {
		err := tc.expect.check(req)
		if (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v, want ok %v", tc.expect, err, tc.ok)
		}
	}
	if err := (&Expect{LastToolResultContains: "x"}).check(Request{Messages: []Message{UserText("x")}}); err == nil {
		t.Error("a history without results passed a result expectation")
	}
}

func TestReplayErrorEventAndCancel(t *testing.T) {
	r, err := NewReplay(Transcript{ChunkSize: 1, Replies: []ReplayReply{
		{Events: []ReplayEvent{{Text: "half a rep"}, {Error: "connection reset by peer"}}},
		{Events: []ReplayEvent{{Text: "a long reply that will be cancelled"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := r.Stream(context.Background(), Request{})
	evs, err := drain(t, s)
	var pe *Error
	if !errors.As(err, &pe) || !pe.Partial || texts(evs, EventText) != "half a rep" || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("events %q, error %v; want the text then a partial error", texts(evs, EventText), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, _ = r.Stream(ctx, Request{})
	n := 0
	var last error
	for ev, err := range s {
		if ev.Kind == EventText {
			n++
			cancel()
		}
		if err != nil {
			last = err
		}
	}
	if n != 1 || !errors.Is(last, context.Canceled) {
		t.Errorf("%d chunks after cancel, error %v; want 1 and context.Canceled", n, last)
	}
}

// TestReplayWait: a wait event pauses the reply at least its ms, the
// jitter draws differ from pause to pause, and a cancelled request ends a
// long wait with the cancellation, not after the wait.
func TestReplayWait(t *testing.T) {
	r, err := NewReplay(Transcript{Replies: []ReplayReply{
		{Events: []ReplayEvent{{Wait: &Wait{MS: 30}}, {Text: "after the pause"}}},
		{Events: []ReplayEvent{{Text: "first "}, {Wait: &Wait{MS: 60_000}}, {Text: "never sent"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, _ := r.Stream(context.Background(), Request{})
	evs, err := drain(t, s)
	if err != nil || texts(evs, EventText) != "after the pause" {
		t.Fatalf("events %q, error %v", texts(evs, EventText), err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("the reply came after %v, before its 30 ms wait", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s, _ = r.Stream(ctx, Request{})
	var got []string
	var last error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range s {
			if ev.Kind == EventText {
				got = append(got, ev.Text)
				cancel() // the wait that follows must end now, not in a minute
			}
			if err != nil {
				last = err
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a failure guard: the wait is 60 s
		t.Fatal("the cancelled request's wait did not end")
	}
	if strings.Join(got, "") != "first " || !errors.Is(last, context.Canceled) {
		t.Errorf("text %q, error %v; want the text before the wait, then context.Canceled", got, last)
	}

	w := Wait{MS: 1, JitterMS: 1000}
	seen := map[time.Duration]bool{}
	for range 20 {
		d := w.duration()
		if d < time.Millisecond || d >= 1001*time.Millisecond {
			t.Fatalf("a draw of %v is outside [1 ms, 1001 ms)", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 draws of a 1 s jitter gave %d distinct pauses", len(seen))
	}
}

func TestReplayDefaults(t *testing.T) {
	r, err := NewReplay(Transcript{Replies: []ReplayReply{
		{Events: []ReplayEvent{{ToolCall: &ToolCall{Name: "list_files"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := r.Stream(context.Background(), Request{})
	reply, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	calls := reply.Calls()
	if reply.Stop != StopToolUse || len(calls) != 1 || calls[0].ID == "" || string(calls[0].Args) != "{}" {
		t.Errorf("reply = %+v, want a tool_use stop and a call with an ID and empty args", reply)
	}
}

func TestTranscriptValidate(t *testing.T) {
	for name, tr := range map[string]Transcript{
		"no replies":     {},
		"two fields":     {Replies: []ReplayReply{{Events: []ReplayEvent{{Text: "a", Thinking: "b"}}}}},
		"no field":       {Replies: []ReplayReply{{Events: []ReplayEvent{{}}}}},
		"stop not last":  {Replies: []ReplayReply{{Events: []ReplayEvent{{Stop: StopEndTurn}, {Text: "a"}}}}},
		"unknown stop":   {Replies: []ReplayReply{{Events: []ReplayEvent{{Stop: "paused"}}}}},
		"args not obj":   {Replies: []ReplayReply{{Events: []ReplayEvent{{ToolCall: &ToolCall{Name: "x", Args: json.RawMessage(`[1]`)}}}}}},
		"call sans name": {Replies: []ReplayReply{{Events: []ReplayEvent{{ToolCall: &ToolCall{}}}}}},
		"negative wait":  {Replies: []ReplayReply{{Events: []ReplayEvent{{Wait: &Wait{MS: -1}}}}}},
		"endless wait":   {Replies: []ReplayReply{{Events: []ReplayEvent{{Wait: &Wait{MS: 50_000, JitterMS: 20_000}}}}}},
		"wait and text":  {Replies: []ReplayReply{{Events: []ReplayEvent{{Wait: &Wait{MS: 1}, Text: "a"}}}}},
		// ms + jitter_ms wraps around to a negative sum.
		"wrapping wait": {Replies: []ReplayReply{{Events: []ReplayEvent{{Wait: &Wait{MS: math.MaxInt, JitterMS: 1}}}}}},
	} {
		if _, err := NewReplay(tr); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	path := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(path, []byte(`{"replies":[{"events":[{"txt":"typo"}]}]}`), 0o644)
	if _, err := LoadTranscript(path); err == nil || !strings.Contains(err.Error(), "txt") {
		t.Errorf("unknown field: err = %v", err)
	}
	if _, err := New(Config{Name: "replay"}); err == nil {
		t.Error("replay without a transcript accepted")
	}
}

func TestChunksKeepCharactersWhole(t *testing.T) {
	s := "héllo wörld ✓ 日本語"
	for size := 1; size <= 5; size++ {
		var b strings.Builder
		for _, c := range chunks(s, size) {
			if !utf8.ValidString(c) || (len(c) > size && utf8.RuneCountInString(c) > 1) {
				t.Errorf("size %d: bad chunk %q", size, c)
			}
			b.WriteString(c)
		}
		if b.String() != s {
			t.Errorf("size %d: chunks join to %q", size, b.String())
		}
	}
}
