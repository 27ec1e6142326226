// Package provider holds the model clients (Anthropic, OpenAI and
// OpenAI-compatible endpoints, Gemini, and replay of recorded transcripts),
// each streaming into one event type the session turn loop consumes.
package provider
