package tools

import "strings"

// A cut in output (the middle of a command's output, what fell out of a
// background command's ring) may fall inside a key, and redaction, which
// scrubs whole values, would then leave what is on either side. Keys hold
// no white space, so a cut is moved out of the word it falls in: the word
// is left out whole. A word longer than maxCutWord is no key, and is cut
// where it falls.
const maxCutWord = 1 << 10

const cutSpace = " \t\r\n\f\v"

// beforeCut is text that a cut follows, without a last word the cut may
// have split.
func beforeCut(text string) string {
	if text == "" || strings.IndexByte(cutSpace, text[len(text)-1]) >= 0 {
		return text
	}
	if i := strings.LastIndexAny(text, cutSpace); i >= 0 && len(text)-i-1 <= maxCutWord {
		return text[:i+1]
	}
	return text
}

// afterCut is text that follows a cut, without a first word the cut may
// have split.
func afterCut(text string) string {
	if text == "" || strings.IndexByte(cutSpace, text[0]) >= 0 {
		return text
	}
	if i := strings.IndexAny(text, cutSpace); i >= 0 && i <= maxCutWord {
		return text[i:]
	}
	return text
}

// cutWords is text cut to at most n characters between words, with "…"
// where it was cut; a first word longer than n leaves only the "…".
func cutWords(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	cut := n
	for cut > 0 && !strings.ContainsRune(cutSpace, r[cut]) {
		cut--
	}
	return strings.TrimRight(string(r[:cut]), cutSpace) + "…"
}
