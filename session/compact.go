package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// Compaction keeps a long session inside its model's context window. The
// history the model sees (the view) is the full history with its older
// part replaced: by a summary the session's own model writes, or, when
// that fails, by the older messages with their tool outputs elided and,
// if still too long, the oldest turns dropped. The newest turns stay
// verbatim, and an assistant message with tool calls always stays with
// the results that answer it. Every replacement starts with facts the
// daemon keeps itself, so no summary can lose them: the user's latest
// request, every file the session changed, and the plan.
//
// The full history stays on disk: a compaction record says how to turn
// the view before it into the view after it, and Resume replays them.

// DefaultCompactAt is the share of the context window past which the next
// request is compacted first.
const DefaultCompactAt = 0.8

// Shares of the window that shape a compaction.
const (
	// keepShare of the window is kept verbatim at the end of the history.
	keepShare = 0.3
	// transcriptShare bounds the transcript sent to be summarised.
	transcriptShare = 0.6
	// fallbackShare bounds head and kept part when no summary could be
	// had.
	fallbackShare = 0.6
	// hardShare of the window is the most a request is sent with: the
	// margin covers the estimate's error.
	hardShare = 0.95
)

// Elision limits.
const (
	// elideAbove is the size of a tool output worth eliding.
	elideAbove = 200
	// summaryArgChars and summaryResultChars cut calls and results in the
	// transcript a summary is written from.
	summaryArgChars    = 600
	summaryResultChars = 1500
	// latestRequestChars caps the user's request quoted in the facts.
	latestRequestChars = 8000
)

// Compaction reasons.
const (
	ReasonAuto          = "auto"           // the next request would pass compactAt
	ReasonManual        = "manual"         // cline/compact
	ReasonContextLength = "context_length" // the provider refused a request as too long
)

// Compaction methods.
const (
	MethodSummary = "summary" // the model summarised the older part
	MethodElided  = "elided"  // older tool outputs were elided
	MethodDropped = "dropped" // older turns were dropped as well
	MethodImages  = "images"  // only older images were dropped
)

// Compaction is the payload of a compaction record: how the view changed.
type Compaction struct {
	Reason string `json:"reason"`
	Method string `json:"method"`
	// Before and After are the view's estimated tokens.
	Before int `json:"before"`
	After  int `json:"after"`
	// Summary is the model's summary, or a note on what was elided.
	Summary string `json:"summary"`
	// Head replaces every message of the view but the last Kept.
	Head []provider.Message `json:"head"`
	Kept int                `json:"kept"`
	// Micros is how long compacting took, in microseconds.
	Micros int64 `json:"micros,omitempty"`
}

// apply returns the view after the compaction.
func (c *Compaction) apply(view []provider.Message) []provider.Message {
	kept := view[max(0, len(view)-c.Kept):]
	return append(slices.Clone(c.Head), kept...)
}

// Update is the session/update that reports the compaction: "compaction"
// in the LSP dialect, an agent_message_chunk note in ACP's, which has no
// such update. A live session and a replayed one both build it here.
// file is the session file, which keeps what was replaced ("" when the
// session is not saved).
func (c *Compaction) Update(acp bool, file string) wire.SessionUpdate {
	if acp {
		kept := ""
		if file != "" {
			kept = "; the replaced turns stay in " + file
		}
		return wire.AgentMessageChunk{Content: wire.TextBlock{Text: fmt.Sprintf(
			"\n[context compacted (%s): about %d → %d tokens%s]\n", c.Method, c.Before, c.After, kept)}}
	}
	return wire.Compaction{Before: c.Before, After: c.After, Summary: c.Summary, HistoryFile: file}
}

// historyFile is the session's file, "" when it is not saved.
func (s *Session) historyFile() string {
	if s.cfg.Log == nil {
		return ""
	}
	return s.cfg.Log.Path()
}

// continueReminder is the user message yolo mode adds when a reply ends
// without submitting; it is not a request of the user's.
const continueReminder = "Continue the task. When it is done, call " + tools.NameSubmitAndExit + "."

// summaryPrompt is the system prompt of a summarising request.
const summaryPrompt = `You compact the history of a coding agent's session so that the work can go on in a smaller context window. You are given the conversation as a transcript. Write a summary in Markdown with exactly these sections:

## Task
What the user asked for, in their terms, and any constraints they gave.
## Decisions
What was decided and why, including approaches rejected.
## Files
Files read (what was learnt from them) and files changed (what was changed).
## Commands
Commands run and their outcome (passed, failed with which error).
## Open todos and plan
What remains to be done, in order, and the next step.

Be specific: keep names, paths, identifiers, error messages and numbers. Do not invent anything that is not in the transcript. Write only the summary.`

// tokens is the session's view of its context: the window and how to
// turn an estimate into the count the provider will report.
type tokens struct {
	compactAt float64 // share of window; fixed at New

	mu     sync.Mutex // guards the fields below
	model  string     // the provider and model window is of
	window int        // tokens; lowered by a context-length error that names it
	ratio  float64    // actual/estimated input of the last request; 0 before any
	used   int        // tokens in context after the last reply
}

func newTokens(cfg Config) *tokens {
	t := &tokens{compactAt: cfg.CompactAt}
	if t.compactAt <= 0 || t.compactAt > 1 {
		t.compactAt = DefaultCompactAt
	}
	t.follow(cfg.Provider, cfg.ContextWindow)
	return t
}

// follow takes the window of the model p uses now, when it is another
// than the one the window is of: a session's model can change between
// turns, and what was learnt of the old model's window and counts is not
// the new one's.
func (t *tokens) follow(p provider.Provider, override int) {
	key := ""
	if p != nil {
		key = p.Name() + "\x00" + p.Model()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if key == t.model && t.window > 0 {
		return
	}
	t.model, t.window, t.ratio = key, provider.WindowFor(p, override), 0
}

// estimate scales an estimate by the last request's correction.
func (t *tokens) estimate(raw int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ratio == 0 {
		return raw
	}
	return int(float64(raw) * t.ratio)
}

// calibrate records what the provider counted for a request whose raw
// estimate was raw. A count is believed only upwards: some compatible
// servers report no usage, or the same small figure for every request,
// and a count below our own estimate would let the history grow past the
// window. So the ratio never goes under 1, and the context in use is the
// larger of the count and the estimate.
func (t *tokens) calibrate(raw int, u provider.Usage) {
	actual := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	t.mu.Lock()
	defer t.mu.Unlock()
	if actual > 0 && raw > 0 {
		// Bounded above, so that one odd count cannot make the
		// estimate absurd.
		t.ratio = min(max(float64(actual)/float64(raw), 1), 4)
	}
	if raw > 0 || actual > 0 {
		t.used = max(actual, raw) + u.OutputTokens
	}
}

func (t *tokens) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.window
}

func (t *tokens) inContext(fallback int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.used > 0 {
		return t.used
	}
	return fallback
}

// refusedShare is the share of a refused request's estimate the window
// is lowered to when the refusal does not say how big the window is: the
// request did not fit, so the window is below it.
const refusedShare = 0.85

// learn lowers the window after the provider refused a request as too
// long; estimated is that request's (calibrated) estimate. A refusal
// that names the window gives it; one that names a window our estimate
// of the refused request was under shows the estimate low, and the
// ratio is raised to match; one that names none still shows the window
// is below the request.
func (t *tokens) learn(err error, estimated int) {
	n := provider.WindowFromError(err)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case n > 0:
		if estimated > 0 && estimated <= n {
			r := t.ratio
			if r == 0 {
				r = 1
			}
			t.ratio = min(r*float64(n)/float64(estimated)*1.05, 4)
		}
		t.window = min(t.window, n)
	case estimated > 0:
		t.window = min(t.window, int(refusedShare*float64(estimated)))
	}
}

// estimateMessages estimates messages as the provider will count them.
func (s *Session) estimateMessages(msgs []provider.Message) int {
	return s.tokens.estimate(provider.EstimateTokens(provider.Request{Messages: msgs}))
}

// ErrTooLarge is returned when even a compacted history does not fit the
// model's context window (a single message larger than the window).
var ErrTooLarge = errors.New("the conversation does not fit the model's context window even after compaction")

// ErrToolsTooLarge is returned when the system prompt and the tool
// definitions alone do not fit the model's context window: no compaction
// of the conversation can help, and the user must be told so.
var ErrToolsTooLarge = errors.New("the system prompt and tool definitions alone do not fit the model's context window")

// fit compacts before req is sent when it would pass compactAt of the
// window, and replaces req.Messages with the compacted view; compacted
// says it did, and then the caller renders the request again, since the
// instructions were read afresh. A request whose system prompt and tools
// alone pass the limit fails at once, blaming them, not the
// conversation.
func (s *Session) fit(ctx context.Context, req *provider.Request) (compacted bool, err error) {
	window := s.tokens.size()
	total := s.tokens.estimate(provider.EstimateTokens(*req))
	if float64(total) <= s.tokens.compactAt*float64(window) {
		return false, nil
	}
	overhead := total - s.estimateMessages(req.Messages)
	limit := int(hardShare * float64(window))
	if overhead > limit {
		mcp := 0
		for _, t := range req.Tools {
			if CategoryOf(t.Name, tools.KindOther, false) == CategoryMCP {
				mcp++
			}
		}
		return false, fmt.Errorf("%w: they take about %d tokens of the %d-token window (%d tool definitions, %d of them MCP tools); offer fewer tools (fewer MCP servers, or a mode with fewer tools)",
			ErrToolsTooLarge, overhead, window, len(req.Tools), mcp)
	}
	_, err = s.compact(ctx, ReasonAuto, overhead)
	switch {
	case errors.Is(err, errNothingToCompact):
	case err != nil:
		return false, err
	default:
		compacted = true
	}
	req.Messages = s.History()
	if s.tokens.estimate(provider.EstimateTokens(*req)) > limit {
		return compacted, fmt.Errorf("%w (the system prompt and tool definitions take about %d tokens of the %d-token window)", ErrTooLarge, overhead, window)
	}
	return compacted, nil
}

// recoverContext handles a request the provider refused as too long:
// it learns the window from the error and compacts, reporting whether
// the request is worth another try: the first time a request is refused,
// once compacted; after that, only when the conversation it would send
// is now smaller. The turn asks again for as long as that holds, so a
// turn does not end on a context-length error while there is history
// left to cut, and cannot loop on one that compaction does not shrink.
func (s *Session) recoverContext(ctx context.Context, err error, req provider.Request, first bool) bool {
	if !errors.Is(err, provider.ErrContextLength) {
		return false
	}
	total := s.tokens.estimate(provider.EstimateTokens(req))
	s.tokens.learn(err, total)
	overhead := s.tokens.estimate(provider.EstimateTokens(req)) - s.estimateMessages(req.Messages)
	if overhead > int(hardShare*float64(s.tokens.size())) {
		// No compaction can help: the retry's fit says what is too big.
		return true
	}
	before := provider.EstimateTokens(provider.Request{Messages: req.Messages})
	if _, cerr := s.compact(ctx, ReasonContextLength, overhead); cerr != nil {
		return false
	}
	return first || provider.EstimateTokens(provider.Request{Messages: s.History()}) < before
}

// Compact compacts the history now (cline/compact) and returns the view's
// estimated tokens before and after. It fails with ErrBusy while a turn
// runs.
func (s *Session) Compact(ctx context.Context) (before, after int, err error) {
	if s.cfg.Provider == nil {
		return 0, 0, errors.New("no model is configured to summarise with")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.beginRun(cancel); err != nil {
		return 0, 0, err
	}
	defer func() {
		s.endRun()
		s.flush()
	}()
	c, err := s.compact(ctx, ReasonManual, s.overhead())
	if errors.Is(err, errNothingToCompact) {
		n := s.estimateMessages(s.History())
		return n, n, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return c.Before, c.After, nil
}

// overhead estimates the system prompt and tools of the next request.
func (s *Session) overhead() int {
	tctx, enabled, _ := s.toolsFor(s.Mode())
	req, _, err := s.request(tctx, enabled)
	if err != nil {
		return 0
	}
	req.Messages = nil
	return s.tokens.estimate(provider.EstimateTokens(req))
}

var errNothingToCompact = errors.New("nothing to compact")

// compact replaces the older part of the view, persists the record and
// tells the client. overhead is the estimated system prompt and tools.
func (s *Session) compact(ctx context.Context, reason string, overhead int) (*Compaction, error) {
	// A PreCompact hook, when the hooks have one, runs here, first: every
	// compaction (auto, manual, after a refusal) passes through.
	s.preCompact(ctx, reason)
	start := time.Now()
	view := s.History()
	window := s.tokens.size()
	before := s.estimateMessages(view)
	keep := keepShare * float64(window)
	if reason == ReasonManual {
		// Asked to compact a short history: still keep only its newest part.
		keep = keepShare * float64(min(window, before))
	}
	// Only when the estimate says the window is filling: after a
	// context-length refusal the estimate was just shown wrong, and the
	// one retry deserves the whole compaction.
	if reason == ReasonAuto {
		if c := s.dropImages(view, reason, overhead, before); c != nil {
			return s.commitCompaction(c, view, start), nil
		}
	}
	split := s.splitKept(view, int(keep))
	if split == 0 {
		return nil, errNothingToCompact
	}
	old, kept := view[:split], view[split:]
	c := &Compaction{Reason: reason, Kept: len(kept), Before: before}
	// The summary request carries no tools and a short system prompt:
	// the transcript may take the share of the window itself.
	summary, usage, err := s.summarise(ctx, old, int(transcriptShare*float64(window)))
	// A refused summary request may have taught a smaller window.
	window = s.tokens.size()
	s.meter.add(s.cfg.Provider, usage)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err == nil {
		c.Method, c.Summary = MethodSummary, summary
		c.Head = []provider.Message{s.factsMessage(summary, old)}
	} else {
		budget := int(fallbackShare*float64(window)) - overhead - s.estimateMessages(kept)
		c.Head, c.Method = s.elide(old, budget)
		c.Summary = s.cfg.Host.Redact(fmt.Sprintf("No summary (%v): older tool outputs were elided", err))
		if c.Method == MethodDropped {
			c.Summary += " and the oldest turns dropped"
		}
		c.Summary += "."
		c.Head = append([]provider.Message{s.factsMessage("", old)}, c.Head...)
	}
	next := c.apply(view)
	// The kept part itself may be too long (one huge tool output): elide
	// its outputs too, all but the newest turn's.
	if overhead+s.estimateMessages(next) > int(hardShare*float64(window)) {
		if last := s.splitKept(kept, 0); last > 0 {
			head, _ := s.elide(kept[:last], math.MaxInt)
			c.Head = append(c.Head, head...)
			c.Kept = len(kept) - last
		}
	}
	return s.commitCompaction(c, view, start), nil
}

// commitCompaction makes c's view the session's, persists the record and
// tells the client.
func (s *Session) commitCompaction(c *Compaction, view []provider.Message, start time.Time) *Compaction {
	next := c.apply(view)
	c.After = s.estimateMessages(next)
	c.Micros = time.Since(start).Microseconds()
	// The instructions are not the history's to summarise: they are read
	// afresh, so the next request's system prompt has them as they are
	// now.
	instr := s.cfg.Host.Instructions()
	s.mu.Lock()
	s.history = next
	s.instr = instr
	s.mu.Unlock()
	s.persist(Record{Type: RecordCompaction, Compaction: c})
	s.cfg.Host.Update(c.Update(s.cfg.ACP, s.historyFile()))
	return c
}

// dropImages is the first thing compaction gives up: the images of every
// turn but the newest, each an image's worth of tokens however small. It
// returns the compaction when that alone brings the next request under
// compactAt of the window, else nil (the summary or the elision that
// follows drops them anyway).
func (s *Session) dropImages(view []provider.Message, reason string, overhead, before int) *Compaction {
	last := s.splitKept(view, 0)
	if last == 0 {
		return nil
	}
	head, n := withoutImages(view[:last])
	if n == 0 {
		return nil
	}
	c := &Compaction{Reason: reason, Method: MethodImages, Before: before, Head: head, Kept: len(view) - last,
		Summary: fmt.Sprintf("%d older images dropped.", n)}
	if overhead+s.estimateMessages(c.apply(view)) > int(s.tokens.compactAt*float64(s.tokens.size())) {
		return nil
	}
	return c
}

// withoutImages returns msgs with each image replaced by a note of its
// own, and how many there were.
func withoutImages(msgs []provider.Message) ([]provider.Message, int) {
	n := 0
	out := make([]provider.Message, len(msgs))
	for i, m := range msgs {
		out[i] = provider.Message{Role: m.Role, Parts: make([]provider.Part, len(m.Parts))}
		for j, p := range m.Parts {
			switch {
			case p.Image != nil:
				n++
				p = provider.TextPart(droppedImage)
			case p.Result != nil && len(p.Result.Images) > 0:
				n += len(p.Result.Images)
				r := *p.Result
				r.Content = strings.TrimSuffix(r.Content, "\n") + "\n" + strings.Repeat(droppedImage+"\n", len(r.Images))
				r.Images = nil
				p.Result = &r
			}
			out[i].Parts[j] = p
		}
	}
	return out, n
}

// droppedImage stands where compaction took an image out.
const droppedImage = "[image dropped to save context; read the file again to see it]"

// splitKept returns where the verbatim tail of view starts: at a turn
// boundary (a message that is not a tool result), as early as the
// budget allows, and never at 0 when there is more than one turn; with a
// budget too small for even the newest turn, the newest turn is kept.
func (s *Session) splitKept(view []provider.Message, budget int) int {
	split := len(view)
	for i := len(view) - 1; i > 0; i-- {
		if view[i].Role == provider.RoleTool {
			continue
		}
		// view[i:] is a whole number of turns.
		if split < len(view) && s.estimateMessages(view[i:]) > budget {
			break
		}
		split = i
	}
	if split == len(view) {
		return 0
	}
	return split
}

// Summary passes.
const (
	// summaryAttempts bounds the summary requests refused as too long
	// before compaction falls back to eliding.
	summaryAttempts = 6
	// minTranscript is the smallest transcript budget, in tokens, worth
	// a summary request.
	minTranscript = 256
)

// summarise asks the session's model for a summary of old, rendered as
// transcripts of at most budget tokens each: the oldest tool outputs are
// cut first, and what still does not fit is summarised in several
// passes, each given the summary so far. A summary request refused as
// too long teaches the window and is made again smaller; the summary
// says what was cut.
func (s *Session) summarise(ctx context.Context, old []provider.Message, budget int) (string, provider.Usage, error) {
	var total provider.Usage
	for attempt := 1; ; attempt++ {
		maxTokens := min(4096, max(512, s.tokens.size()/8))
		chunks, cuts := s.transcriptChunks(old, budget, maxTokens)
		summary, usage, refused, err := s.summaryPasses(ctx, chunks, maxTokens)
		total = addUsage(total, usage)
		if err == nil {
			if cuts > 0 {
				summary += fmt.Sprintf("\n\n(To fit the summary request, the outputs of the %d oldest tool calls were cut before summarising.)", cuts)
			}
			if len(chunks) > 1 {
				summary += fmt.Sprintf("\n\n(The earlier part was summarised in %d passes.)", len(chunks))
			}
			return summary, total, nil
		}
		if !errors.Is(err, provider.ErrContextLength) || attempt == summaryAttempts || ctx.Err() != nil {
			return "", total, err
		}
		s.tokens.learn(err, s.tokens.estimate(provider.EstimateTokens(refused)))
		budget = min(budget/2, int(transcriptShare*float64(s.tokens.size())))
		if budget < minTranscript {
			return "", total, err
		}
	}
}

// summaryPasses summarises chunks in order, each pass given the summary
// of the ones before; on failure it returns the request that failed.
func (s *Session) summaryPasses(ctx context.Context, chunks []string, maxTokens int) (string, provider.Usage, provider.Request, error) {
	var total provider.Usage
	summary := ""
	for i, chunk := range chunks {
		text := "<transcript>\n" + chunk + "\n</transcript>\n\nSummarise the conversation above."
		if i > 0 {
			text = "<summary_so_far>\n" + summary + "\n</summary_so_far>\n\n" + text +
				" It continues the part the summary so far covers: write one summary of both."
		}
		req := provider.Request{System: summaryPrompt, Messages: []provider.Message{provider.UserText(text)}, MaxTokens: maxTokens}
		next, usage, err := s.summaryRequest(ctx, req)
		total = addUsage(total, usage)
		if err != nil {
			return "", total, req, err
		}
		summary = next
	}
	return summary, total, provider.Request{}, nil
}

// summaryRequest makes one summary request.
func (s *Session) summaryRequest(ctx context.Context, req provider.Request) (string, provider.Usage, error) {
	stream, err := s.cfg.Provider.Stream(ctx, req)
	if err != nil {
		return "", provider.Usage{}, err
	}
	reply, err := provider.Collect(stream)
	if err != nil {
		return "", reply.Usage, err
	}
	text := strings.TrimSpace(reply.Text())
	if text == "" {
		return "", reply.Usage, errors.New("the model wrote an empty summary")
	}
	return s.cfg.Host.Redact(text), reply.Usage, nil
}

// transcriptChunks renders msgs as transcripts for summarising, calls
// and results cut short, each at most budget tokens but for the room a
// later pass needs for the summary so far (reserve). When the whole is
// over budget the outputs of the oldest calls are cut first, and cuts
// says how many; what is still over budget is split, at message
// boundaries, into several chunks.
func (s *Session) transcriptChunks(msgs []provider.Message, budget, reserve int) (chunks []string, cuts int) {
	size := func(text string) int { return s.tokens.estimate(len(text)/int(bytesPerTokenText) + 1) }
	parts := make([]string, len(msgs))
	total := 0
	for i, m := range msgs {
		parts[i] = renderMessage(m, summaryResultChars)
		total += size(parts[i])
	}
	for i := 0; i < len(msgs) && total > budget; i++ {
		if !hasResults(msgs[i]) {
			continue
		}
		total -= size(parts[i])
		parts[i] = renderMessage(msgs[i], 0)
		total += size(parts[i])
		cuts++
	}
	if total <= budget {
		return []string{strings.Join(parts, "\n\n")}, cuts
	}
	// Later passes carry the summary so far.
	room := max(budget-reserve, minTranscript)
	var cur []string
	used := 0
	for _, p := range parts {
		n := size(p)
		if n > room {
			p = cut(p, room*int(bytesPerTokenText))
			n = size(p)
		}
		if used+n > room && len(cur) > 0 {
			chunks = append(chunks, strings.Join(cur, "\n\n"))
			cur, used = nil, 0
		}
		cur = append(cur, p)
		used += n
	}
	if len(cur) > 0 {
		chunks = append(chunks, strings.Join(cur, "\n\n"))
	}
	return chunks, cuts
}

// bytesPerTokenText is the bytes a token of transcript text is counted
// as, the figure provider.EstimateTokens uses for text.
const bytesPerTokenText = 4

func hasResults(m provider.Message) bool {
	for _, p := range m.Parts {
		if p.Result != nil && p.Result.Content != "" {
			return true
		}
	}
	return false
}

// renderMessage renders a message for a transcript, each tool output cut
// to resultChars bytes (0: only its size is said).
func renderMessage(m provider.Message, resultChars int) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(string(m.Role)) + ":")
	for _, p := range m.Parts {
		switch {
		case p.Kind == provider.PartText:
			b.WriteString("\n" + p.Text)
		case p.Call != nil:
			fmt.Fprintf(&b, "\n→ %s %s", p.Call.Name, cut(string(p.Call.Args), summaryArgChars))
		case p.Result != nil:
			outcome := "ok"
			if p.Result.IsError {
				outcome = "error"
			}
			if resultChars == 0 {
				fmt.Fprintf(&b, "\n← %s (%s): [output of %d bytes cut]", p.Result.Name, outcome, len(p.Result.Content))
				continue
			}
			fmt.Fprintf(&b, "\n← %s (%s): %s", p.Result.Name, outcome, cut(p.Result.Content, resultChars))
		}
	}
	return b.String()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n-- // not inside a UTF-8 sequence
	}
	return s[:n] + fmt.Sprintf(" […%d more bytes]", len(s)-n)
}

// elide returns old with its long tool outputs replaced by a line giving
// their size and, when that is still over budget tokens, its oldest
// turns dropped; the method says which it took.
func (s *Session) elide(old []provider.Message, budget int) ([]provider.Message, string) {
	// An earlier compaction's facts are restated by the new one.
	old = slices.DeleteFunc(slices.Clone(old), isFacts)
	old, _ = withoutImages(old)
	out := make([]provider.Message, len(old))
	for i, m := range old {
		out[i] = provider.Message{Role: m.Role, Parts: make([]provider.Part, len(m.Parts))}
		for j, p := range m.Parts {
			if p.Result != nil && len(p.Result.Content) > elideAbove {
				r := *p.Result
				r.Content = fmt.Sprintf("[output elided (%d bytes)]", len(p.Result.Content))
				p.Result = &r
			}
			if p.Kind == provider.PartThinking {
				p = provider.TextPart("") // thinking is not worth its space any more
			}
			out[i].Parts[j] = p
		}
		out[i].Parts = slices.DeleteFunc(out[i].Parts, func(p provider.Part) bool { return p.Kind == provider.PartText && p.Text == "" })
	}
	out = slices.DeleteFunc(out, func(m provider.Message) bool { return len(m.Parts) == 0 })
	if s.estimateMessages(out) <= budget {
		return out, MethodElided
	}
	// Drop whole turns from the front, never a call without its result.
	for len(out) > 0 && s.estimateMessages(out) > budget {
		next := 1
		for next < len(out) && out[next].Role == provider.RoleTool {
			next++
		}
		out = out[next:]
	}
	return out, MethodDropped
}

// factsMessage opens a compacted view: the summary, then what the
// daemon itself keeps of the session: the user's latest request, the
// plan and the ledger (ledger.go). replaced is the part of the view the
// compaction replaces.
func (s *Session) factsMessage(summary string, replaced []provider.Message) provider.Message {
	var b strings.Builder
	b.WriteString(factsMarker)
	if summary != "" {
		b.WriteString("A summary of the earlier part follows; the newest messages come after it verbatim.]\n\n<summary>\n")
		b.WriteString(summary)
		b.WriteString("\n</summary>\n")
	} else {
		b.WriteString("Long tool outputs of the earlier part were elided; read the files again when you need them.]\n")
	}
	s.mu.Lock()
	latest, plan := s.lastPrompt, slices.Clone(s.plan)
	s.mu.Unlock()
	if latest != "" {
		b.WriteString("\nThe user's latest request, verbatim:\n<request>\n")
		b.WriteString(cut(latest, latestRequestChars))
		b.WriteString("\n</request>\n")
	}
	if len(plan) > 0 {
		b.WriteString("\nThe current plan:\n")
		for _, e := range plan {
			fmt.Fprintf(&b, "- [%s] %s\n", e.Status, e.Content)
		}
	}
	s.writeLedger(&b, replaced)
	return provider.UserText(s.cfg.Host.Redact(b.String()))
}

// factsMarker starts every facts message.
const factsMarker = "[The conversation so far was compacted to fit the context window. "

func isFacts(m provider.Message) bool {
	return m.Role == provider.RoleUser && len(m.Parts) > 0 && strings.HasPrefix(m.Parts[0].Text, factsMarker)
}

// noteEdits records the files a call changed, for the facts of later
// compactions, in the order they were first changed.
func (s *Session) noteEdits(edits []tools.FileEdit) {
	var added []string
	s.mu.Lock()
	for _, e := range edits {
		if e.Path != "" && !slices.Contains(s.edited, e.Path) {
			s.edited = append(s.edited, e.Path)
			added = append(added, e.Path)
		}
	}
	s.mu.Unlock()
	if len(added) > 0 {
		s.persist(Record{Type: RecordEdited, Edited: added})
	}
}

// Resumed is a saved session's state, rebuilt from its records.
type Resumed struct {
	Mode  string
	Title string
	// History is the view the model saw last: every compaction applied.
	History []provider.Message
	// Messages counts the full history on disk.
	Messages   int
	Plan       []PlanEntry
	Edited     []string
	Read       []string
	LastPrompt string
	// Usage and CostUSD total the session's replies.
	Usage   provider.Usage
	CostUSD float64
}

// Restore gives a session made from a Resumed history the rest of its
// saved state: plan, changed files, latest request and usage.
func (s *Session) Restore(r Resumed) {
	s.mu.Lock()
	s.plan, s.edited, s.read, s.lastPrompt = r.Plan, r.Edited, r.Read, r.LastPrompt
	s.mu.Unlock()
	s.meter.restore(usageTotal{Usage: r.Usage, CostUSD: r.CostUSD, priced: r.CostUSD > 0})
}

// Resume rebuilds a session's state from Store.Load's results.
func Resume(meta Meta, recs []Record) Resumed {
	r := Resumed{Mode: meta.Mode, Title: meta.Title}
	for _, rec := range recs {
		switch rec.Type {
		case RecordMessage:
			m := *rec.Message
			r.History = append(r.History, m)
			r.Messages++
			if m.Role == provider.RoleUser {
				if t := messageText(m); t != "" && t != continueReminder {
					r.LastPrompt = t
				}
			}
		case RecordCompaction:
			if rec.Compaction != nil {
				r.History = rec.Compaction.apply(r.History)
			}
		case RecordRewind:
			if rec.Keep <= len(r.History) {
				r.History = r.History[:rec.Keep]
			}
		case RecordMode:
			r.Mode = rec.Mode
		case RecordTitle:
			r.Title = rec.Title
		case RecordPlan:
			r.Plan = rec.Plan
		case RecordEdited:
			for _, p := range rec.Edited {
				if !slices.Contains(r.Edited, p) {
					r.Edited = append(r.Edited, p)
				}
			}
			for _, p := range rec.Read {
				if !slices.Contains(r.Read, p) {
					r.Read = append(r.Read, p)
				}
			}
		case RecordUsage:
			r.Usage = addUsage(r.Usage, *rec.Usage)
			r.CostUSD += rec.CostUSD
		}
	}
	r.Title = prompt.UserWords(r.Title)
	return r
}

// isPrompt reports whether a history message is a prompt of the user's:
// a user message that is not yolo's reminder to go on.
func isPrompt(m provider.Message) bool {
	return m.Role == provider.RoleUser && !isFacts(m) && messageText(m) != continueReminder
}

// Turns counts the prompts of a session's records: the turns a fork can
// be made at.
func Turns(recs []Record) int {
	n := 0
	for _, rec := range recs {
		if rec.Type == RecordMessage && isPrompt(*rec.Message) {
			n++
		}
	}
	return n
}

// UpToTurn returns the records of a session up to the end of its turn
// atTurn (1-based; 0 means all of them): everything recorded before its
// next prompt. What follows a prompt (replies, compactions, plan and
// usage records) belongs to its turn, so the records kept replay to the
// state the session had when that turn ended.
func UpToTurn(recs []Record, atTurn int) ([]Record, error) {
	total := Turns(recs)
	switch {
	case atTurn < 0:
		return nil, fmt.Errorf("atTurn %d: turns count from 1 (0 for all of them)", atTurn)
	case atTurn > total:
		return nil, fmt.Errorf("atTurn %d: the session has %d turns", atTurn, total)
	case atTurn == 0 || atTurn == total:
		return recs, nil
	}
	n := 0
	for i, rec := range recs {
		if rec.Type == RecordMessage && isPrompt(*rec.Message) {
			if n == atTurn {
				return recs[:i], nil
			}
			n++
		}
	}
	return recs, nil
}

func messageText(m provider.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == provider.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
