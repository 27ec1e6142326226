// Package prompt builds what a model is told and reads back what it
// writes on the text path. SystemPrompt assembles the system prompt for a
// model family (generic, next-gen, xs) and mode from a fixed set of
// sections; on the XML path it also explains the call format around the
// tool docs that tools.Render gives. TurnContext writes the context block
// put before a turn's user text (date, git branch and status, open
// buffers). ContextVars and Vars.Fill fill template placeholders from a
// tools.Context. Parser turns a model's streamed text into prose and tool
// calls for models without native tool calling, and ToolCall.Args turns
// such a call's text values into the JSON arguments a tool builds from.
package prompt
