package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decisions an Outcome can carry.
const (
	// Allow skips asking the user (PreToolUse); the policy's deny rules
	// and the mode's guard still hold.
	Allow = "allow"
	// Ask makes the call ask the user whatever the policy says.
	Ask = "ask"
	// Deny refuses the call (PreToolUse) or, for the other events,
	// blocks what the event is about: the prompt, the turn's end, a tool
	// result (the reason is added to it).
	Deny = "deny"
)

// Outcome is what the hooks of one moment said together.
type Outcome struct {
	// Decision is "" (no hook decided), Allow, Ask or Deny; when hooks
	// disagree, deny wins over ask, ask over allow.
	Decision string
	// Reason is for the model when Decision is Deny (a blocked call, a
	// Stop hook's reason to go on, a PostToolUse hook's objection), for
	// the user otherwise.
	Reason string
	// UpdatedInput replaces a PreToolUse call's arguments, already in the
	// tool's own field names (OurInput).
	UpdatedInput json.RawMessage
	// Context is what the hooks add to what the model sees
	// (additionalContext; the plain output of UserPromptSubmit and
	// SessionStart hooks).
	Context []string
	// Stop is a hook's "continue": false: the turn ends, StopReason told
	// to the user.
	Stop       bool
	StopReason string
	// Messages are for the user only (systemMessage, failed hooks).
	Messages []string
	// Notes are one line per hook that did something, "Hook PreToolUse
	// (name): blocked: reason", for the tool call's card and the log.
	Notes []string
}

// output is the JSON a hook may print on exit 0.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       *struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// rank orders decisions by how cautious they are.
func rank(d string) int {
	switch d {
	case Deny:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// decide records a hook's decision and reason when it is at least as
// cautious as what the outcome holds.
func (o *Outcome) decide(d, reason string) {
	switch {
	case rank(d) > rank(o.Decision):
		o.Decision, o.Reason = d, reason
	case rank(d) == rank(o.Decision) && reason != "":
		if o.Reason != "" {
			o.Reason += "\n"
		}
		o.Reason += reason
	}
}

// add folds one hook's result into the outcome.
func (o *Outcome) add(ev Event, h Command, res result, redact func(string) string) {
	name := shortName(h.Command)
	note := func(format string, args ...any) {
		o.Notes = append(o.Notes, fmt.Sprintf("Hook %s (%s): ", ev, name)+fmt.Sprintf(format, args...))
	}
	stderr := strings.TrimSpace(redact(res.stderr))
	stdout := strings.TrimSpace(redact(res.stdout))
	switch {
	case res.err != nil:
		note("could not run: %v", res.err)
		o.Messages = append(o.Messages, o.Notes[len(o.Notes)-1])
		return
	case res.timedOut:
		note("timed out after %s; it and what it started were stopped", h.timeout())
		o.Messages = append(o.Messages, o.Notes[len(o.Notes)-1])
		return
	case res.cancelled:
		note("cancelled")
		return
	case res.code == 2:
		reason := stderr
		if reason == "" {
			reason = "(the hook gave no reason)"
		}
		o.decide(Deny, reason)
		note("blocked: %s", reason)
		return
	case res.code != 0:
		msg := fmt.Sprintf("failed with exit code %d", res.code)
		if stderr != "" {
			msg += ": " + stderr
		}
		note("%s", msg)
		o.Messages = append(o.Messages, o.Notes[len(o.Notes)-1])
		return
	}
	var out output
	if !strings.HasPrefix(stdout, "{") || json.Unmarshal([]byte(stdout), &out) != nil {
		// Plain output: context for the events whose output the model
		// sees, the log's otherwise.
		if stdout != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			o.Context = append(o.Context, stdout)
			note("added context")
		}
		return
	}
	if out.SystemMessage != "" {
		o.Messages = append(o.Messages, redact(out.SystemMessage))
	}
	if out.Continue != nil && !*out.Continue {
		o.Stop = true
		reason := redact(out.StopReason)
		if o.StopReason == "" {
			o.StopReason = reason
		}
		if reason == "" {
			reason = "(no reason given)"
		}
		note("stopped the turn: %s", reason)
	}
	sp := out.Specific
	reason := redact(out.Reason)
	decision := ""
	switch out.Decision {
	case "block":
		decision = Deny
	case "approve":
		decision = Allow
	}
	if sp != nil {
		if d := sp.PermissionDecision; d == Allow || d == Deny || d == Ask {
			decision = d
			if sp.PermissionDecisionReason != "" {
				reason = redact(sp.PermissionDecisionReason)
			}
		}
		if c := strings.TrimSpace(sp.AdditionalContext); c != "" {
			o.Context = append(o.Context, redact(c))
			note("added context")
		}
		if ev == PreToolUse && len(sp.UpdatedInput) > 0 && string(sp.UpdatedInput) != "null" && o.UpdatedInput == nil {
			o.UpdatedInput = sp.UpdatedInput
			note("changed the call's input")
		}
	}
	if ev != PreToolUse && decision != Deny {
		decision = "" // allow and ask mean something only before a call
	}
	if decision != "" {
		o.decide(decision, reason)
		verb := map[string]string{Allow: "allowed", Ask: "asks the user", Deny: "blocked"}[decision]
		if reason != "" {
			note("%s: %s", verb, reason)
		} else {
			note("%s", verb)
		}
	}
}

// shortName names a hook in notes: its command, on one line, shortened.
func shortName(command string) string {
	s := strings.Join(strings.Fields(command), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}
