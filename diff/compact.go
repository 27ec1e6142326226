package diff

import (
	"fmt"
	"strings"
)

// DefaultMaxLines is how many removed and added lines a compact diff shows
// unless MaxLines says otherwise.
const DefaultMaxLines = 200

// CompactDiff is the compact line diff the editor tools return to the model.
type CompactDiff struct {
	// Text is the whole message: "Edited <path>" on the first line, then
	// the changed lines in a ```diff fence.
	Text string
	// Added and Removed count every changed line, shown or not.
	Added, Removed int
}

// Option adjusts Compact.
type Option func(*compactOptions)

type compactOptions struct {
	maxLines int
}

// MaxLines sets how many changed lines Compact shows; n <= 0 shows them all.
func MaxLines(n int) Option {
	return func(o *compactOptions) { o.maxLines = n }
}

// Compact describes the change from oldText to newText for the model.
// Each hunk lists its removed lines as "-<old line>: text" and then its
// added lines as "+<new line>: text"; unchanged lines are not shown.
//
// When more than MaxLines (default DefaultMaxLines) lines changed, the
// budget is split between the two kinds: added lines get up to half of it
// (rounded down), removed lines the rest, and a side that needs less than
// its share leaves the remainder to the other. The first lines of each
// kind, in document order, are shown and a last line counts the others:
// "... diff truncated (R more removed, A more added lines) ...". Splitting
// rather than cutting the list in order keeps both sides of a large
// replacement visible.
//
// Long lines are cut (clipHunk: around the change for a line and its new
// version, in the middle otherwise) with a note of the characters left
// out, and the lines stop once the text passes MaxDiffBytes, counted in
// the same last line.
//
// With no line changed the fence is empty. Invalid UTF-8 in a line is
// shown as U+FFFD so the message is always valid text.
func Compact(path, oldText, newText string, opts ...Option) CompactDiff {
	o := compactOptions{maxLines: DefaultMaxLines}
	for _, opt := range opts {
		opt(&o)
	}
	hunks := Lines(oldText, newText)
	var removed, added int
	for _, h := range hunks {
		removed += len(h.Removed)
		added += len(h.Added)
	}
	showRemoved, showAdded := splitBudget(removed, added, o.maxLines)

	var b strings.Builder
	b.WriteString("Edited ")
	b.WriteString(path)
	b.WriteString("\n```diff\n")
	shownRemoved, shownAdded := 0, 0
	for _, h := range hunks {
		rem, add := clipHunk(h.Removed, h.Added)
		for i, l := range rem {
			if shownRemoved == showRemoved || b.Len() >= MaxDiffBytes {
				break
			}
			writeLine(&b, '-', h.OldLine+i, l)
			shownRemoved++
		}
		for i, l := range add {
			if shownAdded == showAdded || b.Len() >= MaxDiffBytes {
				break
			}
			writeLine(&b, '+', h.NewLine+i, l)
			shownAdded++
		}
		if b.Len() >= MaxDiffBytes {
			break
		}
	}
	if shownRemoved < removed || shownAdded < added {
		fmt.Fprintf(&b, "... diff truncated (%d more removed, %d more added lines) ...\n",
			removed-shownRemoved, added-shownAdded)
	}
	b.WriteString("```")
	return CompactDiff{Text: b.String(), Added: added, Removed: removed}
}

// clipHunk bounds the lines of a hunk as a diff shows them: the k-th
// removed line and the k-th added line, most often one line and its
// changed version, are cut together around where they differ; the others
// are cut in the middle when long.
func clipHunk(removed, added []string) ([]string, []string) {
	long := false
	for _, l := range removed {
		long = long || len(l) > MaxLineBytes
	}
	for _, l := range added {
		long = long || len(l) > MaxLineBytes
	}
	if !long {
		return removed, added
	}
	rem, add := make([]string, len(removed)), make([]string, len(added))
	for i := range rem {
		rem[i] = ClipLine(removed[i])
	}
	for i := range add {
		add[i] = ClipLine(added[i])
	}
	for i := range min(len(removed), len(added)) {
		rem[i], add[i] = clipPair(removed[i], added[i])
	}
	return rem, add
}

// splitBudget decides how many removed and added lines fit in max.
func splitBudget(removed, added, max int) (showRemoved, showAdded int) {
	if max <= 0 || removed+added <= max {
		return removed, added
	}
	showAdded = min(added, max/2)
	showRemoved = min(removed, max-showAdded)
	showAdded = min(added, max-showRemoved)
	return showRemoved, showAdded
}

func writeLine(b *strings.Builder, sign byte, n int, text string) {
	b.WriteByte(sign)
	fmt.Fprintf(b, "%d: ", n)
	b.WriteString(strings.ToValidUTF8(text, "\uFFFD"))
	b.WriteByte('\n')
}
