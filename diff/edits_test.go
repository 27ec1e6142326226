package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/workspace"
)

var encodings = []workspace.Encoding{workspace.UTF8, workspace.UTF16, workspace.UTF32}

func pos(line, char uint32) workspace.Position {
	return workspace.Position{Line: line, Character: char}
}

func rng(l1, c1, l2, c2 uint32) workspace.Range {
	return workspace.Range{Start: pos(l1, c1), End: pos(l2, c2)}
}

func TestTextEditsExact(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		enc      workspace.Encoding
		want     []Edit
	}{
		{name: "no change", old: "abc\n", new: "abc\n", enc: workspace.UTF16},
		{
			name: "word in a line", old: "hello world\n", new: "hello there\n", enc: workspace.UTF16,
			want: []Edit{{rng(0, 6, 0, 11), "there"}},
		},
		{
			name: "after a surrogate pair counts two UTF-16 units",
			old:  "😀 x = 1\n", new: "😀 x = 2\n", enc: workspace.UTF16,
			want: []Edit{{rng(0, 7, 0, 8), "2"}},
		},
		{
			name: "after a surrogate pair counts one UTF-32 unit",
			old:  "😀 x = 1\n", new: "😀 x = 2\n", enc: workspace.UTF32,
			want: []Edit{{rng(0, 6, 0, 7), "2"}},
		},
		{
			name: "UTF-8 counts bytes",
			old:  "é=1", new: "é=2", enc: workspace.UTF8,
			want: []Edit{{rng(0, 3, 0, 4), "2"}},
		},
		{
			name: "never splits a code point with a shared lead byte",
			// "é" is C3 A9 and "ê" is C3 AA: the bytes agree on C3.
			old: "xé", new: "xê", enc: workspace.UTF16,
			want: []Edit{{rng(0, 1, 0, 2), "ê"}},
		},
		{
			name: "never splits CRLF",
			old:  "a\r\nb", new: "a\rb", enc: workspace.UTF16,
			want: []Edit{{rng(0, 1, 1, 0), "\r"}},
		},
		{
			name: "inserting LF after CR replaces the CR",
			old:  "a\rb", new: "a\r\nb", enc: workspace.UTF16,
			want: []Edit{{rng(0, 1, 1, 0), "\r\n"}},
		},
		{
			name: "two separate changes give two edits",
			old:  "one\ntwo\nthree\nfour\nfive\n", new: "one\ntwo!\nthree\nfour\nFIVE\n", enc: workspace.UTF16,
			want: []Edit{{rng(1, 3, 1, 3), "!"}, {rng(4, 0, 4, 4), "FIVE"}},
		},
		{
			name: "insert whole lines",
			old:  "a\nc\n", new: "a\nb\nc\n", enc: workspace.UTF16,
			want: []Edit{{rng(1, 0, 1, 0), "b\n"}},
		},
		{
			name: "delete everything", old: "a\nb", new: "", enc: workspace.UTF16,
			want: []Edit{{rng(0, 0, 1, 1), ""}},
		},
		{
			name: "fill empty", old: "", new: "x\n", enc: workspace.UTF16,
			want: []Edit{{rng(0, 0, 0, 0), "x\n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TextEdits(tt.old, tt.new, tt.enc)
			if len(got) != len(tt.want) {
				t.Fatalf("TextEdits = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("edit %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			checkRoundTrip(t, tt.old, tt.new, tt.enc)
		})
	}
}

// checkRoundTrip asserts the properties TextEdits promises for one pair.
func checkRoundTrip(t *testing.T, old, new string, enc workspace.Encoding) []Edit {
	t.Helper()
	edits := TextEdits(old, new, enc)
	got, err := ApplyEdits(old, edits, enc)
	if err != nil {
		t.Fatalf("ApplyEdits(%q, %+v, %s): %v", old, edits, enc, err)
	}
	if got != new {
		t.Fatalf("%s: TextEdits(%q, %q) = %+v applies to %q", enc, old, new, edits, got)
	}
	if old == new && len(edits) != 0 {
		t.Fatalf("edits %+v for equal texts", edits)
	}
	for i := 1; i < len(edits); i++ {
		if !before(edits[i-1].Range.End, edits[i].Range.Start) {
			t.Fatalf("edits out of order or touching: %+v", edits)
		}
	}
	// The byte-level spans must splice to new without going through the
	// position mapper, so a mapper fault cannot hide a diff fault.
	var b strings.Builder
	last := 0
	for _, s := range byteEdits(old, new) {
		if s.start < last || s.end < s.start {
			t.Fatalf("bad spans %+v", byteEdits(old, new))
		}
		for _, cut := range []int{s.start, s.end} {
			if !safeCut(old, cut) && !(cut > 0 && old[cut-1] == '\n') {
				t.Fatalf("span %+v cuts %q at %d", s, old, cut)
			}
		}
		b.WriteString(old[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(old[last:])
	if b.String() != new {
		t.Fatalf("byte spans of (%q, %q) give %q", old, new, b.String())
	}
	return edits
}

// before reports whether a comes strictly before b.
func before(a, b workspace.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

// randomText draws from pieces that stress the encodings and line endings.
func randomText(r *rand.Rand, pieces []string, n int) string {
	var b strings.Builder
	for range r.IntN(n) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

var textPieces = []string{
	"a", "b", "x", " ", "\n", "\r\n", "\r", "é", "ê", "€", "😀", "😁", "𝄞",
	"\xff", "\x80", "\xe2\x82", "\xed\xa0\x80", "\xc3", "line\n", "same\r\n",
}

func TestTextEditsRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 4000 {
		old := randomText(r, textPieces, 30)
		var new string
		switch r.IntN(3) {
		case 0: // unrelated
			new = randomText(r, textPieces, 30)
		default: // a few local mutations, the common case for an editor
			new = old
			for range 1 + r.IntN(3) {
				i, j := r.IntN(len(new)+1), r.IntN(len(new)+1)
				if i > j {
					i, j = j, i
				}
				new = new[:i] + randomText(r, textPieces, 4) + new[j:]
			}
		}
		for _, enc := range encodings {
			checkRoundTrip(t, old, new, enc)
		}
	}
}

func TestTextEditsStaysLocal(t *testing.T) {
	var old strings.Builder
	for i := range 2000 {
		old.WriteString(strings.Repeat("word ", i%9))
		old.WriteString("😀\r\n")
	}
	o := old.String()
	n := strings.Replace(o, "word word word 😀\r\n", "word word WORD 😀\r\n", 1)
	n = n[:len(n)-20] + "tail\r\n" + n[len(n)-20:]
	edits := checkRoundTrip(t, o, n, workspace.UTF16)
	if len(edits) != 2 {
		t.Fatalf("want 2 edits, got %+v", edits)
	}
	for _, e := range edits {
		if len(e.NewText) > 10 {
			t.Errorf("edit %+v is wider than the change", e)
		}
	}
}

func TestApplyEdits(t *testing.T) {
	const text = "a😀b\r\ncd\n"
	tests := []struct {
		name  string
		edits []Edit
		enc   workspace.Encoding
		want  string
		err   bool
	}{
		{name: "none", want: text, enc: workspace.UTF16},
		{
			name:  "any order, ranges refer to the original",
			edits: []Edit{{rng(1, 1, 1, 2), "D"}, {rng(0, 0, 0, 1), "A"}},
			enc:   workspace.UTF16, want: "A😀b\r\ncD\n",
		},
		{
			name:  "UTF-16 units around a surrogate pair",
			edits: []Edit{{rng(0, 1, 0, 3), "E"}},
			enc:   workspace.UTF16, want: "aEb\r\ncd\n",
		},
		{
			name:  "UTF-32 units",
			edits: []Edit{{rng(0, 1, 0, 2), "E"}},
			enc:   workspace.UTF32, want: "aEb\r\ncd\n",
		},
		{
			name:  "UTF-8 units",
			edits: []Edit{{rng(0, 1, 0, 5), "E"}},
			enc:   workspace.UTF8, want: "aEb\r\ncd\n",
		},
		{
			name:  "inserts at one place keep their order",
			edits: []Edit{{rng(1, 0, 1, 0), "1"}, {rng(1, 0, 1, 0), "2"}},
			enc:   workspace.UTF16, want: "a😀b\r\n12cd\n",
		},
		{
			name:  "character past the line end clamps before the terminator",
			edits: []Edit{{rng(0, 99, 0, 99), "!"}},
			enc:   workspace.UTF16, want: "a😀b!\r\ncd\n",
		},
		{
			name:  "overlap",
			edits: []Edit{{rng(0, 0, 0, 3), "x"}, {rng(0, 2, 1, 0), "y"}},
			enc:   workspace.UTF16, err: true,
		},
		{
			name:  "end before start",
			edits: []Edit{{rng(1, 1, 0, 0), "x"}},
			enc:   workspace.UTF16, err: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyEdits(text, tt.edits, tt.enc)
			if tt.err {
				if err == nil {
					t.Fatalf("ApplyEdits = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ApplyEdits = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzTextEditRoundTrip(f *testing.F) {
	f.Add("hello world\n", "hello there\n", uint8(1))
	f.Add("a\r\nb\r\n", "a\rb\n", uint8(0))
	f.Add("😀x😁", "😀y😁", uint8(1))
	f.Add("\xff\x80\xe2\x82A", "\xff\x80\xe2\x82\xac", uint8(2))
	f.Fuzz(func(t *testing.T, old, new string, e uint8) {
		enc := encodings[int(e)%len(encodings)]
		edits := checkRoundTrip(t, old, new, enc)
		if utf8.ValidString(old) && utf8.ValidString(new) {
			for _, ed := range edits {
				if !utf8.ValidString(ed.NewText) {
					t.Fatalf("edit text %q splits a code point", ed.NewText)
				}
			}
		}
	})
}
