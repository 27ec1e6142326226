package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// Hooks runs the user's hooks at a moment of the session and says what
// they decided (hooks.Runner implements it). The session decides what an
// outcome does: docs/DESIGN.md §5, Hooks.
type Hooks interface {
	Run(ctx context.Context, in hooks.Input) hooks.Outcome
}

// maxStopHookRounds bounds how many times Stop hooks may send a turn on
// that was ending, so that a hook that always objects cannot loop for
// ever; stop_hook_active tells a hook it is being asked again.
const maxStopHookRounds = 5

// hookLines is what the user is shown of an outcome: each hook's note and
// the messages hooks wrote for the user that no note already says.
func hookLines(out hooks.Outcome) []string {
	lines := slices.Clone(out.Notes)
	for _, m := range out.Messages {
		if !slices.Contains(lines, m) {
			lines = append(lines, m)
		}
	}
	return lines
}

// commandsOf is what a call runs, when it runs commands.
func commandsOf(inv tools.Invocation) []string {
	if cr, ok := inv.(tools.CommandRunner); ok {
		return cr.Commands()
	}
	return nil
}

// hookNotes records what call i's hooks did and shows it on the call's
// card at once.
func (b *batch) hookNotes(i int, out hooks.Outcome) {
	lines := hookLines(out)
	if len(lines) == 0 {
		return
	}
	b.hmu.Lock()
	if b.notes == nil {
		b.notes = make(map[int][]string)
	}
	b.notes[i] = append(b.notes[i], lines...)
	all := slices.Clone(b.notes[i])
	b.hmu.Unlock()
	b.notify(i, CallUpdate{State: StateScheduled, HookNotes: all})
}

// preToolUse runs call i's PreToolUse hooks, after the mode's guard and
// before the policy. It returns the hooks' decision (allow, ask or none),
// which the policy weighs (PolicyCall.Hook), and whether the call goes on; when not, its result is recorded. A hook's
// updatedInput replaces the arguments, which are validated and judged by
// the mode's guard again, and described again.
func (b *batch) preToolUse(i int) (string, bool) {
	h := b.s.cfg.Hooks
	if h == nil {
		return "", true
	}
	it, ctx, name := b.items[i], b.ctxs[i], b.items[i].spec.Name
	out := h.Run(ctx, hooks.Input{Event: hooks.PreToolUse, Tool: name, Args: it.args, Commands: commandsOf(it.inv)})
	b.hookNotes(i, out)
	switch {
	case b.stopped(i):
		b.finish(i, StateCancelled, notRun(name), nil)
		return "", false
	case out.Stop:
		b.halt(i, out.StopReason)
		b.finish(i, StateError, tools.Errorf("%s was not run: a hook ended the turn%s.", name, because(out.StopReason)), nil)
		return "", false
	case out.Decision == hooks.Deny:
		b.finish(i, StateError, tools.Errorf("%s was not run: a hook refused it: %s", name, out.Reason), nil)
		return "", false
	}
	if out.UpdatedInput != nil {
		inv, checked, err := b.buildGuarded(it.tool, out.UpdatedInput)
		if err != nil {
			b.finish(i, StateError, tools.Errorf("%s was not run: the input a hook gave it is refused: %v", name, err), nil)
			return "", false
		}
		desc, err := describe(ctx, inv)
		if err != nil {
			b.finish(i, StateError, tools.Errorf("%s failed: %v", name, err), err)
			return "", false
		}
		it.inv, it.args, it.desc, it.rewritten = inv, checked, &desc, true
		if desc.Refusal != "" {
			b.finish(i, StateError, tools.Result{Content: desc.Refusal, IsError: true}, nil)
			return "", false
		}
	}
	return out.Decision, true
}

// postToolUse runs call i's PostToolUse hooks on its successful result:
// what they object to (exit 2, decision "block") and the context they
// add go to the model with the result.
func (b *batch) postToolUse(i int, res tools.Result) tools.Result {
	h := b.s.cfg.Hooks
	if h == nil {
		return res
	}
	it, ctx := b.items[i], b.ctxs[i]
	out := h.Run(ctx, hooks.Input{Event: hooks.PostToolUse, Tool: it.spec.Name, Args: it.args, Commands: commandsOf(it.inv),
		Result: res.Content})
	b.hookNotes(i, out)
	if out.Decision == hooks.Deny {
		res.Content = strings.TrimRight(res.Content, "\n") + "\n\n[a PostToolUse hook objects: " + out.Reason + "]\n"
	}
	for _, c := range out.Context {
		res.Content = strings.TrimRight(res.Content, "\n") + "\n\n[from a PostToolUse hook]\n" + c + "\n"
	}
	if out.Stop {
		b.halt(i, out.StopReason)
	}
	return res
}

// halt ends the turn after call i: the calls after it are not run.
func (b *batch) halt(i int, reason string) {
	if reason == "" {
		reason = "a hook ended the turn"
	}
	b.results[i].StopTurn = reason
	b.cancelFrom(i + 1)
}

// notification runs the Notification hooks before the user is asked
// about call i.
func (b *batch) notification(i int, name string) {
	if h := b.s.cfg.Hooks; h != nil {
		out := h.Run(b.ctxs[i], hooks.Input{Event: hooks.Notification, Message: fmt.Sprintf("cline-ls needs your permission to use %s", name)})
		b.hookNotes(i, out)
	}
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// tellHooks shows the user what the hooks of a moment outside a tool call
// did, as message text the model never sees.
func (s *Session) tellHooks(out hooks.Outcome) {
	for _, l := range hookLines(out) {
		s.cfg.Host.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[" + s.cfg.Host.Redact(l) + "]\n"}})
	}
}

// promptHooks runs, before a prompt enters the history, the SessionStart
// hooks (once per session object, with source startup or resume) and the
// UserPromptSubmit hooks. It returns the context they add for the model,
// and a non-empty refusal when the prompt must not be sent (exit 2,
// decision "block", "continue": false), which the user has been told.
func (s *Session) promptHooks(ctx context.Context, text string) (extra []string, refused string) {
	h := s.cfg.Hooks
	if h == nil || s.cfg.Subagent {
		return nil, ""
	}
	s.mu.Lock()
	first := !s.hooksStarted
	s.hooksStarted = true
	s.mu.Unlock()
	if first {
		source := "startup"
		if s.resumed {
			source = "resume"
		}
		out := h.Run(ctx, hooks.Input{Event: hooks.SessionStart, Source: source})
		s.tellHooks(out)
		s.mu.Lock()
		s.startContext = out.Context
		s.mu.Unlock()
	}
	out := h.Run(ctx, hooks.Input{Event: hooks.UserPromptSubmit, Prompt: text})
	s.tellHooks(out)
	switch {
	case out.Stop:
		return nil, "a hook ended the turn" + because(out.StopReason)
	case out.Decision == hooks.Deny:
		return nil, "a hook refused the prompt: " + out.Reason
	}
	// The SessionStart context goes with the first prompt that is sent.
	s.mu.Lock()
	extra, s.startContext = s.startContext, nil
	s.mu.Unlock()
	return append(extra, out.Context...), ""
}

// stopHooks runs the Stop hooks (SubagentStop in a subagent) of a turn
// that is ending. round counts the times they sent this turn on before;
// it reports whether the turn goes on, the hooks' reason then added to
// the history as the user's message to the model.
func (s *Session) stopHooks(ctx context.Context, round *int) bool {
	h := s.cfg.Hooks
	if h == nil {
		return false
	}
	ev := hooks.Stop
	if s.cfg.Subagent {
		ev = hooks.SubagentStop
	}
	out := h.Run(ctx, hooks.Input{Event: ev, StopHookActive: *round > 0})
	s.tellHooks(out)
	if out.Stop || out.Decision != hooks.Deny || ctx.Err() != nil {
		return false
	}
	if *round >= maxStopHookRounds {
		s.tellHooks(hooks.Outcome{Notes: []string{fmt.Sprintf("Stop hooks sent the turn on %d times; it ends now", *round)}})
		return false
	}
	*round++
	s.appendHistory(provider.UserText("[A Stop hook asks you to go on]\n" + out.Reason))
	return true
}

// preCompact runs the PreCompact hooks; trigger is manual or auto.
func (s *Session) preCompact(ctx context.Context, reason string) {
	h := s.cfg.Hooks
	if h == nil {
		return
	}
	trigger := "auto"
	if reason == ReasonManual {
		trigger = "manual"
	}
	s.tellHooks(h.Run(ctx, hooks.Input{Event: hooks.PreCompact, Trigger: trigger}))
}

// sessionEnd runs the SessionEnd hooks of a session whose SessionStart
// hooks ran, bounded by each hook's own timeout.
func (s *Session) sessionEnd() {
	h := s.cfg.Hooks
	s.mu.Lock()
	started := s.hooksStarted
	s.hooksStarted = false // once per start, however often Close is called
	s.mu.Unlock()
	if h == nil || !started {
		return
	}
	h.Run(context.Background(), hooks.Input{Event: hooks.SessionEnd, Reason: "other"})
}
