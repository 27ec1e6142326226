package rpc

import (
	"context"

	"github.com/cline-ls/cline-ls/wire"
)

// askQuestion serves ask_question: cline/askQuestion for clients that
// declared it, else window/showMessageRequest with the options as actions.
func (s *Server) askQuestion(ctx context.Context, id, question string, options []string) (string, bool, error) {
	s.mu.Lock()
	viaCline := s.caps.clineQuestions
	s.mu.Unlock()
	if viaCline {
		var res struct {
			Answer *string `json:"answer"`
		}
		if err := s.call(ctx, methodAskQuestion, wire.AskQuestionParams{SessionID: id, Question: question, Options: options}, &res); err != nil {
			return "", false, err
		}
		if res.Answer == nil {
			return "", false, nil
		}
		return *res.Answer, true, nil
	}
	actions := make([]wire.MessageAction, len(options))
	for i, o := range options {
		actions[i] = wire.MessageAction{Title: o}
	}
	var res *struct {
		Title string `json:"title"`
	}
	if err := s.call(ctx, methodShowMessageRequest, wire.ShowMessageRequestParams{Type: wire.MessageInfo, Message: question, Actions: actions}, &res); err != nil {
		return "", false, err
	}
	if res == nil {
		return "", false, nil
	}
	return res.Title, true, nil
}
