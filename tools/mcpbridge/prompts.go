package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// A server's prompts are offered to the user as slash commands:
// "/mcp:SERVER:PROMPT" followed by the prompt's arguments, as NAME=VALUE
// pairs or, in the order the server lists them, as plain words (the last
// argument takes the rest of the line). The prompt's messages, fetched
// with those arguments, become the text of the user's turn.

// PromptDef is a prompt a server offers.
type PromptDef struct {
	Server      string
	Name        string
	Title       string
	Description string
	Arguments   []PromptArg
}

// PromptArg is one of a prompt's arguments.
type PromptArg struct {
	Name        string
	Description string
	Required    bool
}

// Command is the slash command that runs p, without its slash.
func (p PromptDef) Command() string { return "mcp:" + p.Server + ":" + p.Name }

// Hint names p's arguments as the user types them, required ones bare
// and the others in brackets.
func (p PromptDef) Hint() string {
	var parts []string
	for _, a := range p.Arguments {
		if a.Required {
			parts = append(parts, a.Name)
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

// Prompts lists the prompts of every running server, in the order of
// the configuration and then of each server's listing.
func (m *Manager) Prompts() []PromptDef {
	var out []PromptDef
	for _, s := range m.servers {
		for _, p := range s.knownPrompts() {
			p.Server = s.cfg.Name
			out = append(out, p)
		}
	}
	return out
}

// IsPromptCommand reports whether text is written as an MCP prompt's
// slash command ("/mcp:…"), known or not.
func IsPromptCommand(text string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), "/mcp:")
}

// RunPromptCommand fetches the prompt a slash command names, with its
// arguments, and returns the text of the user's turn it stands for. The
// errors are the user's to read: an unknown server or prompt (with the
// ones there are), a missing required argument, a server that failed.
func (m *Manager) RunPromptCommand(ctx context.Context, text string) (string, error) {
	line := strings.TrimSpace(text)
	head, rest, _ := strings.Cut(line, " ")
	ref := strings.TrimPrefix(head, "/mcp:")
	server, name, ok := strings.Cut(ref, ":")
	if !ok || server == "" || name == "" {
		return "", fmt.Errorf("%s: an MCP prompt is run as /mcp:SERVER:PROMPT followed by its arguments", head)
	}
	s, err := m.lookup(server)
	if err != nil {
		return "", errors.New(strings.Replace(err.Error(), "server_name: ", "", 1))
	}
	var def *PromptDef
	known := s.knownPrompts()
	names := make([]string, 0, len(known))
	for i := range known {
		names = append(names, known[i].Name)
		if known[i].Name == name {
			def = &known[i]
		}
	}
	if def == nil {
		return "", fmt.Errorf("MCP server %s has no prompt %q; its prompts are: %s", server, name, listOrNone(names))
	}
	args, err := bindPromptArgs(*def, rest)
	if err != nil {
		return "", fmt.Errorf("/mcp:%s:%s: %w", server, name, err)
	}
	sess, why := s.session()
	if sess == nil {
		return "", errors.New(why)
	}
	res, err := sess.getPrompt(ctx, name, args)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", errors.New(s.redact(fmt.Sprintf("MCP server %s could not give its prompt %s: %v", server, name, s.redactErr(err))))
	}
	var shown struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content content `json:"content"`
		} `json:"messages"`
	}
	if err := reshape(res, &shown); err != nil {
		return "", fmt.Errorf("MCP server %s gave prompt %s in a shape that cannot be read: %w", server, name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", line)
	for _, msg := range shown.Messages {
		t := contentText(msg.Content)
		if strings.TrimSpace(t) == "" {
			continue
		}
		b.WriteString("\n")
		if msg.Role == "assistant" {
			b.WriteString("(as the assistant) ")
		}
		b.WriteString(t)
		b.WriteString("\n")
	}
	return limit(b.String()), nil
}

// bindPromptArgs reads the arguments after a prompt's command: NAME=VALUE
// pairs (VALUE may be quoted with " or ') for the prompt's own argument
// names, then plain words for the arguments not yet given, in order, the
// last one taking the rest of the line.
func bindPromptArgs(def PromptDef, rest string) (map[string]string, error) {
	args := map[string]string{}
	byName := map[string]bool{}
	for _, a := range def.Arguments {
		byName[a.Name] = true
	}
	words, err := splitWords(rest)
	if err != nil {
		return nil, err
	}
	var plain []string
	for _, w := range words {
		if k, v, ok := strings.Cut(w.text, "="); ok && !w.quoted && byName[k] {
			args[k] = unquote(v)
			continue
		}
		plain = append(plain, w.text)
	}
	var open []PromptArg
	for _, a := range def.Arguments {
		if _, ok := args[a.Name]; !ok {
			open = append(open, a)
		}
	}
	for i, w := range plain {
		if i >= len(open) {
			if len(open) == 0 {
				return nil, fmt.Errorf("it takes no more arguments, and %q is one too many", w)
			}
			last := open[len(open)-1].Name
			args[last] += " " + w
			continue
		}
		args[open[i].Name] = unquote(w)
	}
	var missing []string
	for _, a := range def.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			d := a.Name
			if a.Description != "" {
				d += " (" + a.Description + ")"
			}
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s; give them as NAME=VALUE or in order: %s", strings.Join(missing, ", "), def.Hint())
	}
	return args, nil
}

type word struct {
	text   string
	quoted bool // the whole word was in quotes
}

// splitWords splits at blanks outside quotes; quotes stay in the words,
// so that NAME="a b" keeps its value whole.
func splitWords(s string) ([]word, error) {
	var out []word
	var cur strings.Builder
	var quote rune
	started := false
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
			started = true
		case unicode.IsSpace(r):
			if started {
				t := cur.String()
				out = append(out, word{text: t, quoted: len(t) > 1 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0]})
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a quote (%c) is not closed", quote)
	}
	if started {
		t := cur.String()
		out = append(out, word{text: t, quoted: len(t) > 1 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0]})
	}
	return out, nil
}

func unquote(s string) string {
	if len(s) > 1 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
