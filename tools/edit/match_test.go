package edit

import (
	"math/rand/v2"
	"testing"
)

// TestFindMatchesNaiveSearch compares the KMP line search with the obvious
// quadratic one on random texts over a tiny alphabet, where repeats and
// near-misses are common.
func TestFindMatchesNaiveSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", " a", ""}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return out
	}
	for range 3000 {
		texts := pick(r.IntN(30))
		lines := make([]line, len(texts))
		for i, s := range texts {
			lines[i] = line{text: s}
		}
		m := newMatcher(lines)
		pattern := pick(1 + r.IntN(4))
		from := r.IntN(len(texts) + 2)
		skip := r.IntN(len(texts) + 1) // a start the predicate refuses
		ok := func(i int) bool { return i != skip }
		for _, l := range []level{exact, trimBoth} {
			want := -1
			for i := from; i+len(pattern) <= len(texts) && want < 0; i++ {
				match := ok(i)
				for k := 0; match && k < len(pattern); k++ {
					match = key(texts[i+k], l) == key(pattern[k], l)
				}
				if match {
					want = i
				}
			}
			if got := m.find(pattern, from, l, ok); got != want {
				t.Fatalf("find(%q in %q from %d, level %v, skip %d) = %d, want %d", pattern, texts, from, l, skip, got, want)
			}
		}
	}
}

func TestNormalizePunct(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                        "plain",
		"\u201chi\u201d \u2018x\u2019": "\"hi\" 'x'",
		"a\u2013b\u2014c\u2212d":       "a-b-c-d",
		"x\u00a0=\u202f1\u2026":        "x = 1...",
		"zero\u200bwidth":              "zerowidth",
		"caf\u00e9 stays caf\u00e9":    "caf\u00e9 stays caf\u00e9",
	} {
		if got := normalizePunct(in); got != want {
			t.Errorf("normalizePunct(%q) = %q, want %q", in, got, want)
		}
	}
}
