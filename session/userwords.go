package session

import "strings"

// What the session's own states tell the model, in the model's words:
// they speak of "the user". The user sees them in their own words
// (forUser), in the live updates and in a replay alike.
const (
	resultShown     = "Shown to the user."
	resultShownMore = "Shown to the user. Continue exploring."
	resultAsked     = "The question was shown to the user; their next message is the answer."
	deniedSuffix    = " was not run: denied by the user."
	cancelledSuffix = " was not run: cancelled."
	feedbackPrefix  = "\nThe user's feedback: "
	resultCancelled = "cancelled by the user"
)

// forUser is what the user is shown of a tool result: the session's own
// states in the user's words, any other result as it is.
func forUser(content string) string {
	switch content {
	case resultShown:
		return "Plan presented."
	case resultShownMore:
		return "Plan presented; the agent keeps exploring."
	case resultAsked:
		return "Waiting for your answer."
	case resultCancelled:
		return "Cancelled."
	}
	if _, rest, ok := strings.Cut(content, deniedSuffix); ok && !strings.Contains(content[:len(content)-len(rest)-len(deniedSuffix)], "\n") {
		out := "You rejected this."
		if fb, ok := strings.CutPrefix(rest, feedbackPrefix); ok {
			out += "\nYour feedback: " + fb
		}
		return out
	}
	if name, ok := strings.CutSuffix(content, cancelledSuffix); ok && !strings.Contains(name, "\n") {
		return "Cancelled."
	}
	return content
}
