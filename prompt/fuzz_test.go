package prompt

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzXMLToolCalls checks that the parser never panics and that its result
// does not depend on how the stream is cut: the whole text, chunks cut at
// the fuzzer's points, and one byte at a time must give the same calls and
// the same prose.
func FuzzXMLToolCalls(f *testing.F) {
	f.Add("plain text < not a tag >", []byte{3, 7})
	f.Add("<read_file>\n<path>a.go</path>\n</read_file>", []byte{1, 12, 13})
	f.Add("<write_to_file><path>x</path><content>a</content> b</content>\n</write_to_file>", []byte{40, 1, 1})
	f.Add("<search><paths>[]</paths><path>p</pa", []byte{9, 2})
	f.Add("<write><path>p</path></write><write_to_file>", []byte{5, 5, 5})
	f.Fuzz(func(t *testing.T, in string, cuts []byte) {
		whole := parseAll(testTools, []string{in})
		if got := parseAll(testTools, chunksAt(in, cuts)); !reflect.DeepEqual(got, whole) {
			t.Fatalf("chunks %v:\n got %s\nwant %s", cuts, dump(got), dump(whole))
		}
		if got := parseAll(testTools, bytewise(in)); !reflect.DeepEqual(got, whole) {
			t.Fatalf("byte at a time:\n got %s\nwant %s", dump(got), dump(whole))
		}
		var prose strings.Builder
		for i, ev := range whole {
			if ev.Call != nil && ev.Call.Partial && i != len(whole)-1 {
				t.Fatalf("partial call before the end: %s", dump(whole))
			}
			prose.WriteString(ev.Text)
		}
		if !strings.Contains(in, "<") && prose.String() != in {
			t.Fatalf("text without tags changed: %q → %q", in, prose.String())
		}
	})
}

// chunksAt cuts s into chunks whose lengths are taken from cuts in turn
// (a zero gives an empty chunk), the rest of s forming the last chunk.
func chunksAt(s string, cuts []byte) []string {
	var out []string
	for _, c := range cuts {
		n := min(int(c)%17, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
