package session

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// limitServer is an OpenAI-compatible server on 127.0.0.1 that refuses,
// as vLLM and llama.cpp do, any request whose messages and tools hold
// more than limit characters, with a 400 and a realistic body. Its
// model reads a big file at each step and ends at step steps; summary
// requests are answered with a summary. It reports usage as a real
// server does (about four characters a token) unless fixedPrompt is set:
// then it reports that many prompt tokens for every request, or, when
// negative, no usage.
type limitServer struct {
	limit       int
	steps       int
	nameWindow  bool // the refusal says the window in tokens
	fixedPrompt int
	// charsPerToken is the server's tokenizer: 4 when 0. At 3 the
	// window it names is larger than the daemon's estimate of the
	// refused request.
	charsPerToken int

	mu        sync.Mutex
	sizes     []int // characters of every request, refused ones too
	refused   int
	summaries int
	main      int              // main requests answered
	bodies    []map[string]any // every main request answered, decoded
}

// summaryOpening is how the summary prompt starts, which tells the fake
// a summary request.
var summaryOpening = summaryPrompt[:40]

func (f *limitServer) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body struct {
			Messages []struct {
				Role      string          `json:"role"`
				Content   json.RawMessage `json:"content"`
				ToolCalls json.RawMessage `json:"tool_calls"`
			} `json:"messages"`
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		chars := len(body.Tools)
		summary := false
		for _, m := range body.Messages {
			chars += len(m.Content) + len(m.ToolCalls)
			if m.Role == "system" && strings.Contains(string(m.Content), summaryOpening) {
				summary = true
			}
		}
		f.mu.Lock()
		f.sizes = append(f.sizes, chars)
		cpt := f.charsPerToken
		if cpt == 0 {
			cpt = 4
		}
		if chars > f.limit {
			f.refused++
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			msg := "the request exceeds the available context size, try increasing it"
			if f.nameWindow {
				msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
					f.limit/cpt, chars/cpt, chars/cpt)
			}
			b, _ := json.Marshal(map[string]any{"object": "error", "message": msg, "type": "BadRequestError", "param": nil, "code": 400})
			w.Write(b)
			return
		}
		var step int
		if summary {
			f.summaries++
		} else {
			step = f.main
			f.main++
			var dec map[string]any
			json.Unmarshal(raw, &dec)
			f.bodies = append(f.bodies, dec)
		}
		f.mu.Unlock()
		// A model takes a moment before its first token.
		time.Sleep(time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		event := func(v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		chunk := func(delta map[string]any, finish any) {
			event(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		switch {
		case summary:
			chunk(map[string]any{"content": "## Task\nRead big.txt again and again.\n## Open todos and plan\nKeep reading."}, nil)
			chunk(map[string]any{}, "stop")
		case step >= f.steps:
			chunk(map[string]any{"content": "All done."}, nil)
			chunk(map[string]any{}, "stop")
		default:
			args := `{"files":[{"path":"big.txt"}]}`
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", step), "type": "function",
				"function": map[string]any{"name": tools.NameReadFiles, "arguments": args}}}}, nil)
			chunk(map[string]any{}, "tool_calls")
		}
		prompt := chars / cpt
		if f.fixedPrompt != 0 {
			prompt = f.fixedPrompt
		}
		if prompt < 0 {
			// Some servers send no usage, even when asked for it.
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		event(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *limitServer) provider(t *testing.T) provider.Provider {
	t.Helper()
	srv := f.serve(t)
	native := true
	p, err := provider.New(provider.Config{Name: "openai-compatible", Model: "local-model", BaseURL: srv.URL + "/v1",
		HTTPClient: srv.Client(), NativeTools: &native, Retry: provider.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// over returns the sizes of the requests over the limit.
func (f *limitServer) over() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, n := range f.sizes {
		if n > f.limit {
			out = append(out, n)
		}
	}
	return out
}

// TestUnknownLimitRecovered is a session against a server whose limit
// the daemon does not know (window set to 1,000,000; the server refuses
// past 90,000 characters), with big tool results: the turn ends normally,
// and the only request over the limit is the one that taught it, whether
// the refusal names the window, names it in tokens of a tokenizer finer
// than the daemon's estimate (so that the request looked under it; with
// no usage reported, the refusal alone must correct the estimate), or
// names none.
func TestUnknownLimitRecovered(t *testing.T) {
	for _, tc := range []struct {
		name          string
		named         bool
		charsPerToken int
		noUsage       bool
	}{{"named", true, 4, false}, {"named in finer tokens", true, 3, false}, {"named in finer tokens, no usage", true, 3, true}, {"not named", false, 4, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &limitServer{limit: 90000, steps: 40, nameWindow: tc.named, charsPerToken: tc.charsPerToken}
			if tc.noUsage {
				f.fixedPrompt = -1
			}
			s, _, _, _ := testSessionWith(t, f.provider(t), 1_000_000, 7000)
			stop, err := s.Prompt(t.Context(), "read big.txt forty times")
			if err != nil || stop != StopEndTurn {
				t.Fatalf("Prompt = %q, %v; want end_turn", stop, err)
			}
			if over := f.over(); len(over) != 1 {
				t.Errorf("requests over the limit: %v; want only the first refusal", over)
			}
			if f.summaries == 0 {
				t.Error("no summary was asked for")
			}
			if w := s.tokens.size(); w >= 1_000_000 {
				t.Errorf("window still %d after the refusal", w)
			}
		})
	}
}

// TestSummaryRequestTooLongIsCut is the case the summary request itself
// would be over the limit: a server that refuses past 40,000 characters
// while the daemon believes in a window of 1,000,000, and many tool
// results, each under the transcript's own cut, when the first refusal
// comes. The summary is made in a request that fits, the oldest tool
// outputs cut first, and the turn ends normally.
func TestSummaryRequestTooLongIsCut(t *testing.T) {
	f := &limitServer{limit: 40000, steps: 60}
	s, _, _, updates := testSessionWith(t, f.provider(t), 1_000_000, 1400)
	stop, err := s.Prompt(t.Context(), "read big.txt sixty times")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %q, %v; want end_turn", stop, err)
	}
	if f.summaries == 0 {
		t.Fatal("no summary was asked for")
	}
	said := false
	for _, u := range *updates {
		if c, ok := u.(wire.Compaction); ok && strings.Contains(c.Summary, "were cut before summarising") {
			said = true
		}
	}
	if !said {
		t.Error("no compaction says the oldest tool outputs were cut")
	}
	// Every request the daemon made after learning fits: at most one
	// main request and one summary request taught it.
	if over := f.over(); len(over) > 2 {
		t.Errorf("requests over the limit: %v", over)
	}
}

// TestUsageThatLiesLow is a server that reports 100 prompt tokens for
// every request, and one that reports no usage at all: the daemon's own
// estimate wins, so it compacts before the window and never sends a
// request the server must refuse.
func TestUsageThatLiesLow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prompt int
	}{{"always 100", 100}, {"none", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &limitServer{limit: 90000, steps: 40, fixedPrompt: tc.prompt, nameWindow: true}
			// The window is the server's: 22,500 tokens of four characters.
			s, _, _, _ := testSessionWith(t, f.provider(t), 22500, 7000)
			stop, err := s.Prompt(t.Context(), "read big.txt forty times")
			if err != nil || stop != StopEndTurn {
				t.Fatalf("Prompt = %q, %v; want end_turn", stop, err)
			}
			if over := f.over(); len(over) != 0 {
				t.Errorf("requests over the limit: %v; the window was known", over)
			}
			if f.summaries == 0 {
				t.Error("never compacted")
			}
			if used := s.tokens.inContext(0); used <= 120 {
				t.Errorf("context in use = %d, the server's figure; want the estimate", used)
			}
		})
	}
}

// TestSummaryInPasses: a history of long messages with no tool output to
// cut, summarised by a model that refuses summary requests past 12,000
// characters without saying its window: the summary is made in several
// passes, each request under the limit once the refusals taught it, and
// says so.
func TestSummaryInPasses(t *testing.T) {
	const limit = 12000
	var mu sync.Mutex
	var sizes []int
	refusal := &provider.Error{Provider: "openai", Status: 400, Attempts: 1, ContextLength: true,
		Message: "the request exceeds the available context size, try increasing it"}
	m := &scriptModel{summary: func(req provider.Request) (string, error) {
		n := len(req.System) + len(messageText(req.Messages[0]))
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
		if n > limit {
			return "", refusal
		}
		return "## Task\npart summarised", nil
	}}
	m.reply = func(int, provider.Request) ([]provider.Event, error) { return textEvents("ok"), nil }
	s, _, _, updates := testSession(t, m, 1_000_000, 0)
	var view []provider.Message
	for i := range 30 {
		view = append(view, provider.UserText(fmt.Sprintf("request %d: %s", i, strings.Repeat("u", 1000))),
			provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{provider.TextPart(strings.Repeat("a", 1000))}})
	}
	s.history = view
	if _, _, err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	var c *wire.Compaction
	for _, u := range *updates {
		if x, ok := u.(wire.Compaction); ok {
			c = &x
		}
	}
	if c == nil || !strings.Contains(c.Summary, "passes") {
		t.Fatalf("compaction = %+v, want a summary made in passes", c)
	}
	refused, passes := 0, 0
	for _, n := range sizes {
		if n > limit {
			refused++
			if passes > 0 {
				t.Errorf("a summary request of %d characters after one fitted: %v", n, sizes)
			}
		} else {
			passes++
		}
	}
	t.Logf("summary requests (characters): %v", sizes)
	if passes < 2 || refused > summaryAttempts {
		t.Errorf("summary requests (characters): %v; want a few refusals, then several passes", sizes)
	}
}
