package tools_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/workspace"
)

// deepTree makes depth nested folders d/d/d/... under a new workspace,
// a small file in each, and returns the workspace. The folders are made
// relative to each level (os.MkdirAll of the whole path would pass
// PATH_MAX long before 5,000 levels).
func deepTree(tb testing.TB, depth int) *toolstest.Files {
	tb.Helper()
	root := tb.TempDir()
	dir, err := os.OpenRoot(root)
	if err != nil {
		tb.Fatal(err)
	}
	for range depth {
		if err := dir.Mkdir("d", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := dir.WriteFile("f.go", []byte("package d\n\nfunc F() {}\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
		next, err := dir.OpenRoot("d")
		dir.Close()
		if err != nil {
			tb.Fatal(err)
		}
		dir = next
	}
	dir.Close()
	f, err := toolstest.New(root)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func benchDeep(b *testing.B, tool, args string) {
	for _, depth := range []int{250, 500, 1000, 2000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			files := deepTree(b, depth)
			inv, err := wsBuild(b, files, tool, args)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := inv.Execute(b.Context(), tools.ExecOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeepListFiles lists a tree of nested folders recursively.
func BenchmarkDeepListFiles(b *testing.B) {
	benchDeep(b, tools.NameListFiles, `{"path":".","recursive":true}`)
}

// BenchmarkDeepSearch searches a tree of nested folders.
func BenchmarkDeepSearch(b *testing.B) {
	benchDeep(b, tools.NameSearchCodebase, `{"queries":["func F"]}`)
}

// TestDeepTreeWalksStop: at 5,000 nested folders list_files and
// search_codebase answer, each saying where it stopped, and what they
// show lies within workspace.MaxWalkDepth.
func TestDeepTreeWalksStop(t *testing.T) {
	files := deepTree(t, 5000)
	res := wsRun(t, files, tools.NameListFiles, `{"path":".","recursive":true}`)
	wsWant(t, res.Content, fmt.Sprintf("[The listing stopped at %d folder levels below the workspace folder: 1 folder at that depth is not entered.", workspace.MaxWalkDepth))
	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["func F"]}`)
	wsWant(t, res.Content, fmt.Sprintf("`func F`: %d matches", workspace.MaxWalkDepth),
		fmt.Sprintf("skipped 1 folder at %d levels deep, not entered (the search stops at that depth)", workspace.MaxWalkDepth))
	// Below the limit nothing is said.
	shallow := deepTree(t, 20)
	res = wsRun(t, shallow, tools.NameListFiles, `{"path":".","recursive":true}`)
	wsWantNot(t, res.Content, "stopped")
	res = wsRun(t, shallow, tools.NameSearchCodebase, `{"queries":["func F"]}`)
	wsWantNot(t, res.Content, "not entered")
}

// TestTempFilesNeverShown: the temporary file of an interrupted write is
// neither listed nor searched, also in a folder listed with the ignore
// rules off.
func TestTempFilesNeverShown(t *testing.T) {
	files := wsTree(t, map[string]string{
		".gitignore":                           "build/\n",
		"a.go":                                 "func F() {}\n",
		".a.go.cline-ls-4242-1x2y.tmp":         "func F() {}\n",
		"build/.out.go.cline-ls-4242-1x2y.tmp": "func F() {}\n",
		"build/out.go":                         "func F() {}\n",
		"docs/.cline-ls-notes.txt":             "not ours: no .tmp pattern\n",
	})
	res := wsRun(t, files, tools.NameListFiles, `{"path":".","recursive":true}`)
	wsWantNot(t, res.Content, "cline-ls-4242")
	wsWant(t, res.Content, "docs/.cline-ls-notes.txt")
	res = wsRun(t, files, tools.NameListFiles, `{"path":"build"}`)
	wsWant(t, res.Content, "build/out.go")
	wsWantNot(t, res.Content, "cline-ls-4242")
	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["func F"]}`)
	wsWantNot(t, res.Content, "cline-ls-4242")
	res = wsRun(t, files, tools.NameSearchCodebase, `{"queries":["func F"],"path":"build"}`)
	wsWant(t, res.Content, "build/out.go")
	wsWantNot(t, res.Content, "cline-ls-4242")
}
