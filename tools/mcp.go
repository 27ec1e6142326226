package tools

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
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

// MCPLimits bounds the MCP tools offered to the model, so that a server
// listing thousands of tools, or a few with megabytes of descriptions,
// cannot fill the context window before the conversation starts. Bytes
// count a tool's name, description and input schema.
type MCPLimits struct {
	PerServer  int // tools of one server
	Total      int // tools of all servers together
	ToolBytes  int // one tool
	TotalBytes int // all tools together
}

// DefaultMCPLimits keeps the MCP tools within what every provider takes
// (OpenAI refuses more than 128 tools in a request, and the built-ins
// need their share) and within about 32k tokens.
var DefaultMCPLimits = MCPLimits{PerServer: 64, Total: 100, ToolBytes: 16 << 10, TotalBytes: 128 << 10}

// MCPLeftOut says what one server lost to MCPLimits.
type MCPLeftOut struct {
	Server  string
	Listed  int // tools the server listed, each counted once
	Offered int
	// Message names the server, the counts, the limits that applied and
	// some of the tools left out, for the log, the editor and the model.
	Message string
}

// MCPToolSpecs returns the specs MCPOffer offers within DefaultMCPLimits.
func MCPToolSpecs(servers []MCPServerTools, logger *slog.Logger) []MCPToolSpec {
	specs, _ := MCPOffer(servers, DefaultMCPLimits, logger)
	return specs
}

// MCPOffer returns a spec per tool of every enabled server, within
// limits, named <serverUid>__mcp__<tool> with the server's input schema
// kept whole (enum, format, nested objects). Characters providers refuse
// in names become "_"; a name longer than MaxToolNameLen keeps a readable
// prefix of both parts plus a hash of the original pair; names that still
// collide get _2, _3... in (UID, tool name) order, so the result does not
// depend on the order servers were listed in. Shortened or renamed tools,
// a tool listed twice and a schema that cannot be used are all logged on
// logger (slog.Default when nil): nothing disappears silently.
//
// Within limits, each server keeps its tools in name order; the totals
// are shared out a tool per server in turn, so one big server cannot
// crowd out the others. A server that lost tools gets an MCPLeftOut, and
// its message is added to the description of the first tool offered (the
// server's own, else any), so the model knows too. The result is sorted
// by server UID, then tool name.
func MCPOffer(servers []MCPServerTools, limits MCPLimits, logger *slog.Logger) ([]MCPToolSpec, []MCPLeftOut) {
	if logger == nil {
		logger = slog.Default()
	}
	type entry struct {
		uid    string
		def    MCPToolDef
		params json.RawMessage
		size   int
	}
	var entries []entry
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		for _, d := range s.Tools {
			entries = append(entries, entry{uid: s.UID, def: d})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.uid, b.uid), cmp.Compare(a.def.Name, b.def.Name))
	})
	type account struct {
		uid                                     string
		listed                                  int
		queue                                   []entry
		tooBig, overServer, overTotal, overSize []string
	}
	var accounts []*account
	for i, e := range entries {
		if i > 0 && entries[i-1].uid == e.uid && entries[i-1].def.Name == e.def.Name {
			logger.Warn("mcp: server lists a tool twice; keeping the first", "server", e.uid, "tool", e.def.Name)
			continue
		}
		if len(accounts) == 0 || accounts[len(accounts)-1].uid != e.uid {
			accounts = append(accounts, &account{uid: e.uid})
		}
		a := accounts[len(accounts)-1]
		a.listed++
		e.params = e.def.InputSchema
		if t := bytes.TrimSpace(e.params); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			e.params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		e.size = len(e.def.Name) + len(e.def.Title) + len(e.def.Description) + len(e.params)
		switch {
		case e.size > limits.ToolBytes:
			a.tooBig = append(a.tooBig, e.def.Name)
			continue
		case len(a.queue) >= limits.PerServer:
			a.overServer = append(a.overServer, e.def.Name)
			continue
		}
		v, err := newValidator(e.def.Name, e.params)
		if err != nil {
			logger.Warn("mcp: tool left out, its input schema cannot be used", "server", e.uid, "tool", e.def.Name, "err", err)
			continue
		}
		if err := v.uncompiled(); err != nil {
			logger.Warn("mcp: tool's input schema cannot be compiled; its arguments pass unchecked", "server", e.uid, "tool", e.def.Name, "err", err)
		}
		a.queue = append(a.queue, e)
	}
	var chosen []entry
	count, size := 0, 0
	offered := make(map[string]int, len(accounts))
	for more := true; more; {
		more = false
		for _, a := range accounts {
			if len(a.queue) == 0 {
				continue
			}
			e := a.queue[0]
			a.queue = a.queue[1:]
			more = more || len(a.queue) > 0
			switch {
			case count >= limits.Total:
				a.overTotal = append(a.overTotal, e.def.Name)
			case size+e.size > limits.TotalBytes:
				a.overSize = append(a.overSize, e.def.Name)
			default:
				chosen = append(chosen, e)
				count, size = count+1, size+e.size
				offered[a.uid]++
			}
		}
	}
	slices.SortStableFunc(chosen, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.uid, b.uid), cmp.Compare(a.def.Name, b.def.Name))
	})
	var left []MCPLeftOut
	for _, a := range accounts {
		out := len(a.tooBig) + len(a.overServer) + len(a.overTotal) + len(a.overSize)
		if out == 0 {
			continue
		}
		var why []string
		for _, r := range []struct {
			names []string
			say   string
		}{
			{a.tooBig, fmt.Sprintf("over %d bytes of description and schema each", limits.ToolBytes)},
			{a.overServer, fmt.Sprintf("past the limit of %d tools per server", limits.PerServer)},
			{a.overTotal, fmt.Sprintf("past the limit of %d MCP tools in all", limits.Total)},
			{a.overSize, fmt.Sprintf("past the limit of %d bytes for all MCP tools' descriptions and schemas", limits.TotalBytes)},
		} {
			if len(r.names) > 0 {
				why = append(why, fmt.Sprintf("%d %s", len(r.names), r.say))
			}
		}
		names := slices.Concat(a.tooBig, a.overServer, a.overTotal, a.overSize)
		slices.Sort(names)
		shown := strings.Join(names[:min(len(names), 10)], ", ")
		if len(names) > 10 {
			shown += fmt.Sprintf(" and %d more", len(names)-10)
		}
		msg := fmt.Sprintf("MCP server %q lists %d tools; %d are offered to the model and %d left out (%s): %s.",
			a.uid, a.listed, offered[a.uid], out, strings.Join(why, "; "), shown)
		logger.Warn("mcp: tools left out of the model's tool list", "server", a.uid, "listed", a.listed, "offered", offered[a.uid], "why", strings.Join(why, "; "))
		left = append(left, MCPLeftOut{Server: a.uid, Listed: a.listed, Offered: offered[a.uid], Message: msg})
	}
	used := map[string]bool{}
	out := make([]MCPToolSpec, 0, len(chosen))
	for _, e := range chosen {
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
				Parameters:  e.params,
				Kind:        KindOther,
			},
			Server: e.uid,
			Tool:   e.def.Name,
		})
	}
	for _, l := range left {
		i := slices.IndexFunc(out, func(sp MCPToolSpec) bool { return sp.Server == l.Server })
		if i < 0 {
			i = 0
		}
		if i < len(out) {
			out[i].Spec.Description += "\n\n(" + l.Message + " Those left out cannot be called in this session except through " + NameUseMCPTool + ", where it is offered.)"
		}
	}
	return out, left
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
