package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// PlanEntry is one item of the session's todo list, as it is sent and
// stored.
type PlanEntry = wire.PlanEntry

// funcInvocation is an invocation made of a description and a function.
type funcInvocation struct {
	desc tools.Description
	run  func(ctx context.Context, opts tools.ExecOptions) (tools.Result, error)
}

func (f funcInvocation) Describe(context.Context) tools.Description { return f.desc }

func (f funcInvocation) Execute(ctx context.Context, opts tools.ExecOptions) (tools.Result, error) {
	return f.run(ctx, opts)
}

// ownTools are the built-ins whose work is the session's own: ending the
// turn, the plan, questions to the user and subagents.
func (s *Session) ownTools() map[string]tools.BuildFunc {
	return map[string]tools.BuildFunc{
		tools.NameSubmitAndExit: tools.Typed(func(a struct {
			Summary  string `json:"summary"`
			Verified bool   `json:"verified"`
		}) (tools.Invocation, error) {
			return funcInvocation{
				desc: tools.Description{Title: "Submit", Kind: tools.KindOther},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					s.cfg.Host.Update(s.agentText(a.Summary))
					return tools.Result{Content: "Submitted.", EndsTurn: true}, nil
				},
			}, nil
		}),
		tools.NamePlanModeRespond: tools.Typed(func(a struct {
			Response string `json:"response"`
			More     bool   `json:"needs_more_exploration"`
		}) (tools.Invocation, error) {
			return funcInvocation{
				desc: tools.Description{Title: "Respond", Kind: tools.KindOther},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					s.cfg.Host.Update(s.agentText(a.Response))
					if a.More {
						return tools.Result{Content: resultShownMore}, nil
					}
					return tools.Result{Content: resultShown, EndsTurn: true}, nil
				},
			}, nil
		}),
		tools.NameUpdatePlan: tools.Typed(func(a struct {
			Entries []PlanEntry `json:"entries"`
		}) (tools.Invocation, error) {
			return funcInvocation{
				desc: tools.Description{Title: "Update plan", Kind: tools.KindThink},
				run: func(context.Context, tools.ExecOptions) (tools.Result, error) {
					for i := range a.Entries {
						if a.Entries[i].Priority == "" {
							a.Entries[i].Priority = wire.PriorityMedium
						}
					}
					s.mu.Lock()
					s.plan = a.Entries
					s.mu.Unlock()
					s.persist(Record{Type: RecordPlan, Plan: a.Entries})
					s.cfg.Host.Update(planUpdate(a.Entries))
					return tools.Result{Content: fmt.Sprintf("Plan updated (%d entries).", len(a.Entries))}, nil
				},
			}, nil
		}),
		tools.NameAskQuestion: tools.Typed(func(a struct {
			Question string   `json:"question"`
			Options  []string `json:"options"`
		}) (tools.Invocation, error) {
			return funcInvocation{
				desc: tools.Description{Title: "Ask: " + a.Question, Kind: tools.KindOther},
				run: func(ctx context.Context, _ tools.ExecOptions) (tools.Result, error) {
					return s.ask(ctx, a.Question, a.Options)
				},
			}, nil
		}),
		tools.NameSpawnAgent: tools.Typed(func(a struct {
			Prompt string `json:"prompt"`
		}) (tools.Invocation, error) {
			return funcInvocation{
				desc: tools.Description{Title: "Subagent: " + s.shortTitle(a.Prompt), Kind: tools.KindOther},
				run: func(ctx context.Context, _ tools.ExecOptions) (tools.Result, error) {
					if s.cfg.Subagent {
						return tools.Errorf("subagents are not available here"), nil
					}
					answer, err := s.cfg.Host.Spawn(ctx, a.Prompt)
					if errors.Is(err, ErrNoSubagents) {
						return tools.Errorf("subagents are not available here"), nil
					}
					if err != nil {
						return tools.Errorf("the subagent failed: %v", err), nil
					}
					return tools.Result{Content: answer}, nil
				},
			}, nil
		}),
	}
}

// ask puts a question to the user. Without a way to ask (the ACP
// dialect), the question is shown as message text and the turn ends; the
// user's next prompt is the answer.
func (s *Session) ask(ctx context.Context, question string, options []string) (tools.Result, error) {
	answer, ok, err := s.cfg.Host.Ask(ctx, question, options)
	if errors.Is(err, ErrCannotAsk) {
		var b strings.Builder
		b.WriteString(question)
		for i, o := range options {
			fmt.Fprintf(&b, "\n%d. %s", i+1, o)
		}
		s.cfg.Host.Update(wire.AgentMessageChunk{Content: wire.TextBlock{Text: b.String()}})
		s.noteQuestion(question, "shown to the user at the end of a turn; the request after it may answer it")
		return tools.Result{Content: resultAsked, EndsTurn: true}, nil
	}
	if err != nil {
		return tools.Result{}, err
	}
	if !ok {
		s.noteQuestion(question, "the user dismissed it without answering")
		return tools.Result{Content: "The user dismissed the question without answering."}, nil
	}
	return tools.Result{Content: "The user answered: " + answer}, nil
}

// Plan returns the session's current plan.
func (s *Session) Plan() []PlanEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PlanEntry(nil), s.plan...)
}

// subagent is the child session RunSubagent runs: a *Session, or a host's
// value around one.
type subagent interface {
	Prompt(ctx context.Context, text string) (StopReason, error)
	History() []provider.Message
}

// RunSubagent is a helper for Spawn implementations: it runs a child
// session to the end of one prompt and returns its final text.
func RunSubagent(ctx context.Context, child subagent, prompt string) (string, error) {
	stop, err := child.Prompt(ctx, prompt)
	if err != nil {
		return "", err
	}
	h := child.History()
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != "assistant" {
			continue
		}
		var b strings.Builder
		for _, p := range h[i].Parts {
			if p.Kind == "text" {
				b.WriteString(p.Text)
			}
		}
		if t := strings.TrimSpace(b.String()); t != "" {
			return t, nil
		}
	}
	if stop != StopEndTurn {
		return "", fmt.Errorf("the subagent stopped (%s) without an answer", stop)
	}
	return "", fmt.Errorf("the subagent gave no answer")
}

// subagentBuild runs a configured subagent: a child session whose prompt
// starts with the subagent's own instructions.
func (s *Session) subagentBuild(c tools.SubagentConfig) tools.BuildFunc {
	return tools.Typed(func(a struct {
		Prompt string `json:"prompt"`
	}) (tools.Invocation, error) {
		return funcInvocation{
			desc: tools.Description{Title: c.Name + ": " + s.shortTitle(a.Prompt), Kind: tools.KindOther},
			run: func(ctx context.Context, _ tools.ExecOptions) (tools.Result, error) {
				if s.cfg.Subagent {
					return tools.Errorf("subagents are not available here"), nil
				}
				prompt := a.Prompt
				if strings.TrimSpace(c.Prompt) != "" {
					prompt = "Instructions for this task:\n" + c.Prompt + "\n\nTask:\n" + a.Prompt
				}
				answer, err := s.cfg.Host.Spawn(ctx, prompt)
				if errors.Is(err, ErrNoSubagents) {
					return tools.Errorf("subagents are not available here"), nil
				}
				if err != nil {
					return tools.Errorf("the %s subagent failed: %v", c.Name, err), nil
				}
				return tools.Result{Content: answer}, nil
			},
		}, nil
	})
}
