package edit

import (
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/diff"
)

// region is the run of file lines that comes closest to lines the model
// sent: where it starts, how many lines, how many of them agree.
type region struct {
	start, n int
	agree    int
}

// similarity scores how alike two lines are once whitespace is ignored:
// 1 for equal, else the share of the longer one that a common prefix and
// suffix cover, which is high for a line with one word changed.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if a == "" || b == "" {
		return 0
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return 0.9 * float64(p+s) / float64(max(len(a), len(b)))
}

// nearest finds the window of the file, as many lines as pattern, whose
// lines are most like pattern's, or ok false when nothing is near: no
// non-blank line equal, and for a one-line pattern no line close to it.
// Blank lines agree with blank lines but do not make a place near.
// The search gives up on a huge file rather than take seconds on an error
// path.
func (m *matcher) nearest(pattern []string) (region, bool) {
	pk := patternKeys(pattern, punct)
	ks := m.keysAt(punct)
	if len(pk) == 0 || len(ks) == 0 {
		return region{}, false
	}
	// A placeholder line says nothing of the place, like a blank one;
	// unlike a blank one, it never agrees with the file.
	ph := make([]bool, len(pk))
	for j := range pk {
		if isPlaceholder(pattern, j) {
			pk[j], ph[j] = "", true
		}
	}
	n := min(len(pk), len(ks))
	first := -1
	for j := range n {
		if pk[j] != "" {
			first = j
			break
		}
	}
	// Lines that agree count most; how alike the others are breaks ties,
	// and so, a little, does the first line agreeing, which is the line
	// models most often get right.
	best, bestScore, bestAgree, bestStrong := -1, 0.0, 0, 0
	budget := 1 << 22
	for i := 0; i+n <= len(ks); i++ {
		score, agree, strong := 0.0, 0, 0
		for j := range n {
			if pk[j] == "" {
				if !ph[j] && ks[i+j] == "" {
					agree++
				}
				continue
			}
			s := similarity(ks[i+j], pk[j])
			if s == 1 {
				agree++
				strong++
				score++
				if j == first {
					score += 0.5
				}
			}
			score += s
			budget -= len(pk[j]) + 1
		}
		if score > bestScore {
			best, bestScore, bestAgree, bestStrong = i, score, agree, strong
		}
		if budget < 0 {
			break
		}
	}
	if best < 0 || bestStrong == 0 && (n > 1 || bestScore < 0.6) || first < 0 {
		return region{}, false
	}
	return region{start: best, n: n, agree: bestAgree}, true
}

// writeNearest tells the model where its lines come closest and what the
// file holds there now, numbered as read_files numbers lines, with '>'
// marking the lines that differ and what was sent for each. It reports
// whether it found anything to show.
func writeNearest(b *strings.Builder, m *matcher, pattern []string) bool {
	r, ok := m.nearest(pattern)
	if !ok {
		return false
	}
	fmt.Fprintf(b, "The nearest place is %s, where %d of your %d lines agree (whitespace aside). The file reads there now ('>' marks the lines that differ from yours in any way):\n",
		lineRange(r.start, r.n), r.agree, len(pattern))
	if r.agree == r.n && r.n == len(pattern) {
		b.WriteString("(Their text agrees once whitespace is set aside, but not closely enough to place the edit safely: the indentation differs from yours by more than one uniform shift, or punctuation differs.)\n")
	}
	from, to := max(r.start-1, 0), min(r.start+r.n+1, len(m.lines))
	w := len(fmt.Sprint(to))
	shown := 0
	for i := from; i < to; i++ {
		j := i - r.start
		differs := j >= 0 && j < r.n && m.lines[i].text != pattern[j]
		if shown == 24 {
			fmt.Fprintf(b, "  ... (%d more lines)\n", to-i)
			break
		}
		shown++
		mark := " "
		if differs {
			mark = ">"
		}
		fmt.Fprintf(b, "%s %*d | %s\n", mark, w, i+1, diff.ClipLine(m.lines[i].text))
		if differs {
			fmt.Fprintf(b, "  %*s   (you sent: %q)\n", w, "", diff.ClipLine(pattern[j]))
		}
	}
	return true
}
