package approval

import (
	"context"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// ErrCannotAsk is Question's error on a connection that has no way to
// ask one (Channels.CanAsk is false). It is the session's own, so that
// ask_question, whatever tells it the user cannot be asked, shows the
// question as text instead of failing.
var ErrCannotAsk = session.ErrCannotAsk

// Question asks the user a question on behalf of sessionID ("" for
// none: an MCP server's) and returns the answer; ok is false when the
// user dismissed it. Through window/showMessageRequest the options are
// its actions and the answer is one of them; cline/askQuestion takes
// any. It does not wait for the approvals' turn of
// window/showMessageRequest (Broker.msgReq), as it never has.
func (b *Broker) Question(ctx context.Context, sessionID, question string, opts []string) (answer string, ok bool, err error) {
	switch b.Channels().Question {
	case ClineQuestion:
		var res wire.AskQuestionResult
		if err := b.opts.Caller.Call(ctx, methodAskQuestion, wire.AskQuestionParams{SessionID: sessionID, Question: question, Options: opts}, &res); err != nil {
			return "", false, err
		}
		if res.Answer == nil {
			return "", false, nil
		}
		return *res.Answer, true, nil
	case ShowMessage:
		actions := make([]wire.MessageAction, len(opts))
		for i, o := range opts {
			actions[i] = wire.MessageAction{Title: o}
		}
		var res *wire.MessageAction
		if err := b.opts.Caller.Call(ctx, methodShowMessageRequest, wire.ShowMessageRequestParams{Type: wire.MessageInfo, Message: question, Actions: actions}, &res); err != nil {
			return "", false, err
		}
		if res == nil {
			return "", false, nil
		}
		return res.Title, true, nil
	}
	return "", false, ErrCannotAsk
}
