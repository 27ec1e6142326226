package edit

import (
	"errors"
	"strings"
	"testing"
)

// block builds one SEARCH/REPLACE block.
func block(search, replace string) string {
	var b strings.Builder
	b.WriteString("------- SEARCH\n")
	if search != "" {
		b.WriteString(search + "\n")
	}
	b.WriteString("=======\n")
	if replace != "" {
		b.WriteString(replace + "\n")
	}
	b.WriteString("+++++++ REPLACE\n")
	return b.String()
}

func TestReplaceInFile(t *testing.T) {
	tests := []struct {
		name, text, diff, want string
		notes                  int
		errHas                 []string
	}{
		{name: "blocks out of order", text: "First\nSecond\nThird\nFourth\n",
			diff: block("Third", "3rd") + block("First", "1st"), want: "1st\nSecond\n3rd\nFourth\n"},
		{name: "repeated text: each block takes the next occurrence", text: "x\ny\nx\ny\n",
			diff: block("x", "A") + block("x", "B"), want: "A\ny\nB\ny\n"},
		{name: "an occurrence is used once", text: "x\ny\n",
			diff: block("x", "A") + block("x", "B"), errHas: []string{"block 2", "of 2 blocks, no block was applied"}},
		{name: "CRLF file keeps CRLF", text: "a\r\nb\r\nc\r\n", diff: block("b", "B1\nB2"), want: "a\r\nB1\r\nB2\r\nc\r\n"},
		{name: "CRLF diff on LF file", text: "a\nb\nc\n", diff: "------- SEARCH\r\nb\r\n=======\r\nB\r\n+++++++ REPLACE\r\n", want: "a\nB\nc\n"},
		{name: "BOM does not hide the first line", text: bom + "a\nb\n", diff: block("a", "A"), want: bom + "A\nb\n"},
		{name: "last line without newline stays without", text: "a\nb", diff: block("b", "B"), want: "a\nB"},
		{name: "whole lines only", text: "foo(bar)\n", diff: block("bar", "baz"), errHas: []string{"matches nothing"}},
		{name: "trimmed match is reported", text: "a\n    b  \nc\n", diff: block("b", "B"), want: "a\nB\nc\n", notes: 1},
		{name: "first and last lines alone do not place a block", text: "func f() {\n\treturn 1\n}\n",
			diff: block("func f() {\n\treturn 7\n}", "func f() {\n\treturn 2\n}"), errHas: []string{"matches nothing", "lines 1-3", "> 2 | \treturn 1", `(you sent: "\treturn 7")`}},
		{name: "first and last lines fitting twice", text: "{\n\ta\n}\n{\n\tb\n}\n",
			diff: block("{\n\tc\n}", "x"), errHas: []string{"matches nothing", "lines 1-3"}},
		{name: "anchors need three lines", text: "a\nb\n", diff: block("a\nc", "x"), errHas: []string{"matches nothing"}},
		{name: "empty SEARCH on a non-empty file", text: "keep me\n", diff: block("", "x"), errHas: []string{"SEARCH part is empty"}},
		{name: "empty SEARCH on a blank file", text: "\n\n", diff: block("", "x"), want: "x\n"},
		{name: "angle-bracket markers", text: "a\nb\n", diff: "<<<<<<< SEARCH\na\n=======\nA\n>>>>>>> REPLACE\n", want: "A\nb\n"},
		{name: "code fence around the blocks is ignored", text: "a\n", diff: "```\n" + block("a", "b") + "```\n", want: "b\n"},
		{name: "second block failing changes nothing", text: "a\nb\n", diff: block("a", "A") + block("zzz", "Z"),
			errHas: []string{"block 2", "zzz", "not changed"}},
		{name: "closest match is described", text: "one\ntwo\nthree\n", diff: block("one\ntwo\nfour\nfive", "x"),
			errHas: []string{"lines 1-3, where 2 of your 4 lines agree", "> 3 | three", `(you sent: "four")`}},
		{name: "unterminated block", text: "a\n", diff: "------- SEARCH\na\n=======\nb\n", errHas: []string{"cut off"}},
		{name: "no blocks", text: "a\n", diff: "just some text\n", errHas: []string{"no SEARCH/REPLACE block"}},
		{name: "stray separator", text: "a\n", diff: "=======\n", errHas: []string{"outside a block"}},
		{name: "second separator", text: "a\n", diff: "------- SEARCH\na\n=======\nb\n=======\nc\n+++++++ REPLACE\n", errHas: []string{"second '======='"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ReplaceInFile("f.go", tc.text, tc.diff)
			if tc.errHas != nil {
				if err == nil {
					t.Fatalf("succeeded with %q, want an error", res.Text)
				}
				var de *DiffError
				if !errors.As(err, &de) || de.Path != "f.go" {
					t.Errorf("error is not a *DiffError for f.go: %#v", err)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not contain %q:\n%v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if res.Text != tc.want {
				t.Errorf("\n got %q\nwant %q", res.Text, tc.want)
			}
			if len(res.Notes) != tc.notes {
				t.Errorf("notes %q, want %d", res.Notes, tc.notes)
			}
		})
	}
}

func TestParseBlocksLines(t *testing.T) {
	blocks, err := ParseBlocks("intro\n" + block("a\n\nb", "") + "\n" + block("c", "d"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(blocks))
	}
	if got := strings.Join(blocks[0].Search, "|"); got != "a||b" || len(blocks[0].Replace) != 0 || blocks[0].Line != 2 {
		t.Errorf("block 1 = %+v", blocks[0])
	}
	if blocks[1].Line != 9 || blocks[1].Replace[0] != "d" {
		t.Errorf("block 2 = %+v", blocks[1])
	}
}
