package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ModelInfo is one model a provider offers.
type ModelInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow"`
	Vision        bool   `json:"vision"`
}

// Bounds of a models listing: the endpoint is the provider's, but its
// answer is read like any other outside input.
const (
	listTimeout = 10 * time.Second
	listBytes   = 4 << 20
	listModels  = 2000
)

// ListModels asks the provider cfg names for the models it serves, from
// its models endpoint (OpenAI and compatible servers: /models;
// Anthropic: /v1/models; Gemini: models, those that generate content).
// It fails for a provider with no endpoint (replay) or when the endpoint
// does; the caller then offers KnownModels.
func ListModels(ctx context.Context, cfg Config) ([]ModelInfo, error) {
	name := canonicalName(cfg.Name)
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	header := http.Header{}
	var url string
	switch name {
	case "anthropic":
		url = joinURL(orDefault(cfg.BaseURL, "https://api.anthropic.com/"), "v1/models?limit=1000")
		header.Set("X-Api-Key", cfg.APIKey)
		header.Set("Anthropic-Version", anthropicVersion)
	case "gemini":
		url = joinURL(orDefault(cfg.BaseURL, "https://generativelanguage.googleapis.com/"), "v1beta/models?pageSize=1000")
		header.Set("X-Goog-Api-Key", cfg.APIKey)
	case "openai", "openai-compatible", "ollama", "lmstudio", "vllm", "openrouter":
		base := cfg.BaseURL
		if base == "" {
			base = compatBaseURL(name)
		}
		if base == "" && name == "openai" {
			base = "https://api.openai.com/v1/"
		}
		if base == "" {
			return nil, fmt.Errorf("provider: %s needs a base URL to list its models", name)
		}
		url = joinURL(base, "models")
		if cfg.APIKey != "" {
			header.Set("Authorization", "Bearer "+cfg.APIKey)
		}
	default:
		return nil, fmt.Errorf("provider: %s has no models endpoint", name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = header
	resp, err := httpClient(cfg.HTTPClient).Do(req)
	if err != nil {
		return nil, fmt.Errorf("provider: listing %s's models: %s", name, scrub(rootCause(err).Error(), cfg.APIKey))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, listBytes+1))
	if err != nil {
		return nil, fmt.Errorf("provider: listing %s's models: %s", name, scrub(err.Error(), cfg.APIKey))
	}
	if len(data) > listBytes {
		return nil, fmt.Errorf("provider: %s's models list is over %d bytes", name, listBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("provider: listing %s's models: HTTP %d: %s", name, resp.StatusCode, scrub(bodyText(data), cfg.APIKey))
	}
	var body struct {
		Data []struct {
			ID            string `json:"id"`
			DisplayName   string `json:"display_name"`
			Name          string `json:"name"`
			ContextLength int    `json:"context_length"`
		} `json:"data"`
		Models []struct {
			Name             string   `json:"name"`
			DisplayName      string   `json:"displayName"`
			InputTokenLimit  int      `json:"inputTokenLimit"`
			GenerationMethod []string `json:"supportedGenerationMethods"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("provider: %s's models list is not the expected JSON: %v", name, err)
	}
	var out []ModelInfo
	add := func(id, display string, window int) {
		id = strings.TrimSpace(id)
		if id == "" || len(out) >= listModels {
			return
		}
		if display == "" {
			display = id
		}
		if window <= 0 {
			window = ContextWindow(name, id)
		}
		out = append(out, ModelInfo{ID: id, Name: display, ContextWindow: window, Vision: SeesImages(name, id)})
	}
	for _, m := range body.Data {
		add(m.ID, firstOf(m.DisplayName, m.Name), m.ContextLength)
	}
	for _, m := range body.Models {
		if len(m.GenerationMethod) > 0 && !slices.Contains(m.GenerationMethod, "generateContent") {
			continue
		}
		add(strings.TrimPrefix(m.Name, "models/"), m.DisplayName, m.InputTokenLimit)
	}
	return out, nil
}

// KnownModels lists the models of the daemon's table that provider name
// serves, for a provider with no models endpoint or one that failed.
func KnownModels(name string) []ModelInfo {
	name = canonicalName(name)
	vendor := func(prefix string) string {
		switch {
		case strings.HasPrefix(prefix, "claude"):
			return "anthropic"
		case strings.HasPrefix(prefix, "gemini"):
			return "gemini"
		case strings.HasPrefix(prefix, "gpt-oss"):
			return ""
		case strings.HasPrefix(prefix, "gpt"), strings.HasPrefix(prefix, "o1"), strings.HasPrefix(prefix, "o3"),
			strings.HasPrefix(prefix, "o4"), strings.HasPrefix(prefix, "codex"):
			return "openai"
		}
		return ""
	}
	var out []ModelInfo
	for _, m := range models {
		// A bare family ("claude") is no model one can ask for.
		if vendor(m.prefix) != name || !strings.Contains(m.prefix, "-") {
			continue
		}
		out = append(out, ModelInfo{ID: m.prefix, Name: m.prefix, ContextWindow: m.window, Vision: SeesImages(name, m.prefix)})
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// scrub takes key out of text.
func scrub(text, key string) string {
	if key == "" {
		return text
	}
	return strings.ReplaceAll(text, key, "[redacted]")
}
