package prompt

import (
	"fmt"
	"strings"
	"time"
)

// Environment is what the model is told about the moment a turn starts:
// facts that change from turn to turn and so stay out of the system
// prompt, which a provider caches only while it is byte for byte the same.
type Environment struct {
	// Date is today's date in the user's time zone; zero leaves it out.
	Date time.Time
	// Git is the repository the working directory is in; nil when it is
	// in none.
	Git *GitState
	// OpenBuffers lists the files open in the editor, workspace-relative;
	// at most MaxOpenBuffers are named.
	OpenBuffers []string
}

// GitState is the branch and a short status of a repository.
type GitState struct {
	// Root is the repository's top folder, named when it is not the
	// working directory: status paths are relative to it.
	Root string
	// Branch is the checked-out branch, or "detached at <commit>".
	Branch string
	// StatusKnown says whether Status was read: git may be missing or
	// too slow, and then nothing is said about changes.
	StatusKnown bool
	// Status holds `git status --porcelain` lines, at most
	// MaxStatusLines; More counts the lines left out.
	Status []string
	More   int
}

// MaxStatusLines is how many changed files the context block names.
const MaxStatusLines = 20

// MaxOpenBuffers is how many open buffers the context block names; the
// rest are counted, so a session with a hundred tabs does not pay for
// them on every turn.
const MaxOpenBuffers = 20

// turnContextTag opens and closes the context block, so that it is told
// apart from the user's own words (a replayed history leaves it out).
const turnContextTag = "environment_details"

// TurnContext renders the context block that goes before the user's text
// in the first message of a turn; "" when there is nothing to say. It
// ends with a blank line, since some providers join a message's text
// parts without a separator.
func TurnContext(env Environment) string {
	var b strings.Builder
	if !env.Date.IsZero() {
		fmt.Fprintf(&b, "Today's date: %s\n", env.Date.Format("Monday, 2 January 2006"))
	}
	if g := env.Git; g != nil {
		b.WriteString("Git branch: " + g.Branch)
		if g.Root != "" {
			b.WriteString(" (repository at " + g.Root + ")")
		}
		b.WriteString("\n")
		switch {
		case !g.StatusKnown:
		case len(g.Status) == 0:
			b.WriteString("Working tree clean.\n")
		default:
			b.WriteString("Changed files (git status --porcelain):\n")
			for _, l := range g.Status[:min(len(g.Status), MaxStatusLines)] {
				b.WriteString(l + "\n")
			}
			if more := g.More + max(0, len(g.Status)-MaxStatusLines); more > 0 {
				fmt.Fprintf(&b, "… and %d more\n", more)
			}
		}
	}
	if n := len(env.OpenBuffers); n > 0 {
		more := ""
		if n > MaxOpenBuffers {
			more = fmt.Sprintf(" and %d more", n-MaxOpenBuffers)
		}
		b.WriteString("Open in the editor (tools see their unsaved text): " +
			strings.Join(env.OpenBuffers[:min(n, MaxOpenBuffers)], ", ") + more + "\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "<" + turnContextTag + ">\n" + b.String() + "</" + turnContextTag + ">\n\n"
}

// IsTurnContext reports whether a text part of a user message is a
// context block TurnContext made, which is for the model, not the user.
func IsTurnContext(text string) bool {
	return strings.HasPrefix(text, "<"+turnContextTag+">\n") &&
		strings.HasSuffix(text, "</"+turnContextTag+">\n\n")
}
