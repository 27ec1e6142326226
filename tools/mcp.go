package tools

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
)

// mcpSeparator joins a server's UID and a tool's name in the name the
// model sees: <serverUid>__mcp__<tool>.
const mcpSeparator = "__mcp__"

// MaxToolNameLen is the longest tool name providers accept (OpenAI,
// Anthropic and Gemini all stop at 64 characters).
const MaxToolNameLen = 64

// MCPServerTools is what the MCP bridge knows of one configured server:
// its UID, whether the user disabled it, and the tools it listed.
type MCPServerTools struct {
	UID      string
	Disabled bool
	Tools    []MCPToolDef
}

// MCPToolDef is one tool as an MCP server describes it (tools/list).
type MCPToolDef struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the server's JSON Schema, kept whole.
	InputSchema json.RawMessage
}

// MCPToolSpec is the spec of one server tool plus where calls to it go.
type MCPToolSpec struct {
	Spec Spec
	// Server and Tool are the server's UID and the tool's own name, for
	// the tools/call request; Spec.Name may be shortened or suffixed.
	Server string
	Tool   string
}

// MCPToolSpecs returns a spec per tool of every enabled server, named
// <serverUid>__mcp__<tool> with the server's input schema kept whole
// (enum, format, nested objects). Characters providers refuse in names
// become "_"; a name longer than MaxToolNameLen keeps a readable prefix
// of both parts plus a hash of the original pair; names that still
// collide get _2, _3... in (UID, tool name) order, so the result does not
// depend on the order servers were listed in. Shortened or renamed tools,
// a tool listed twice and a schema that cannot be used are all logged on
// logger (slog.Default when nil): nothing disappears silently. The
// result is sorted by server UID, then tool name.
func MCPToolSpecs(servers []MCPServerTools, logger *slog.Logger) []MCPToolSpec {
	if logger == nil {
		logger = slog.Default()
	}
	type entry struct {
		uid string
		def MCPToolDef
	}
	var entries []entry
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		for _, d := range s.Tools {
			entries = append(entries, entry{s.UID, d})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.uid, b.uid), cmp.Compare(a.def.Name, b.def.Name))
	})
	used := map[string]bool{}
	var out []MCPToolSpec
	for i, e := range entries {
		if i > 0 && entries[i-1].uid == e.uid && entries[i-1].def.Name == e.def.Name {
			logger.Warn("mcp: server lists a tool twice; keeping the first", "server", e.uid, "tool", e.def.Name)
			continue
		}
		params := e.def.InputSchema
		if t := bytes.TrimSpace(params); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		v, err := newValidator(e.def.Name, params)
		if err != nil {
			logger.Warn("mcp: tool left out, its input schema cannot be used", "server", e.uid, "tool", e.def.Name, "err", err)
			continue
		}
		if err := v.uncompiled(); err != nil {
			logger.Warn("mcp: tool's input schema cannot be compiled; its arguments pass unchecked", "server", e.uid, "tool", e.def.Name, "err", err)
		}
		name, short := mcpName(e.uid, e.def.Name)
		if short {
			logger.Warn("mcp: tool name over 64 characters, shortened", "server", e.uid, "tool", e.def.Name, "name", name)
		}
		if unique := uniqueName(name, used); unique != name {
			logger.Warn("mcp: tool name taken, renamed", "server", e.uid, "tool", e.def.Name, "name", unique)
			name = unique
		}
		used[name] = true
		desc := e.def.Description
		if desc == "" {
			desc = "Tool " + e.def.Name + " of MCP server " + e.uid + "."
		}
		display := cmp.Or(e.def.Title, e.def.Name)
		out = append(out, MCPToolSpec{
			Spec: Spec{
				ID:          name,
				Name:        name,
				DisplayName: display,
				Description: desc,
				Parameters:  params,
				Kind:        KindOther,
			},
			Server: e.uid,
			Tool:   e.def.Name,
		})
	}
	return out
}

// mcpName builds <uid>__mcp__<tool> from sanitised parts, shortened when
// too long. A shortened name keeps the separator, so Preset.Allows still
// recognises it, and gives the tool part the larger share, since it says
// what the tool does.
func mcpName(uid, tool string) (name string, shortened bool) {
	u, t := sanitizeName(uid), sanitizeName(tool)
	name = u + mcpSeparator + t
	if len(name) <= MaxToolNameLen {
		return name, false
	}
	h := shortHash(uid + "\x00" + tool)
	room := MaxToolNameLen - len(mcpSeparator) - 1 - len(h)
	ul := min(len(u), max(room-len(t), 16))
	tl := min(len(t), room-ul)
	return u[:ul] + mcpSeparator + t[:tl] + "_" + h, true
}

// shortenName cuts a name to MaxToolNameLen, replacing its tail by a hash
// of the whole so that different long names stay different.
func shortenName(name string) (string, bool) {
	if len(name) <= MaxToolNameLen {
		return name, false
	}
	h := shortHash(name)
	return name[:MaxToolNameLen-1-len(h)] + "_" + h, true
}

// shortHash is 8 hex digits of SHA-256: stable across runs and machines,
// unlike Go's map hashing.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// sanitizeName replaces every character outside [A-Za-z0-9_-] with "_",
// and makes the name start with a letter or "_", as Gemini requires.
func sanitizeName(s string) string {
	b := make([]byte, 0, len(s)+1)
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	if len(b) == 0 || !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z' || b[0] == '_') {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// uniqueName returns name, or name with the first free suffix _2, _3...,
// cut so that the result stays within MaxToolNameLen.
func uniqueName(name string, used map[string]bool) string {
	if !used[name] {
		return name
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		base := name
		if len(base)+len(suffix) > MaxToolNameLen {
			base = base[:MaxToolNameLen-len(suffix)]
		}
		if c := base + suffix; !used[c] {
			return c
		}
	}
}
