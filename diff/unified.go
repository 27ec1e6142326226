package diff

import (
	"fmt"
	"strings"
)

// DefaultContext is the number of unchanged lines Unified shows around each
// change when asked for a negative number, as diff -u does.
const DefaultContext = 3

// Unified returns a unified diff from oldText to newText for an approval
// preview: a "--- a/<path>" and "+++ b/<path>" header, then "@@" hunks with
// context lines of unchanged text around each change (DefaultContext when
// context is negative). Lines compare byte for byte, terminators included,
// like diff -u, and a last line without a newline is flagged with
// "\ No newline at end of file". Equal texts give "".
//
// Only the changed region and its context are split into lines, so a small
// change to a large file stays cheap.
func Unified(path, oldText, newText string, context int) string {
	if oldText == newText {
		return ""
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
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", path, path)
	for len(changes) > 0 {
		// A hunk takes changes while the unchanged gap between them is small
		// enough that their context would touch.
		n := 1
		for n < len(changes) && changes[n].oldStart-changes[n-1].oldEnd <= 2*context {
			n++
		}
		writeHunk(&b, oldLines, newLines, changes[:n], context, base)
		changes = changes[n:]
	}
	return b.String()
}

// writeHunk writes one "@@" hunk covering changes and their context.
func writeHunk(b *strings.Builder, oldLines, newLines []string, changes []change, context, base int) {
	first, last := changes[0], changes[len(changes)-1]
	before := min(context, first.oldStart)
	after := min(context, len(oldLines)-last.oldEnd)
	oldStart, oldEnd := first.oldStart-before, last.oldEnd+after
	newStart, newEnd := first.newStart-before, last.newEnd+after
	fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(base+oldStart, oldEnd-oldStart), hunkRange(base+newStart, newEnd-newStart))

	oi := oldStart
	for _, c := range changes {
		writeLines(b, ' ', oldLines[oi:c.oldStart])
		writeLines(b, '-', oldLines[c.oldStart:c.oldEnd])
		writeLines(b, '+', newLines[c.newStart:c.newEnd])
		oi = c.oldEnd
	}
	writeLines(b, ' ', oldLines[oi:oldEnd])
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

func writeLines(b *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		b.WriteByte(prefix)
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
