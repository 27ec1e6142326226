// Package provider holds the model clients (Anthropic, OpenAI and
// OpenAI-compatible endpoints, Gemini, and replay of recorded transcripts),
// each streaming into one event type the session turn loop consumes.
//
// The neutral model is small: a Request (system prompt, Messages of
// text, thinking, tool call and tool result Parts, ToolDef tools) goes in
// through Provider.Stream, and a Stream of Events comes out: text and
// thinking deltas, complete tool calls (arguments assembled from however
// many chunks they came in), usage, and a final EventDone whose stop
// reason is one of end_turn, max_tokens, refusal and tool_use. Reply
// folds the events back into the assistant message for the history.
//
// Each real client is our own, on net/http: it builds its API's JSON
// request, reads the Server-Sent Events of the reply (http.go, on
// internal/sse) and maps them to Events. One retry policy (RetryPolicy)
// covers them all. It retries rate limits, 408, 409 and 5xx answers,
// failed connections and streams that broke before yielding anything,
// with exponential backoff, jitter and the server's Retry-After, a
// bounded number of times. A stream that
// breaks after yielding events is reported, never retried: retrying would
// repeat text the user has already seen. Failures are *Error values
// naming the provider, the HTTP status and the attempts; a prompt over
// the model's context window matches ErrContextLength and is not retried.
//
// The API key is given by the caller (read from the environment variable
// the settings name), sent in request headers and nowhere else: error
// texts are scrubbed of it. Nothing is read from the vendors' own
// environment variables (ANTHROPIC_*, OPENAI_*, GOOGLE_*), so a key is
// never sent to a server it was not configured for.
//
// User messages may carry images (ImagePart), sent inline in each API's
// shape.
//
// Tools are converted to each API's shape by toolspec.Render (Anthropic,
// OpenAI, Gemini). A provider whose NativeTools is false sends no tool
// definitions and rewrites tool calls and results in the history as text
// (ToolsAsText); the session documents the tools in the system prompt and
// parses XML calls out of the streamed text with package prompt.
//
// Package provider never imports rpc or session.
package provider
