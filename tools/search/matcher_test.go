package search

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// naiveLines is the reference the matcher must agree with: every line,
// split at "\n", that the query's regexp matches.
func naiveLines(t testing.TB, query string, data []byte) []int {
	re := regexp.MustCompile(query)
	var out []int
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte{'\n'})
	if data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1] // no line after the final break
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, i+1)
		}
	}
	return out
}

// matcherLines runs a compiled query and returns the 1-based numbers of
// the lines it reports.
func matcherLines(t testing.TB, query string, data []byte) []int {
	m, err := compileQuery(0, query)
	if err != nil {
		t.Fatalf("compileQuery(%q): %v", query, err)
	}
	var out []int
	last := -1
	m.lines(data, func(start, end int) bool {
		if start <= last {
			t.Fatalf("%q: lines out of order or repeated at byte %d", query, start)
		}
		if start > 0 && data[start-1] != '\n' || end < len(data) && data[end] != '\n' {
			t.Fatalf("%q: [%d,%d) is not a whole line", query, start, end)
		}
		last = start
		out = append(out, bytes.Count(data[:start], []byte{'\n'})+1)
		return true
	})
	return out
}

var matcherText = strings.Join([]string{
	"package main",
	"",
	"import \"sync\"",
	"type Server struct { mu sync.Mutex; sem chan struct{} } // a MUTEX and a Semaphore",
	"func NewServer() *Server { return &Server{} }",
	"func  NewClient(x int) {}",
	"func (s *Server) NewThing() {}",
	"funcNewNot()",
	"// ſemaphore with a long s, Kelvin: \u212a and KELVIN",
	"SetFinalizer(x, nil)\r",
	"setfinalizer lower",
	"mutexmutexmutex",
	"ends without newline: semaphore",
}, "\n")

func TestMatcherAgreesWithRegexp(t *testing.T) {
	queries := []string{
		`SetFinalizer`, `setfinalizer`, `(?i)setfinalizer`, `\bfunc\s+New\w+`,
		`(?i)(mutex|semaphore)`, `(?i)semaphore`, `(?i)k`, `(?i)kelvin`, `mutex|Mutex`,
		`(Server|Client)\(`, `^func`, `nil\)$`, `newline: \w+$`, `x*`, `^$`, `[A-Z][a-z]+`,
		`\d`, `(?i)ſemaphore`, `a MUTEX`, `mutex(mutex)+`, `(?:foo)?bar|mutex`, `\r`,
		`struct\{\}`, `Ser(ver)?`, `(?s)func.*Server`,
	}
	texts := map[string]string{
		"plain":        matcherText,
		"trailing-nl":  matcherText + "\n",
		"crlf":         strings.ReplaceAll(matcherText, "\n", "\r\n"),
		"empty":        "",
		"only-newline": "\n",
		"one-line":     "mutex",
	}
	for name, text := range texts {
		for _, q := range queries {
			data := []byte(text)
			got := matcherLines(t, q, data)
			want := naiveLines(t, q, data)
			if !slices.Equal(got, want) {
				t.Errorf("%s: query %q: lines %v, want %v", name, q, got, want)
			}
		}
	}
}

func TestQueryErrors(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{`(foo`, []string{`query 2 "(foo"`, "missing closing )", "backslash"}},
		{`foo(?=bar)`, []string{"lookahead"}},
		{`\q`, []string{"invalid escape", `\d`}},
		{"a\nb", []string{"line by line"}},
		{`a\nb`, []string{"line break"}},
		{``, []string{"empty"}},
	}
	for _, c := range cases {
		_, err := compileQuery(1, c.query)
		var qe *QueryError
		if !errors.As(err, &qe) {
			t.Errorf("%q: got %v, want a *QueryError", c.query, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.query, err, w)
			}
		}
	}
	// A line break in one branch only still leaves the others to match.
	if _, err := compileQuery(0, `a\nb|c`); err != nil {
		t.Errorf(`a\nb|c: %v`, err)
	}
}

func TestPrefilterChoice(t *testing.T) {
	cases := []struct {
		query string
		want  []string // the literals scanned for; nil: no prefilter
		whole bool     // a hit needs no regexp
	}{
		{`SetFinalizer`, []string{"SetFinalizer"}, true},
		{`(?i)(mutex|semaphore)`, []string{"mutex", "emaphore"}, true},
		{`\bfunc\s+New\w+`, []string{"New"}, false},
		{`foo|bar.*`, []string{"foo", "bar"}, false},
		{`(?i)kelvin`, []string{"elvin"}, true},
		{`x*`, nil, false},
		{`\w+\d`, nil, false},
		{`(?i)日本`, nil, false},
		{`日本`, []string{"日本"}, true},
	}
	for _, c := range cases {
		m, err := compileQuery(0, c.query)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == nil {
			if m.pre != nil {
				t.Errorf("%q: prefilter %v, want none", c.query, m.pre.lits)
			}
			continue
		}
		if m.pre == nil {
			t.Errorf("%q: no prefilter, want %q", c.query, c.want)
			continue
		}
		var got []string
		for _, l := range m.pre.lits {
			got = append(got, string(l.text))
			if (l.full != nil) != c.whole {
				t.Errorf("%q: literal %q whole=%v, want %v", c.query, l.text, l.full != nil, c.whole)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: literals %q, want %q", c.query, got, c.want)
		}
	}
}

// FuzzMatcher checks that the prefiltered and line-by-line paths report
// exactly the lines the regexp matches, for any query and text.
func FuzzMatcher(f *testing.F) {
	f.Add(`(?i)(mutex|semaphore)`, matcherText)
	f.Add(`\bfunc\s+New\w+`, matcherText)
	f.Add(`SetFinalizer`, "SetFinalizer\nSetFinalize\nxSetFinalizer")
	f.Add(`(?i)k`, "K\nk\n\u212a\n")
	f.Add(`a|b|c`, "\n\na\n")
	f.Fuzz(func(t *testing.T, query, text string) {
		if len(query) > 200 || len(text) > 1<<12 {
			return
		}
		if _, err := regexp.Compile(query); err != nil {
			return
		}
		if _, err := compileQuery(0, query); err != nil {
			return // refused, such as a literal line break
		}
		got := matcherLines(t, query, []byte(text))
		want := naiveLines(t, query, []byte(text))
		if !slices.Equal(got, want) {
			t.Fatalf("query %q on %q: lines %v, want %v", query, text, got, want)
		}
	})
}
