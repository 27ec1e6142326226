package session

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/tools"
)

// Scope is what an "always allow" or "always reject" answer about a call
// covers: what the user saw when answering, and no more. For commands,
// the program and its subcommand ("go test", not "go run") of each simple
// command the line ran, or the exact text of one the rules cannot see
// into; for edits, the files; for fetches, the hosts; for the generic MCP
// tools, the server and tool named; for any other tool, the tool.
type Scope struct {
	// Label names what is covered, for the approval's options ("Always
	// allow " + Label): "go test …", "edits of docs/a.txt".
	Label string

	commands []commandScope
	paths    []string          // absolute
	hosts    []string          // lower case, with the port when given
	fields   map[string]string // argument values that must be equal
	args     string            // the canonical arguments, for a call with nothing better to scope by
}

// commandScope covers commands starting with words, or, when exact, the
// commands made of exactly those words; text covers a command written
// exactly so (one that is not a simple command).
type commandScope struct {
	words []string
	exact bool
	text  string
}

// subcommand is a word that reads as a program's subcommand (test in go
// test, run in npm run), not an option, a path or a file name.
var subcommand = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// ScopeFor is the scope of an "always" answer about a call; Remember
// stores it, and the approval's options name its Label.
func ScopeFor(c PolicyCall) Scope {
	var sc Scope
	var labels []string
	switch cat := CategoryOf(c.Tool, c.Kind, c.ReadOnly); {
	case c.Commands != nil:
		for _, sub := range c.subjects() {
			p := sub.part
			var cs commandScope
			var label string
			switch {
			case p.Simple && len(p.Words) >= 2 && subcommand.MatchString(p.Words[1]):
				cs = commandScope{words: slices.Clone(p.Words[:2])}
				label = strings.Join(cs.words, " ") + " …"
			case p.Simple:
				cs = commandScope{words: slices.Clone(p.Words), exact: true}
				label = strings.Join(cs.words, " ")
			default:
				cs = commandScope{text: p.Text}
				label = p.Text
			}
			if !slices.ContainsFunc(sc.commands, cs.equal) {
				sc.commands = append(sc.commands, cs)
				labels = append(labels, tools.ShortTitle(label))
			}
		}
		sc.Label = listLabel(labels)
	case cat == CategoryEdit && len(c.absPaths()) > 0:
		for _, p := range c.absPaths() {
			sc.paths = append(sc.paths, p)
			labels = append(labels, relLabel(c.Root, p))
		}
		sc.Label = "edits of " + listLabel(labels)
	case len(c.URLs) > 0:
		for _, u := range c.URLs {
			if h := strings.ToLower(u.Host); !slices.Contains(sc.hosts, h) {
				sc.hosts = append(sc.hosts, h)
			}
		}
		sc.Label = "fetches from " + listLabel(sc.hosts)
	case c.Tool == tools.NameUseMCPTool || c.Tool == tools.NameAccessMCPResource:
		var a map[string]any
		json.Unmarshal(c.Args, &a)
		sc.fields = map[string]string{}
		server, _ := a["server_name"].(string)
		sc.fields["server_name"] = server
		sc.Label = fmt.Sprintf("resources of the MCP server %s", server)
		if c.Tool == tools.NameUseMCPTool {
			tool, _ := a["tool_name"].(string)
			sc.fields["tool_name"] = tool
			sc.Label = fmt.Sprintf("the MCP tool %s of %s", tool, server)
		}
	case cat == CategoryEdit || cat == CategoryFetch || cat == CategoryExecute:
		// A change, a fetch or a run whose targets the call does not name:
		// the answer covers this call exactly.
		sc.args = c.canonicalArgs()
		sc.Label = "this exact " + c.Tool + " call"
	default:
		sc.Label = c.Tool + " calls"
	}
	return sc
}

// absPaths are the files the call changes, each once, absolute and
// clean: a description names a file both as displayed (relative) and
// absolute, and the absolute names are the ones kept, or the displayed
// ones taken from the session's folder when there are none.
func (c PolicyCall) absPaths() []string {
	var abs, rel []string
	for _, p := range c.Paths {
		if filepath.IsAbs(p) {
			abs = append(abs, filepath.Clean(p))
		} else if c.Root != "" {
			rel = append(rel, filepath.Join(c.Root, p))
		}
	}
	if len(abs) == 0 {
		abs = rel
	}
	slices.Sort(abs)
	return slices.Compact(abs)
}

// listLabel joins the items of a label, the first few of a long list
// named and the rest counted, so an option stays readable.
func listLabel(items []string) string {
	const shown = 3
	if len(items) <= shown+1 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:shown], ", "), len(items)-shown)
}

// relLabel names a path for a label: relative to the session's folder
// when it lies inside it.
func relLabel(root, p string) string {
	if root != "" {
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

func (a commandScope) equal(b commandScope) bool {
	return a.exact == b.exact && a.text == b.text && slices.Equal(a.words, b.words)
}

// covers reports whether the scope covers one subject of a call, for a
// rule of decision d: to allow, a command part must be simple and fit the
// scope, and every path or host of the call must be in it; to ask or deny,
// any word prefix, path or host in it is enough.
func (s *Scope) covers(c PolicyCall, sub subject, d Decision) bool {
	switch {
	case s.commands != nil:
		if sub.part == nil {
			return false
		}
		for _, cs := range s.commands {
			if cs.covers(*sub.part, d) {
				return true
			}
		}
		return false
	case s.paths != nil:
		in := func(p string) bool { return slices.Contains(s.paths, p) }
		paths := c.absPaths()
		return sub.part == nil && len(paths) > 0 && all(paths, in, d)
	case s.hosts != nil:
		var hosts []string
		for _, u := range c.URLs {
			hosts = append(hosts, strings.ToLower(u.Host))
		}
		in := func(h string) bool { return slices.Contains(s.hosts, h) }
		return sub.part == nil && len(hosts) > 0 && all(hosts, in, d)
	case s.fields != nil:
		var a map[string]any
		if sub.part != nil || json.Unmarshal(c.Args, &a) != nil {
			return false
		}
		for k, want := range s.fields {
			if got, _ := a[k].(string); got != want {
				return false
			}
		}
		return true
	case s.args != "":
		return sub.part == nil && sub.args() == s.args
	}
	return true
}

// all applies in to every item for an allow, to any for ask and deny.
func all(items []string, in func(string) bool, d Decision) bool {
	if d == Allow {
		return !slices.ContainsFunc(items, func(x string) bool { return !in(x) })
	}
	return slices.ContainsFunc(items, in)
}

func (cs commandScope) covers(p tools.CommandPart, d Decision) bool {
	if cs.text != "" {
		return p.Text == cs.text
	}
	fits := func(words []string) bool {
		if cs.exact {
			return slices.Equal(words, cs.words)
		}
		return len(words) >= len(cs.words) && slices.Equal(words[:len(cs.words)], cs.words)
	}
	if d == Allow {
		return p.Simple && fits(p.Words)
	}
	if fits(p.Words) {
		return true
	}
	for _, in := range p.Inner {
		if fits(strings.Split(in, " ")) {
			return true
		}
	}
	return false
}

func (s *Scope) equal(o *Scope) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Label == o.Label && slices.EqualFunc(s.commands, o.commands, commandScope.equal) &&
		slices.Equal(s.paths, o.paths) && slices.Equal(s.hosts, o.hosts) && maps.Equal(s.fields, o.fields) && s.args == o.args
}
