package diff

import (
	"fmt"
	"strings"
)

// DefaultContext is the number of unchanged lines Unified shows around each
// change when asked for a negative number, as diff -u does.
const DefaultContext = 3

// Unified returns a unified diff from oldText to newText: a
// "--- a/<path>" and "+++ b/<path>" header, then "@@" hunks with context
// lines of unchanged text around each change (DefaultContext when context
// is negative). Lines compare byte for byte, terminators included, like
// diff -u, and a last line without a newline is flagged with
// "\ No newline at end of file". Equal texts give "". It is exact and
// unbounded: what goes to a client is Preview's, which bounds it.
//
// Only the changed region and its context are split into lines, so a small
// change to a large file stays cheap.
func Unified(path, oldText, newText string, context int) string {
	if oldText == newText {
		return ""
	}
	w := &unifiedWriter{exact: true, limit: -1}
	fmt.Fprintf(&w.b, "--- a/%s\n+++ b/%s\n", path, path)
	w.file(oldText, newText, context)
	return w.b.String()
}

// PreviewFile is one file of an edit's approval preview: From and To are
// its labels in the headers ("a/<path>", "b/<path>", "/dev/null").
type PreviewFile struct {
	From, To         string
	OldText, NewText string
}

// Preview is the approval preview of an edit of files, with DefaultContext
// lines of context. Up to MaxRegionBytes it is the exact unified diff,
// which the editors' plugins apply to the file to show the change side by
// side or to take some of its hunks. Past that it is cut, and made so
// that no client takes it for a patch: a first line says so, files are
// "=== <from> → <to>" lines and hunks "@@@ -<old> +<new> @@@", long lines
// are cut as Compact cuts them, and what passes MaxDiffBytes is counted in
// a last line. A client applying a cut line would write the note into the
// file.
func Preview(files []PreviewFile) string { return previewWithin(files, MaxRegionBytes) }

// PreviewText is Preview for a client that only shows the text (an
// approval asked in a message): exact up to MaxDiffBytes, cut past it.
func PreviewText(files []PreviewFile) string { return previewWithin(files, MaxDiffBytes) }

func previewWithin(files []PreviewFile, exact int) string {
	w := &unifiedWriter{exact: true, limit: exact}
	for _, f := range files {
		fmt.Fprintf(&w.b, "--- %s\n+++ %s\n", f.From, f.To)
		w.file(f.OldText, f.NewText, DefaultContext)
		if w.over {
			break
		}
	}
	if !w.over {
		return w.b.String()
	}
	w = &unifiedWriter{limit: MaxDiffBytes}
	fmt.Fprintf(&w.b, "The preview is cut to stay small (the whole diff passes %d KiB): it is for reading, not a patch.\n", exact>>10)
	for i, f := range files {
		if w.b.Len() >= MaxDiffBytes {
			w.b.WriteString(LeftOut(len(files) - i))
			break
		}
		fmt.Fprintf(&w.b, "=== %s → %s\n", f.From, f.To)
		w.file(f.OldText, f.NewText, DefaultContext)
	}
	if w.left > 0 {
		fmt.Fprintf(&w.b, "... preview cut at %d KiB: %d more lines not shown ...\n", MaxDiffBytes>>10, w.left)
	}
	return w.b.String()
}

// unifiedWriter writes the hunks of files. Exact, it writes them as they
// are, and notes (over) when the text would pass limit (negative: none),
// after which the text is not to be used. Cut, it
// writes the reading form Preview describes, counting in left the lines
// past limit.
type unifiedWriter struct {
	b     strings.Builder
	exact bool
	limit int
	over  bool
	left  int
}

// file writes the hunks of one file's change.
func (w *unifiedWriter) file(oldText, newText string, context int) {
	if oldText == newText {
		return
	}
	if context < 0 {
		context = DefaultContext
	}
	// Cut a window holding the changed region and the context around it;
	// lines outside it can appear in no hunk.
	start, tail := window(oldText, newText, context)
	oldLines := splitKeepEnds(oldText[start : len(oldText)-tail])
	newLines := splitKeepEnds(newText[start : len(newText)-tail])
	base := strings.Count(oldText[:start], "\n") // lines before the window

	changes := diffSeq(oldLines, newLines)
	for len(changes) > 0 && !w.over {
		// A hunk takes changes while the unchanged gap between them is small
		// enough that their context would touch.
		n := 1
		for n < len(changes) && changes[n].oldStart-changes[n-1].oldEnd <= 2*context {
			n++
		}
		w.hunk(oldLines, newLines, changes[:n], context, base)
		changes = changes[n:]
	}
}

// full reports whether the text has reached the limit.
func (w *unifiedWriter) full() bool { return w.limit >= 0 && w.b.Len() >= w.limit }

// hunk writes one hunk covering changes and their context.
func (w *unifiedWriter) hunk(oldLines, newLines []string, changes []change, context, base int) {
	first, last := changes[0], changes[len(changes)-1]
	before := min(context, first.oldStart)
	after := min(context, len(oldLines)-last.oldEnd)
	oldStart, oldEnd := first.oldStart-before, last.oldEnd+after
	newStart, newEnd := first.newStart-before, last.newEnd+after
	if !w.exact && w.full() {
		w.left += newEnd - newStart + removedIn(changes) // context and added lines, and removed ones
		return
	}
	mark := "@@"
	if !w.exact {
		mark = "@@@"
	}
	fmt.Fprintf(&w.b, "%s -%s +%s %s\n", mark, hunkRange(base+oldStart, oldEnd-oldStart), hunkRange(base+newStart, newEnd-newStart), mark)

	oi := oldStart
	for _, c := range changes {
		w.lines(' ', oldLines[oi:c.oldStart])
		rem, add := oldLines[c.oldStart:c.oldEnd], newLines[c.newStart:c.newEnd]
		if !w.exact {
			rem, add = clipEnded(rem, add)
		}
		w.lines('-', rem)
		w.lines('+', add)
		oi = c.oldEnd
	}
	w.lines(' ', oldLines[oi:oldEnd])
}

// removedIn counts the removed lines of changes.
func removedIn(changes []change) int {
	n := 0
	for _, c := range changes {
		n += c.oldEnd - c.oldStart
	}
	return n
}

// clipEnded is clipHunk for lines that keep their terminators.
func clipEnded(removed, added []string) ([]string, []string) {
	strip := func(ls []string) ([]string, []string) {
		text, ends := make([]string, len(ls)), make([]string, len(ls))
		for i, l := range ls {
			t := strings.TrimSuffix(l, "\n")
			if len(t) < len(l) {
				t = strings.TrimSuffix(t, "\r")
			}
			text[i], ends[i] = t, l[len(t):]
		}
		return text, ends
	}
	rt, re := strip(removed)
	at, ae := strip(added)
	rt, at = clipHunk(rt, at)
	for i := range rt {
		rt[i] += re[i]
	}
	for i := range at {
		at[i] += ae[i]
	}
	return rt, at
}

// hunkRange formats one side of a hunk header the way diff -u does: the
// count is left out when it is 1, and an empty side names the line before.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// lines writes lines with a prefix; in the cut form context lines are
// cut when long, as changed ones are by clipEnded.
func (w *unifiedWriter) lines(prefix byte, lines []string) {
	for _, l := range lines {
		if w.over {
			return
		}
		if w.exact && w.limit >= 0 && w.b.Len()+len(l) > w.limit {
			w.over = true // the caller takes the cut form instead
			return
		}
		if !w.exact && w.full() {
			w.left++
			continue
		}
		if !w.exact && prefix == ' ' && len(l) > MaxLineBytes {
			t := strings.TrimSuffix(l, "\n")
			l = ClipLine(t) + l[len(t):]
		}
		w.b.WriteByte(prefix)
		w.b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			w.b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
