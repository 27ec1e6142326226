package session

import (
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

// TurnLog records one turn's updates as markdown, for a client that
// shows none of them. Its methods may be called from any goroutine.
type TurnLog struct {
	mu     sync.Mutex
	b      strings.Builder // guarded by mu
	answer strings.Builder // guarded by mu; the agent's text since its last tool call
	full   bool            // guarded by mu; b reached turnLogBytes
}

func (l *TurnLog) write(s string) {
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

// Add records u.
func (l *TurnLog) Add(u wire.SessionUpdate) {
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
		l.write("\n\n- " + OneLine(u.Title) + "\n\n")
		l.answer.Reset()
	case wire.ToolCallUpdate:
		if u.Status == wire.StatusFailed {
			l.write("\n  (failed)\n\n")
		}
	}
}

// OneLine keeps s on one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// FirstLines is the start of text, at most answerLines lines and about
// answerBytes bytes, saying when more was left out.
func FirstLines(text string) string {
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

// Text returns the transcript so far and the agent's words since its
// last tool call (its answer, when the turn has ended).
func (l *TurnLog) Text() (transcript, answer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.answer.String()
}
