package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/wire"
)

// A stock client (no plugin: the turn started with cline.prompt) shows
// none of a turn's updates, so its end carries the answer: the first
// lines of the agent's last words in the window/showMessage that names
// the stop reason, and, when the client has window/showDocument, the
// turn as a read-only markdown file under <state dir>/transcripts.
const (
	answerLines = 12
	answerBytes = 2000
	// turnLogBytes bounds what a turn's transcript keeps.
	turnLogBytes = 1 << 20
)

// turnLog records one turn's updates as markdown.
type turnLog struct {
	mu     sync.Mutex
	b      strings.Builder // guarded by mu
	answer strings.Builder // guarded by mu; the agent's text since its last tool call
	full   bool            // guarded by mu; b reached turnLogBytes
}

func (l *turnLog) write(s string) {
	if l.full {
		return
	}
	if l.b.Len()+len(s) > turnLogBytes {
		l.b.WriteString("\n\n[the rest of the turn is left out]\n")
		l.full = true
		return
	}
	l.b.WriteString(s)
}

// add records u.
func (l *turnLog) add(u wire.SessionUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch u := u.(type) {
	case wire.AgentMessageChunk:
		if t, ok := u.Content.(wire.TextBlock); ok {
			l.write(t.Text)
			if l.answer.Len() < answerBytes*2 {
				l.answer.WriteString(t.Text)
			}
		}
	case wire.ToolCall:
		l.write("\n\n- " + oneLine(u.Title) + "\n\n")
		l.answer.Reset()
	case wire.ToolCallUpdate:
		if u.Status == wire.StatusFailed {
			l.write("\n  (failed)\n\n")
		}
	}
}

// oneLine keeps s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// firstLines is the start of text, at most answerLines lines and about
// answerBytes bytes, saying when more was left out.
func firstLines(text string) string {
	text = strings.TrimSpace(text)
	lines := strings.SplitN(text, "\n", answerLines+1)
	more := len(lines) > answerLines
	if more {
		lines = lines[:answerLines]
	}
	out := strings.Join(lines, "\n")
	if len(out) > answerBytes {
		cut := answerBytes
		for cut > 0 && !utf8Start(out[cut]) {
			cut--
		}
		out, more = out[:cut], true
	}
	if more {
		out += " …"
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// recordTurn starts recording ls's updates; the returned function stops
// and returns the transcript and the final answer.
func (ls *liveSession) recordTurn() func() (transcript, answer string) {
	l := &turnLog{}
	ls.turnLog.Store(l)
	return func() (string, string) {
		ls.turnLog.CompareAndSwap(l, nil)
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.b.String(), l.answer.String()
	}
}

// noteUpdate records u in the turn being recorded, if any.
func (ls *liveSession) noteUpdate(u wire.SessionUpdate) {
	if l := ls.turnLog.Load(); l != nil {
		l.add(u)
	}
}

// turnEnded tells a stock client how the turn ended and what the agent
// answered, and shows the turn's transcript when the client can.
func (t *turns) turnEnded(ctx context.Context, id, prompt, stop, transcript, answer string) {
	msg := fmt.Sprintf("cline-ls: the turn ended (%s) in session %s", stop, id)
	if a := firstLines(t.redact(answer)); a != "" {
		msg += ":\n\n" + a
	}
	t.show(wire.MessageInfo, msg)
	if !t.canShowDocument() {
		return
	}
	doc := "# " + oneLine(t.redact(prompt)) + "\n\n" + t.redact(transcript) + "\n\n*The turn ended (" + stop + ").*\n"
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
		name := safeFileName(id) + "-" + strconv.Itoa(n) + ".md"
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			return t.writeShown("transcripts", name, []byte(doc))
		}
	}
	return "", fmt.Errorf("too many transcripts of session %s", id)
}
