package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// recordTurn starts recording ls's updates; the returned function stops
// and returns the transcript and the final answer.
func (ls *liveSession) recordTurn() func() (transcript, answer string) {
	l := &session.TurnLog{}
	ls.turnLog.Store(l)
	return func() (string, string) {
		ls.turnLog.CompareAndSwap(l, nil)
		return l.Text()
	}
}

// noteUpdate records u in the turn being recorded, if any.
func (ls *liveSession) noteUpdate(u wire.SessionUpdate) {
	if l := ls.turnLog.Load(); l != nil {
		l.Add(u)
	}
}

// turnEnded tells a stock client how the turn ended and what the agent
// answered, and shows the turn's transcript when the client can.
func (t *turns) turnEnded(ctx context.Context, id, prompt, stop, transcript, answer string) {
	msg := fmt.Sprintf("cline-ls: the turn ended (%s) in session %s", stop, id)
	if a := session.FirstLines(t.redact(answer)); a != "" {
		msg += ":\n\n" + a
	}
	t.show(wire.MessageInfo, msg)
	if !t.canShowDocument() {
		return
	}
	doc := "# " + session.OneLine(t.redact(prompt)) + "\n\n" + t.redact(transcript) + "\n\n*The turn ended (" + stop + ").*\n"
	path, err := t.writeTranscript(id, doc)
	if err == nil {
		err = t.showDocument(ctx, path, false)
	}
	if err != nil {
		t.log.Debug("turn transcript not shown", "session", id, "err", err)
	}
}

// writeTranscript writes a turn's transcript as
// <state dir>/transcripts/<session>-<n>.md, n the first number free.
func (t *turns) writeTranscript(id, doc string) (string, error) {
	dir := filepath.Join(t.stateDir(), "transcripts")
	for n := 1; n < 10000; n++ {
		name := workspace.SafeFileName(id) + "-" + strconv.Itoa(n) + ".md"
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			return t.writeShown("transcripts", name, []byte(doc))
		}
	}
	return "", fmt.Errorf("too many transcripts of session %s", id)
}
