package diff

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The views of an edit (the compact diff the model and cline/diff get, the
// approval's unified preview, ACP's diff content) are bounded here, in one
// place, whatever the file: a one-character edit to a file of one 2 MB
// line must not send the line, twice, to the model and to the editor. The
// edit itself is delivered whole; only what describes it is cut, and every
// cut says what it left out.
const (
	// MaxLineBytes is the longest line a diff shows whole. A longer one is
	// cut in the middle, or, when it is the changed version of a line the
	// diff also shows, around the part that changed.
	MaxLineBytes = 400
	// lineKeep is how much of a cut line is kept at each end, and of the
	// unchanged text on each side of a change inside a long line.
	lineKeep = 150
	// MaxDiffBytes bounds the text of a compact or unified diff; lines past
	// it are counted, not shown.
	MaxDiffBytes = 32 << 10
	// MaxRegionBytes bounds the views of one call that a client must get
	// exact or not at all: the regions of ACP's diff content (see
	// Regions) and an approval preview sent as a patch (see Preview).
	MaxRegionBytes = 1 << 20
	// regionKeep is the unchanged text kept on each side of a change
	// inside a long line of a region.
	regionKeep = 256
)

// Fits reports whether a diff of n bytes may join a message already
// holding used bytes of others (a patch's result, its preview): the first
// always does, the others while the message stays within MaxDiffBytes, so
// that a change to many files is bounded as one to a single file is.
func Fits(used, n int) bool { return used == 0 || used+n <= MaxDiffBytes }

// LeftOut is the line that ends such a message when files' diffs did not
// fit.
func LeftOut(files int) string {
	return fmt.Sprintf("... diffs of %d more files not shown (past %d KiB) ...\n", files, MaxDiffBytes>>10)
}

// cutNote is what stands in a line for the characters taken out of it.
func cutNote(left string) string {
	return fmt.Sprintf("[… %d characters left out …]", utf8.RuneCountInString(left))
}

// ClipLine cuts a line longer than MaxLineBytes in the middle, keeping
// lineKeep bytes (whole characters) at each end. Messages that quote a
// line of a file (an edit's failure saying what it found) cut it with this
// too.
func ClipLine(s string) string {
	if len(s) <= MaxLineBytes {
		return s
	}
	head := runeFloor(s, lineKeep)
	tail := runeCeil(s, len(s)-lineKeep)
	return s[:head] + cutNote(s[head:tail]) + s[tail:]
}

// clipPair cuts a removed line and the added line that replaced it. When
// either is long, both keep only the text around where they differ: the
// end of their common start and the beginning of their common end, each
// lineKeep bytes, with the changed middle (itself cut when long) between.
// A one-word change in a line of megabytes so shows as that word in its
// context.
func clipPair(old, new string) (string, string) {
	if len(old) <= MaxLineBytes && len(new) <= MaxLineBytes {
		return old, new
	}
	p := runeFloor(old, commonPrefixLen(old, new))
	s := commonSuffixLen(old[p:], new[p:])
	// Keep whole characters of the common end too.
	s = len(old) - runeCeil(old, len(old)-s)
	side := func(t string) string {
		mid := t[p : len(t)-s]
		from := runeCeil(t, max(0, p-lineKeep))
		to := runeFloor(t, min(len(t), len(t)-s+lineKeep))
		var b strings.Builder
		if from > 0 {
			b.WriteString(cutNote(t[:from]))
		}
		b.WriteString(t[from:p])
		b.WriteString(ClipLine(mid))
		b.WriteString(t[len(t)-s : to])
		if to < len(t) {
			b.WriteString(cutNote(t[to:]))
		}
		return b.String()
	}
	return side(old), side(new)
}

// runeFloor is the largest character boundary of s at or before i (a
// character is at most utf8.UTFMax bytes; in bytes that are not UTF-8 the
// search stops there).
func runeFloor(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for n := 0; i > 0 && n < utf8.UTFMax-1 && !utf8.RuneStart(s[i]); n++ {
		i--
	}
	return i
}

// runeCeil is the smallest character boundary of s at or after i.
func runeCeil(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for n := 0; i < len(s) && n < utf8.UTFMax-1 && !utf8.RuneStart(s[i]); n++ {
		i++
	}
	return i
}
