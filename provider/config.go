package provider

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
)

// Config selects and configures a provider.
type Config struct {
	// Name picks the client: "anthropic"; "openai"; "openai-compatible",
	// "ollama", "lmstudio", "vllm" or "openrouter" (OpenAI Chat
	// Completions at another base URL); "gemini"; or "replay".
	Name string
	// Model is the model identifier; required except for replay.
	Model string
	// API picks OpenAI's API for the openai provider and compatible
	// servers: "responses" or "chat" (Chat Completions). Empty takes
	// Responses for the OpenAI models served only there (the codex and
	// -pro models) and Chat Completions for the rest and for every
	// compatible server.
	API string
	// BaseURL overrides the API's address. Required for
	// openai-compatible; ollama, lmstudio, vllm and openrouter default to
	// their usual local or public addresses.
	BaseURL string
	// APIKey is the credential, read by the caller from the environment
	// variable the settings name. It is sent to the API and nowhere else:
	// errors and logs have it scrubbed. Required for anthropic, openai,
	// openrouter and gemini; optional for local servers.
	APIKey string
	// HTTPClient, when set, carries requests (proxies, test servers). Its
	// transport is wrapped, not modified.
	HTTPClient *http.Client
	// NativeTools, when set, says whether to use the API's own tool
	// calling. Unset, it is true for anthropic, openai, openrouter and
	// gemini, and false for local servers (openai-compatible, ollama,
	// lmstudio, vllm), whose models' native tool calling varies: the XML
	// text path works with every model. Replay takes it from the
	// transcript.
	NativeTools *bool
	// Retry bounds retries; the zero value is the default policy.
	Retry RetryPolicy
	// Limits bound a reply's time and size; zero fields take defaults.
	Limits Limits
	// Reasoning applies to requests that ask for none of their own.
	Reasoning Reasoning
	// Logger, when set, receives a warning for each retry.
	Logger *slog.Logger
	// Version is the daemon's, sent as User-Agent: cline-ls/<Version>
	// ("dev" when empty), so that a vendor or a proxy can tell its
	// requests from others'.
	Version string

	// Transcript is the replay provider's transcript file.
	Transcript string
	// Replay, when set, is the replay provider's transcript, taking
	// precedence over Transcript; tests of other packages build it in Go.
	Replay *Transcript
}

// header is the start of every request's headers, the client's own
// (key, API version) added to it.
func (c Config) header() http.Header {
	v := c.Version
	if v == "" {
		v = "dev"
	}
	h := http.Header{}
	h.Set("User-Agent", "cline-ls/"+v)
	return h
}

func (c Config) native() bool {
	if c.NativeTools != nil {
		return *c.NativeTools
	}
	switch c.Name {
	case "openai-compatible", "ollama", "lmstudio", "vllm":
		return false
	}
	return true
}

// compatBaseURL is the usual address of an OpenAI-compatible server.
func compatBaseURL(name string) string {
	switch name {
	case "ollama":
		return "http://localhost:11434/v1"
	case "lmstudio":
		return "http://localhost:1234/v1"
	case "vllm":
		return "http://localhost:8000/v1"
	case "openrouter":
		return "https://openrouter.ai/api/v1"
	}
	return ""
}

// canonicalName maps accepted spellings to canonical names.
func canonicalName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	switch name {
	case "claude":
		return "anthropic"
	case "openai_compatible", "openaicompatible", "compatible":
		return "openai-compatible"
	case "lm-studio", "lm_studio":
		return "lmstudio"
	case "google":
		return "gemini"
	}
	return name
}

// Names lists the provider names New accepts, canonical spellings only.
func Names() []string {
	return []string{"anthropic", "openai", "openai-compatible", "ollama", "lmstudio", "vllm", "openrouter", "gemini", "replay"}
}

// New returns the provider cfg names. It fails, without contacting
// anything, for an unknown name or a missing model, key or base URL.
func New(cfg Config) (Provider, error) {
	name := canonicalName(cfg.Name)
	cfg.Name = name
	needKey := false
	switch name {
	case "anthropic", "openai", "openrouter", "gemini":
		needKey = true
	case "openai-compatible", "ollama", "lmstudio", "vllm":
	case "replay":
		return newReplayFromConfig(cfg)
	case "":
		return nil, fmt.Errorf("provider: no provider named (want one of %s)", strings.Join(Names(), ", "))
	default:
		return nil, fmt.Errorf("provider: unknown provider %q (want one of %s)", cfg.Name, strings.Join(Names(), ", "))
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("provider: %s needs a model", name)
	}
	if err := cfg.Reasoning.Validate(); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	if needKey && cfg.APIKey == "" {
		return nil, fmt.Errorf("provider: %s needs an API key; set the environment variable the settings name", name)
	}
	switch name {
	case "anthropic":
		return newAnthropic(cfg), nil
	case "gemini":
		return newGemini(cfg)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = compatBaseURL(name)
	}
	if cfg.BaseURL == "" && name == "openai-compatible" {
		return nil, fmt.Errorf("provider: openai-compatible needs a base URL")
	}
	switch strings.ToLower(cfg.API) {
	case "", "responses", "chat", "chat-completions":
	default:
		return nil, fmt.Errorf("provider: API %q: want responses or chat", cfg.API)
	}
	if usesResponses(cfg) {
		return newResponses(cfg), nil
	}
	return newOpenAI(cfg), nil
}
