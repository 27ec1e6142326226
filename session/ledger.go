package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
)

// The ledger is what every compaction restates from what the daemon saw
// happen, never from the model's memory: the files the session read and
// changed, with their line counts as the workspace has them now, the
// commands of the last turn that failed, and the questions left open.
// (The plan and the user's latest request are the session's own state.)

// Ledger bounds.
const (
	// ledgerFiles is the most files listed, the most recent first kept.
	ledgerFiles = 40
	// ledgerCommands and ledgerQuestions bound the other lists.
	ledgerCommands  = 10
	ledgerQuestions = 5
	// ledgerReadWait bounds the reads that count lines: a compaction
	// must not hang on a slow client's fs/read_text_file.
	ledgerReadWait = 5 * time.Second
	// lastReplyChars caps the last assistant message quoted.
	lastReplyChars = 8000
)

// failedCommand is a command of the turn that did not succeed.
type failedCommand struct {
	command, status string
}

// openQuestion is a question put to the user and not answered in the
// turn it was asked in; turn is that turn's index.
type openQuestion struct {
	text, note string
	turn       int
}

// noteCall records what an ended call of tool adds to the ledger: the
// files read_files read (other read-only tools name folders and
// patterns, not files read) and the commands that failed.
func (s *Session) noteCall(tool string, d *tools.Description, r *tools.Result) {
	if r == nil {
		return
	}
	var read []string
	s.mu.Lock()
	if tool == tools.NameReadFiles && d != nil && !r.IsError {
		for _, p := range d.Paths() {
			if !slices.Contains(s.read, p) {
				s.read = append(s.read, p)
				read = append(read, p)
			}
		}
	}
	for _, c := range r.Commands {
		if !c.OK {
			s.failed = append(s.failed, failedCommand{command: c.Command, status: c.Status})
		}
	}
	if n := len(s.failed); n > ledgerCommands {
		s.failed = slices.Delete(s.failed, 0, n-ledgerCommands)
	}
	s.mu.Unlock()
	if len(read) > 0 {
		s.persist(Record{Type: RecordEdited, Read: read})
	}
}

// noteQuestion records a question the user did not answer in its turn.
func (s *Session) noteQuestion(question, note string) {
	s.mu.Lock()
	s.questions = append(s.questions, openQuestion{text: question, note: note, turn: s.turnIndex})
	if n := len(s.questions); n > ledgerQuestions {
		s.questions = slices.Delete(s.questions, 0, n-ledgerQuestions)
	}
	s.mu.Unlock()
}

// startLedgerTurnLocked forgets what the new turn index makes stale: the
// failed commands are the last turn's, and a question stays open for the
// turn after it (whose request may answer it). s.mu is held.
func (s *Session) startLedgerTurnLocked() {
	s.failed = nil
	s.questions = slices.DeleteFunc(s.questions, func(q openQuestion) bool { return q.turn < s.turnIndex-1 })
}

// writeLedger appends the ledger to a facts message: the files with
// their current line counts (read now through the session's Files, the
// editor's unsaved text included), the failed commands, the open
// questions, and the last assistant message of the replaced part.
func (s *Session) writeLedger(b *strings.Builder, replaced []provider.Message) {
	s.mu.Lock()
	edited, read := slices.Clone(s.edited), slices.Clone(s.read)
	failed, questions := slices.Clone(s.failed), slices.Clone(s.questions)
	s.mu.Unlock()
	type entry struct{ path, what string }
	var files []entry
	for _, p := range edited {
		files = append(files, entry{p, "changed"})
	}
	for _, p := range read {
		if !slices.Contains(edited, p) {
			files = append(files, entry{p, "read"})
		}
	}
	if len(files) > ledgerFiles {
		fmt.Fprintf(b, "\n(%d files earlier in the session are not listed.)", len(files)-ledgerFiles)
		files = files[len(files)-ledgerFiles:]
	}
	if len(files) > 0 {
		b.WriteString("\nFiles read and changed in this session (line counts as the files are now):\n")
		ctx, cancel := context.WithTimeout(context.Background(), ledgerReadWait)
		for _, f := range files {
			fmt.Fprintf(b, "- %s: %s, %s\n", f.path, f.what, s.lineCount(ctx, f.path))
		}
		cancel()
	}
	if len(failed) > 0 {
		b.WriteString("\nCommands of the last turn that failed:\n")
		for _, c := range failed {
			fmt.Fprintf(b, "- `%s`: %s\n", cut(c.command, 500), c.status)
		}
	}
	if len(questions) > 0 {
		b.WriteString("\nOpen questions to the user:\n")
		for _, q := range questions {
			fmt.Fprintf(b, "- %s (%s)\n", cut(q.text, 1000), q.note)
		}
	}
	for i := len(replaced) - 1; i >= 0; i-- {
		if m := replaced[i]; m.Role == provider.RoleAssistant {
			if t := strings.TrimSpace(messageText(m)); t != "" {
				b.WriteString("\nYour last message before the compaction, verbatim:\n<message>\n")
				b.WriteString(cut(t, lastReplyChars))
				b.WriteString("\n</message>\n")
				break
			}
		}
	}
}

// lineCount says how many lines a file of the ledger has now.
func (s *Session) lineCount(ctx context.Context, path string) string {
	if s.cfg.Files == nil {
		return "line count unknown"
	}
	abs, err := s.cfg.Files.Resolve(path)
	if err != nil {
		return "outside the workspace now"
	}
	ft, err := s.cfg.Files.Read(ctx, abs)
	switch {
	case err != nil:
		return "unreadable now"
	case !ft.Exists:
		return "no longer exists"
	}
	n := strings.Count(ft.Text, "\n")
	if ft.Text != "" && !strings.HasSuffix(ft.Text, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
