package diff

import "strings"

// RegionContext is the number of unchanged lines Region keeps on each
// side of a change when asked for a negative number, as Unified does.
const RegionContext = DefaultContext

// Region cuts the changed part out of an edit for a client that shows the
// change itself (ACP's diff content, say) instead of the whole old and new
// file: oldPart and newPart are the lines that differ plus context
// unchanged lines before and after (RegionContext when context is
// negative), whole lines with their terminators. What lies outside is the
// same in both texts, so
//
//	newText == oldText[:at] + newPart + oldText[at+len(oldPart):]
//
// where at is the byte offset of oldPart in oldText, and a diff of oldPart
// against newPart is the diff of the two texts. line is the 1-based line of
// oldText (and of newText) the parts start at. Equal texts give empty
// parts. The cost is that of finding the common prefix and suffix: a small
// change to a large file copies nothing.
func Region(oldText, newText string, context int) (oldPart, newPart string, line int) {
	if oldText == newText {
		return "", "", 1 + strings.Count(oldText, "\n")
	}
	start, tail := window(oldText, newText, context)
	return oldText[start : len(oldText)-tail], newText[start : len(newText)-tail], 1 + strings.Count(oldText[:start], "\n")
}

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
