package diff

import "strings"

// RegionContext is the number of unchanged lines Regions keeps on each
// side of a change when asked for a negative number, as Unified does.
const RegionContext = DefaultContext

// window is where the changed lines of two texts and context lines
// around them lie: from byte start of both, up to tail bytes before the
// end of each. Everything outside is common to the two texts.
func window(oldText, newText string, context int) (start, tail int) {
	if context < 0 {
		context = DefaultContext
	}
	p, s := trimCommonLines(oldText, newText)
	start = p
	for range context {
		if start == 0 {
			break
		}
		start = strings.LastIndexByte(oldText[:start-1], '\n') + 1
	}
	tail = s // bytes of the common suffix left outside the window
	for range context {
		if tail == 0 {
			break
		}
		i := strings.IndexByte(oldText[len(oldText)-tail:], '\n')
		if i < 0 {
			tail = 0
			break
		}
		tail -= i + 1
	}
	return start, tail
}

// Part is one changed region of an edit (see Regions).
type Part struct {
	// Old and New are the region's text before and after the edit.
	Old, New string
	// At is the byte offset of Old in the old text, and Line the 1-based
	// line it starts in.
	At, Line int
}

// Regions cuts an edit into the regions a client that shows the change
// itself (ACP's diff content) is sent, bounded whatever the file: each is
// a run of changed lines whose context would touch, as a unified diff's
// hunks are, with context lines (RegionContext when context is negative)
// around it; changes far apart make separate regions, so edits at both
// ends of a long file do not send the file between them. Each region is
// exact: putting each New in place of its Old gives the new text. Inside
// a line longer than MaxLineBytes a region starts or ends regionKeep bytes
// from the change instead of at the line's end, so a one-word change to a
// line of megabytes sends that word in its context.
//
// Regions past budget bytes of text in all (MaxRegionBytes when budget
// is negative) are left out, and left counts them: a client cannot be sent
// part of a region, since what it shows must be the change. used is what
// the parts take of the budget, for a caller that shares one among files.
// Equal texts give none.
func Regions(oldText, newText string, context, budget int) (parts []Part, left, used int) {
	if oldText == newText {
		return nil, 0, 0
	}
	if context < 0 {
		context = RegionContext
	}
	if budget < 0 {
		budget = MaxRegionBytes
	}
	start, tail := window(oldText, newText, context)
	oldWin, newWin := oldText[start:len(oldText)-tail], newText[start:len(newText)-tail]
	oldLines, newLines := splitKeepEnds(oldWin), splitKeepEnds(newWin)
	oldOff, newOff := offsets(oldLines), offsets(newLines)
	base := strings.Count(oldText[:start], "\n")
	changes := diffSeq(oldLines, newLines)
	if len(changes) == 0 {
		// Equal lines with different bytes cannot be: the window holds a
		// change. Send the window whole.
		changes = []change{{0, len(oldLines), 0, len(newLines)}}
	}
	for len(changes) > 0 {
		n := 1
		for n < len(changes) && changes[n].oldStart-changes[n-1].oldEnd <= 2*context {
			n++
		}
		first, last := changes[0], changes[n-1]
		changes = changes[n:]
		before := min(context, first.oldStart)
		after := min(context, len(oldLines)-last.oldEnd)
		at := oldOff[first.oldStart-before]
		o := oldWin[at:oldOff[last.oldEnd+after]]
		nw := newWin[newOff[first.newStart-before]:newOff[last.newEnd+after]]
		line := 1 + base + first.oldStart - before
		o, nw, at, line = narrowRegion(o, nw, start+at, line)
		if len(o)+len(nw) > budget {
			left++
			budget = 0
			continue
		}
		budget -= len(o) + len(nw)
		used += len(o) + len(nw)
		parts = append(parts, Part{Old: o, New: nw, At: at, Line: line})
	}
	return parts, left, used
}

// offsets are the byte offsets at which lines start, and one past the end.
func offsets(lines []string) []int {
	off := make([]int, len(lines)+1)
	for i, l := range lines {
		off[i+1] = off[i] + len(l)
	}
	return off
}

// narrowRegion trims a region's common start and end where its lines are
// long: the changed line keeps regionKeep bytes on each side of the change
// when it is longer than twice that, and a context line longer than
// MaxLineBytes keeps only its regionKeep bytes nearest the change (and
// the lines beyond it are dropped). Short lines stay whole, so an edit of
// ordinary lines keeps its whole-line region. The bytes taken off are the
// same in both parts, so the region stays exact; at and line follow the
// start.
func narrowRegion(o, n string, at, line int) (string, string, int, int) {
	if len(o) <= MaxLineBytes && len(n) <= MaxLineBytes {
		return o, n, at, line
	}
	p := commonPrefixLen(o, n)
	s := commonSuffixLen(o[p:], n[p:])
	from := strings.LastIndexByte(o[:p], '\n') + 1 // the changed line's start
	if p-from > 2*regionKeep {
		from = runeFloor(o, p-regionKeep)
	} else {
		for from > 0 {
			prev := strings.LastIndexByte(o[:from-1], '\n') + 1
			if from-prev > MaxLineBytes {
				from = runeFloor(o, from-regionKeep)
				break
			}
			from = prev
		}
	}
	e := len(o) - s // where the common end starts
	to := lineEnd(o, e)
	if to-e > 2*regionKeep {
		to = runeCeil(o, e+regionKeep)
	} else {
		for to < len(o) {
			next := lineEnd(o, to)
			if next-to > MaxLineBytes {
				to = runeCeil(o, to+regionKeep)
				break
			}
			to = next
		}
	}
	cut := len(o) - to // bytes taken off the end
	line += strings.Count(o[:from], "\n")
	return o[from : len(o)-cut], n[from : len(n)-cut], at + from, line
}

// lineEnd is the offset just past the line of s that holds offset i.
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}
