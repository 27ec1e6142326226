// Package hooks runs the user's commands at points of a session (before
// and after a tool call, when a prompt is submitted, when a turn would
// stop, around compaction and the session's life), configured and
// answered the way Claude Code's hooks are, so that scripts written for it
// run unchanged (docs/DESIGN.md §5, Hooks).
//
// The package decides which hooks a moment runs, runs them as child
// processes through internal/proc and reads their answers into one
// Outcome; what an outcome does to a call or a turn is the session's.
//
// It is also the one place for which hooks a session runs: Session
// reads the settings' and, at each moment, the project's
// .cline/settings.json, and Trust decides whether a folder's own hooks
// may run (trusted folders, remembered answers, asking once). The daemon
// lends them the settings, the folders' roots and the question to ask.
package hooks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Event is a moment hooks run at.
type Event string

// The events, named as Claude Code names them.
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SubagentStop     Event = "SubagentStop"
	SessionStart     Event = "SessionStart"
	SessionEnd       Event = "SessionEnd"
	PreCompact       Event = "PreCompact"
	Notification     Event = "Notification"
)

var events = []Event{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification}

// DefaultTimeout bounds a hook that gives no timeout of its own.
const DefaultTimeout = 60 * time.Second

// maxTimeout bounds a hook's own timeout, so a typo cannot hold a call for
// days.
const maxTimeout = time.Hour

// Config is the "hooks" setting: event → matcher groups.
type Config map[string][]Group

// Group is the hooks of one matcher.
type Group struct {
	// Matcher is a regular expression over the names of a tool call
	// (ours, Claude Code's alias, mcp__<server>__<tool>) matched whole;
	// empty or "*" matches every call. For PreCompact it matches the
	// trigger (manual, auto), for SessionStart the source (startup,
	// resume), for SessionEnd the reason; other events ignore it.
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []Command `json:"hooks"`
}

// Command is one hook.
type Command struct {
	// Type is "command", the only kind there is.
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds; 0 means DefaultTimeout.
	Timeout float64 `json:"timeout,omitempty"`
}

func (c Command) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return min(time.Duration(c.Timeout*float64(time.Second)), maxTimeout)
}

// Validate checks what the JSON types cannot; the error names the field
// under prefix ("hooks." for the setting).
func (c Config) Validate(prefix string) error {
	for ev, groups := range c {
		if !slices.Contains(events, Event(ev)) {
			names := make([]string, len(events))
			for i, e := range events {
				names[i] = string(e)
			}
			return fmt.Errorf("%s%s: unknown event (events: %s)", prefix, ev, strings.Join(names, ", "))
		}
		for i, g := range groups {
			at := fmt.Sprintf("%s%s[%d]", prefix, ev, i)
			if _, err := compileMatcher(g.Matcher); err != nil {
				return fmt.Errorf("%s.matcher: %v", at, err)
			}
			for j, h := range g.Hooks {
				hat := fmt.Sprintf("%s.hooks[%d]", at, j)
				if h.Type != "command" {
					return fmt.Errorf("%s.type: must be \"command\", got %q", hat, h.Type)
				}
				if strings.TrimSpace(h.Command) == "" {
					return fmt.Errorf("%s.command: required", hat)
				}
				if h.Timeout < 0 {
					return fmt.Errorf("%s.timeout: must be 0 (the default of %s) or more seconds, got %v", hat, DefaultTimeout, h.Timeout)
				}
			}
		}
	}
	return nil
}

// Clone returns a copy that shares nothing mutable with c.
func (c Config) Clone() Config {
	if c == nil {
		return nil
	}
	out := make(Config, len(c))
	for ev, groups := range c {
		gs := make([]Group, len(groups))
		for i, g := range groups {
			gs[i] = Group{Matcher: g.Matcher, Hooks: slices.Clone(g.Hooks)}
		}
		out[ev] = gs
	}
	return out
}

// Commands lists the configured commands, each once, in a stable order:
// what the trust question shows.
func (c Config) Commands() []string {
	var out []string
	for _, ev := range events {
		for _, g := range c[string(ev)] {
			for _, h := range g.Hooks {
				line := string(ev) + ": " + h.Command
				if !slices.Contains(out, line) {
					out = append(out, line)
				}
			}
		}
	}
	return out
}

// compileMatcher makes the matcher a regular expression over whole names.
func compileMatcher(m string) (*regexp.Regexp, error) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return nil, fmt.Errorf("not a regular expression: %v", err)
	}
	return re, nil
}
