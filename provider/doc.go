// Package provider holds the model clients (Anthropic, OpenAI and
// OpenAI-compatible endpoints, Gemini, and replay of recorded transcripts),
// each streaming into one event type the session turn loop consumes.
//
// The neutral model is small: a Request (system prompt, Messages of
// text, thinking, tool call and tool result Parts, ToolDefs) goes in
// through Provider.Stream, and a Stream of Events comes out: text and
// thinking deltas, complete tool calls (arguments assembled from however
// many chunks they came in), usage, and a final EventDone whose stop
// reason is one of end_turn, max_tokens, refusal and tool_use. Reply
// folds the events back into the assistant message for the history.
//
// Each real client goes through its official SDK with the SDK's own
// retries off; one retry policy (RetryPolicy) wraps them all. It retries
// rate limits, 5xx answers, failed connections and streams that broke
// before yielding anything, with exponential backoff, jitter and the
// server's Retry-After, a bounded number of times. A stream that breaks
// after yielding events is reported, never retried: retrying would repeat
// text the user has already seen. Failures are *Error values naming the
// provider, the HTTP status and the attempts.
//
// The API key is given by the caller (read from the environment variable
// the settings name), sent in request headers and nowhere else: error
// texts are scrubbed of it and the SDKs' own errors, which carry requests,
// are not kept. The SDKs are built so that they read no credentials or
// base URLs from the environment themselves.
//
// Tools are converted to each API's shape by tools.Render (Anthropic,
// OpenAI, Gemini). A provider whose NativeTools is false sends no tool
// definitions and rewrites tool calls and results in the history as text
// (ToolsAsText); the session documents the tools in the system prompt and
// parses XML calls out of the streamed text with package prompt.
//
// Package provider never imports rpc or session.
package provider
