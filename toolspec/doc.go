// Package toolspec is how a tool is described to a model API: the
// ordered JSON tree its schema is kept in, the model families, and the
// converters to each API's tool shape (Anthropic, OpenAI, Gemini). It
// imports nothing of the project, so that the provider clients, which
// send those shapes, need nothing of the tools themselves.
package toolspec
