package provider

import (
	"errors"
	"strconv"
	"strings"

	"github.com/cline-ls/cline-ls/toolspec"
)

// What the daemon knows about models it has not asked: how many tokens
// fit in a request, what a token costs, and how many tokens a request is
// likely to hold before the API says.

// WindowFromError returns the context window a context-length error
// names, or 0 when it names none. Servers that report their real window
// this way correct a table entry or the default for local models. Each
// client reads the figure where it parses the vendor's error
// (Error.ContextWindow).
func WindowFromError(err error) int {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrContextLength) {
		return 0
	}
	return e.ContextWindow
}

// WindowReporter is implemented by providers that learn their model's
// context window from the server (a local server's loaded model, say).
type WindowReporter interface {
	// ContextWindow returns the window in tokens, or 0 when unknown.
	ContextWindow() int
}

// Context windows when nothing better is known.
const (
	// DefaultLocalWindow is assumed for models served locally (Ollama,
	// LM Studio, vLLM, other OpenAI-compatible servers) that the table
	// does not name: their window is whatever the server was started
	// with, often far below the model's own limit, so guess low.
	DefaultLocalWindow = 32768
	// DefaultHostedWindow is assumed for a hosted API's unknown model.
	DefaultHostedWindow = 128000
)

// modelInfo is one table row: a model family by id prefix.
type modelInfo struct {
	prefix string
	window int
	// Prices in US dollars per million tokens; zero when unknown.
	input, output, cacheRead, cacheWrite float64
	// nextGen marks the frontier models that get the terser next-gen
	// prompt (toolspec.FamilyNextGen).
	nextGen bool
}

// models lists the known families. Lookup takes the longest matching
// prefix, so specific entries win over their family. Windows are the
// input the API accepts; prices are the list prices for prompts within
// the standard tier (some models charge more past 200k tokens, which is
// not modelled). Figures as published by the vendors in late 2025.
var models = []modelInfo{
	// Anthropic: prompt-cache writes cost 1.25× input, reads 0.1×.
	{prefix: "claude-opus-4-5", window: 200000, input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25, nextGen: true},
	{prefix: "claude-opus-4", window: 200000, input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75, nextGen: true},
	{prefix: "claude-sonnet-4", window: 200000, input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, nextGen: true},
	{prefix: "claude-3-7-sonnet", window: 200000, input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75},
	{prefix: "claude-3-5-sonnet", window: 200000, input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75},
	{prefix: "claude-haiku-4", window: 200000, input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25},
	{prefix: "claude-3-5-haiku", window: 200000, input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1},
	{prefix: "claude-3-haiku", window: 200000, input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3},
	{prefix: "claude-3-opus", window: 200000, input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75},
	{prefix: "claude", window: 200000},

	// OpenAI: cached input is billed at the cached rate, nothing extra
	// for writing. GPT-5 accepts 272k input tokens of its 400k.
	{prefix: "gpt-5-mini", window: 272000, input: 0.25, output: 2, cacheRead: 0.025},
	{prefix: "gpt-5-nano", window: 272000, input: 0.05, output: 0.4, cacheRead: 0.005},
	{prefix: "gpt-5", window: 272000, input: 1.25, output: 10, cacheRead: 0.125, nextGen: true},
	{prefix: "gpt-4.1-mini", window: 1047576, input: 0.4, output: 1.6, cacheRead: 0.1},
	{prefix: "gpt-4.1-nano", window: 1047576, input: 0.1, output: 0.4, cacheRead: 0.025},
	{prefix: "gpt-4.1", window: 1047576, input: 2, output: 8, cacheRead: 0.5},
	{prefix: "gpt-4o-mini", window: 128000, input: 0.15, output: 0.6, cacheRead: 0.075},
	{prefix: "gpt-4o", window: 128000, input: 2.5, output: 10, cacheRead: 1.25},
	{prefix: "gpt-4-turbo", window: 128000, input: 10, output: 30},
	{prefix: "gpt-oss", window: 131072},
	{prefix: "o1-mini", window: 128000, input: 1.1, output: 4.4, cacheRead: 0.55},
	{prefix: "o1", window: 200000, input: 15, output: 60, cacheRead: 7.5},
	{prefix: "o3-mini", window: 200000, input: 1.1, output: 4.4, cacheRead: 0.55},
	{prefix: "o3", window: 200000, input: 2, output: 8, cacheRead: 0.5},
	{prefix: "o4-mini", window: 200000, input: 1.1, output: 4.4, cacheRead: 0.275},
	{prefix: "codex-mini", window: 200000, input: 1.5, output: 6, cacheRead: 0.375},

	// Gemini: cached input at the context-caching rate.
	{prefix: "gemini-2.5-pro", window: 1048576, input: 1.25, output: 10, cacheRead: 0.125, nextGen: true},
	{prefix: "gemini-2.5-flash-lite", window: 1048576, input: 0.1, output: 0.4, cacheRead: 0.01},
	{prefix: "gemini-2.5-flash", window: 1048576, input: 0.3, output: 2.5, cacheRead: 0.03},
	{prefix: "gemini-2.0-flash", window: 1048576, input: 0.1, output: 0.4, cacheRead: 0.025},
	{prefix: "gemini-1.5-pro", window: 2097152},
	{prefix: "gemini-3-pro", window: 1048576, input: 2, output: 12, cacheRead: 0.2, nextGen: true},
	{prefix: "gemini", window: 1048576},
}

// lookupModel finds a model's row. Ids are compared in lower case
// without a router's vendor prefix ("anthropic/claude-sonnet-4.5" on
// OpenRouter) and with dots read as dashes ("claude-sonnet-4.5").
func lookupModel(model string) (modelInfo, bool) {
	id := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	dashed := strings.ReplaceAll(id, ".", "-")
	best, found := modelInfo{}, false
	for _, m := range models {
		p := m.prefix
		if (strings.HasPrefix(id, p) || strings.HasPrefix(dashed, strings.ReplaceAll(p, ".", "-"))) && len(p) > len(best.prefix) {
			best, found = m, true
		}
	}
	return best, found
}

// smallModel is the largest parameter count, in billions, that a model id
// may name for the xs prompt.
const smallModel = 14

// Family returns the prompt and tool family for a model: next-gen for the
// frontier models the table marks, xs for small models (an id that names
// at most 14 billion parameters, "qwen2.5-coder:7b", "llama-3.2-3b",
// which in practice run locally), generic for the rest. It is the one
// place that decides it.
func Family(model string) toolspec.Family {
	if n, ok := paramBillions(model); ok && n <= smallModel {
		return toolspec.FamilyXS
	}
	if m, ok := lookupModel(model); ok && m.nextGen {
		return toolspec.FamilyNextGen
	}
	return toolspec.FamilyGeneric
}

// paramBillions finds a parameter count in a model id: a number followed
// by "b" standing as its own part of the id ("7b", "1.5b", "8B"), the
// parts being split at anything but letters, digits and dots.
func paramBillions(model string) (float64, bool) {
	id := strings.ToLower(model)
	parts := strings.FieldsFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.')
	})
	for _, p := range parts {
		num, ok := strings.CutSuffix(p, "b")
		if !ok || num == "" || strings.Trim(num, "0123456789.") != "" {
			continue
		}
		if n, err := strconv.ParseFloat(num, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// isLocal reports whether a provider name is a locally run server.
func isLocal(name string) bool {
	switch canonicalName(name) {
	case "openai-compatible", "ollama", "lmstudio", "vllm":
		return true
	}
	return false
}

// ContextWindow returns the context window of a model behind a provider
// (names as Config.Name), in tokens: the table's figure, or a default
// that is low for local servers.
func ContextWindow(name, model string) int {
	if isLocal(name) {
		// A local server's window is the one it was started with; a
		// hosted family's name (gpt-oss on Ollama) says nothing about it.
		return DefaultLocalWindow
	}
	if m, ok := lookupModel(model); ok && m.window > 0 {
		return m.window
	}
	return DefaultHostedWindow
}

// WindowFor is the one rule for a session's context window: the
// configured override when positive, else the provider's own figure when
// it reports one, else the table's.
func WindowFor(p Provider, override int) int {
	if override > 0 {
		return override
	}
	if p == nil {
		return DefaultLocalWindow
	}
	if r, ok := p.(WindowReporter); ok {
		if n := r.ContextWindow(); n > 0 {
			return n
		}
	}
	return ContextWindow(p.Name(), p.Model())
}

// Cost returns what a reply's usage costs in US dollars, and false when
// the model's prices are unknown (local models are free). Anthropic's
// cache writes and reads are priced as such; elsewhere cache writes are
// zero and cached reads take the cached rate.
func Cost(name, model string, u Usage) (float64, bool) {
	if isLocal(name) || canonicalName(name) == "replay" {
		return 0, false
	}
	m, ok := lookupModel(model)
	if !ok || m.input == 0 {
		return 0, false
	}
	write := m.cacheWrite
	if write == 0 {
		write = m.input
	}
	read := m.cacheRead
	if read == 0 {
		read = m.input
	}
	usd := float64(u.InputTokens)*m.input + float64(u.OutputTokens)*m.output +
		float64(u.CacheReadTokens)*read + float64(u.CacheWriteTokens)*write
	return usd / 1e6, true
}

// Bytes per token assumed by EstimateTokens before any reply has said
// how many tokens a request really held. English prose and code run near
// four bytes a token in the BPE vocabularies of all three vendors; JSON
// (tool arguments, schemas) splits finer on its punctuation.
const (
	bytesPerToken     = 4.0
	jsonBytesPerToken = 3.3
	// messageOverhead is the tokens a message's framing costs (role,
	// separators) beyond its content.
	messageOverhead = 4
	// imageTokens is what one image is counted as, whatever its size:
	// about what Anthropic charges for an image at the size it scales
	// images down to (some 1.15 megapixels at 750 pixels a token). OpenAI
	// and Gemini charge less, so the estimate errs on the side of
	// compacting early.
	imageTokens = 1600
)

// EstimateTokens guesses how many input tokens a request holds. It is
// uncalibrated; callers scale it by what the last reply reported (the
// session does). No tokenizer is used: the vendors' tokenizers differ,
// Anthropic's is not published, and a BPE table for one vendor weighs
// megabytes, while compaction only needs a figure within some per cent.
func EstimateTokens(req Request) int {
	text := len(req.System)
	jsonBytes := 0
	for _, t := range req.Tools {
		text += len(t.Description)
		jsonBytes += len(t.Name) + len(t.Parameters)
	}
	overhead := 0
	for _, m := range req.Messages {
		overhead += messageOverhead
		for _, p := range m.Parts {
			switch {
			case p.Call != nil:
				jsonBytes += len(p.Call.Name) + len(p.Call.Args)
				overhead += messageOverhead
			case p.Result != nil:
				text += len(p.Result.Content)
				overhead += messageOverhead + imageTokens*len(p.Result.Images)
			case p.Image != nil:
				overhead += imageTokens
			default:
				text += len(p.Text)
			}
		}
	}
	return int(float64(text)/bytesPerToken+float64(jsonBytes)/jsonBytesPerToken) + overhead
}

// SeesImages reports whether a model takes images in a prompt. The hosted
// vendors' current models do, but for a few text-only ones; what a local
// server runs is unknown here, so it is let through and the server's own
// error, if any, reaches the user.
func SeesImages(name, model string) bool {
	m := strings.ToLower(model)
	for _, textOnly := range []string{"gpt-3.5", "o1-mini", "o3-mini", "codex-mini", "text-"} {
		if strings.HasPrefix(m, textOnly) {
			return false
		}
	}
	return true
}
