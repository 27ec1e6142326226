package provider

import "fmt"

// Reasoning is how hard a model is asked to think, as the settings say it
// (provider.reasoningEffort, provider.thinkingBudget). The vendors take it
// in different shapes: OpenAI an effort (reasoning_effort), Anthropic and
// Gemini a budget of tokens. Each client asks this one type for its shape,
// so a setting given in the other form still reaches it.
type Reasoning struct {
	// Effort is "low", "medium" or "high", or empty.
	Effort string
	// Budget is a number of thinking tokens, or 0.
	Budget int
}

// ReasoningEfforts are the efforts Reasoning takes.
var ReasoningEfforts = []string{"low", "medium", "high"}

// The budgets an effort stands for, and the efforts a budget rounds to.
var effortBudget = map[string]int{"low": 2048, "medium": 8192, "high": 24576}

// Validate reports an effort that is none of ReasoningEfforts or a
// negative budget.
func (r Reasoning) Validate() error {
	if _, ok := effortBudget[r.Effort]; r.Effort != "" && !ok {
		return fmt.Errorf("reasoning effort %q: want low, medium or high", r.Effort)
	}
	if r.Budget < 0 {
		return fmt.Errorf("thinking budget %d: want 0 or more", r.Budget)
	}
	return nil
}

// or is r with what it leaves unset taken from d.
func (r Reasoning) or(d Reasoning) Reasoning {
	if r.Effort == "" && r.Budget == 0 {
		return d
	}
	return r
}

// effort is the effort asked for, from the budget when only that is set.
func (r Reasoning) effort() string {
	switch {
	case r.Effort != "":
		return r.Effort
	case r.Budget <= 0:
		return ""
	case r.Budget < effortBudget["medium"]:
		return "low"
	case r.Budget < effortBudget["high"]:
		return "medium"
	}
	return "high"
}

// budget is the budget asked for, from the effort when only that is set.
func (r Reasoning) budget() int {
	if r.Budget > 0 {
		return r.Budget
	}
	return effortBudget[r.Effort]
}
