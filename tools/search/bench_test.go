package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// benchQueries are the three kinds of query bench/search.sh compares with
// ripgrep: a literal, a word regexp with a literal part, and a
// case-insensitive alternation.
var benchQueries = []struct{ name, query string }{
	{"literal", `SetFinalizer`},
	{"word", `\bfunc\s+New\w+`},
	{"fold-alternation", `(?i)(mutex|semaphore)`},
	{"no-literal", `[A-Z][a-z]+[0-9]{3}\b`},
}

// BenchmarkSearchGoroot searches Go's own source tree, the corpus of
// bench/search.sh; it is skipped where that tree is absent.
func BenchmarkSearchGoroot(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skip("no Go source tree at", root)
	}
	for _, q := range benchQueries {
		for _, max := range []int{-1, DefaultMaxResults} {
			b.Run(fmt.Sprintf("%s/max=%d", q.name, max), func(b *testing.B) {
				for b.Loop() {
					ign := workspace.NewIgnoreMatcher([]string{root})
					_, err := Search(context.Background(), Options{
						Root: root, Queries: []string{q.query}, Ignored: ign.Ignored, Context: 1, MaxResults: max,
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMatcher measures matching alone, on the text of Go's runtime
// package in memory (or, without a Go source tree, 1 MiB of Go-like
// lines).
func BenchmarkMatcher(b *testing.B) {
	data := matcherCorpus(b)
	for _, q := range benchQueries {
		m, err := compileQuery(0, q.query)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				n := 0
				m.lines(data, func(int, int) bool { n++; return true })
			}
		})
	}
}

func matcherCorpus(b *testing.B) []byte {
	files, _ := filepath.Glob(filepath.Join(goroot(b), "src", "runtime", "*.go"))
	var buf []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			buf = append(buf, data...)
		}
	}
	if len(buf) > 0 {
		return buf
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "func (s *server%d) handle(ctx context.Context, req *Request) error {\n", i)
		fmt.Fprintf(&sb, "\ts.mu.Lock() // guards the queue %d\n\tdefer s.mu.Unlock()\n\treturn nil\n}\n\n", i)
		if i%500 == 0 {
			sb.WriteString("func NewServer() *server { return &server{} } // Mutex-free\n")
		}
	}
	return []byte(sb.String())
}

// goroot asks the go command where Go's tree is (runtime.GOROOT is
// deprecated: it names the tree the test binary was built with).
func goroot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	return strings.TrimSpace(string(out))
}
