// Package prompt builds system prompts per model family and mode, fills
// template placeholders, documents tools for the XML text path and parses a
// model's streamed text back into tool calls.
package prompt
