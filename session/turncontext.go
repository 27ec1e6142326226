package session

import (
	"context"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
)

// startTurn makes the user message that opens a turn and reads the
// instructions the turn's system prompt holds. Both are taken once per
// turn: the context block (date, git status, open buffers) goes before
// the user's text and stays in the history as it was, so every later
// request repeats the same bytes and a provider's prompt cache holds;
// the system prompt changes only when an instruction file does.
func (s *Session) startTurn(ctx context.Context, text string, images []provider.Image) (provider.Message, string) {
	env := s.cfg.Host.Environment(ctx)
	env.OpenBuffers = s.cfg.Host.OpenBuffers()
	user := provider.UserText(text)
	for _, im := range images {
		user.Parts = append(user.Parts, provider.ImagePart(im.MIMEType, im.Data))
	}
	if block := prompt.TurnContext(env); block != "" {
		user.Parts = append([]provider.Part{provider.TextPart(block)}, user.Parts...)
	}
	return user, s.cfg.Host.Instructions()
}
