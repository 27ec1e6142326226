package htmltext

import (
	"bytes"
	"io"
	"strings"
	"testing"

	xcharset "golang.org/x/net/html/charset"
)

// xnetDecode is how pages were decoded before, with golang.org/x/net's
// charset package (and all of golang.org/x/text's encodings behind it).
func xnetDecode(t *testing.T, body []byte, ctype string) string {
	t.Helper()
	r, err := xcharset.NewReader(bytes.NewReader(body), ctype)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDecodeMatchesXNetCharset: for the charsets we decode, the text is
// the one x/net/html/charset gave.
func TestDecodeMatchesXNetCharset(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	illFormedUTF8 := []byte("a\xc3 b\xe2\x82 c\xe2\x82\xac d\xff\xfe e\xc0\x80 f\xed\xa0\x80 g\xf4\x90\x80\x80 h\xf0\x9f\x98 i\x80\xbf j\xe0\x80\xaf k\xf0\x9f\x98\x80 l\xe2")
	utf16 := func(bigEndian bool, s string) []byte {
		var b []byte
		for _, r := range s {
			hi, lo := byte(r>>8), byte(r)
			if bigEndian {
				b = append(b, hi, lo)
			} else {
				b = append(b, lo, hi)
			}
		}
		return b
	}
	cases := []struct {
		name, ctype string
		body        []byte
		dropsBOM    bool // x/net/html/charset left the byte-order mark in the text; we drop it, as browsers do
	}{
		{"all bytes latin1", "text/html; charset=ISO-8859-1", all, false},
		{"all bytes windows-1252", "text/html; charset=windows-1252", all, false},
		{"all bytes us-ascii", "text/plain; charset=us-ascii", all, false},
		{"all bytes latin1 label with spaces", "text/html; charset=\" Latin1 \"", all, false},
		{"all bytes undeclared", "text/html", all, false},
		{"ill-formed utf-8", "text/html; charset=utf-8", illFormedUTF8, false},
		{"ill-formed utf8 label", "text/html; charset=UTF8", illFormedUTF8, false},
		{"utf-16le bom", "text/html", append([]byte{0xFF, 0xFE}, utf16(false, "<p>café €</p>")...), true},
		{"utf-16be bom", "text/html; charset=iso-8859-1", append([]byte{0xFE, 0xFF}, utf16(true, "<p>café €</p>")...), true},
		{"utf-16le label", "text/html; charset=utf-16le", utf16(false, "<p>café €</p>"), false},
		{"utf-16be label", "text/html; charset=utf-16be", utf16(true, "<p>café €</p>"), false},
		{"utf-16 odd length", "text/html; charset=utf-16be", append(utf16(true, "ab"), 'c'), false},
		{"meta charset", "text/html", []byte("<meta charset=windows-1252><p>\x80 \xe9</p>"), false},
		{"meta charset quoted", "text/html", []byte("<head><meta charset='latin1'></head><p>\xe9</p>"), false},
		{"meta http-equiv", "text/html", []byte(`<meta http-equiv="content-type" content="text/html; charset=iso-8859-1"><p>` + "\xe9</p>"), false},
		{"meta content without pragma", "text/html", []byte(`<meta content="text/html; charset=iso-8859-1"><p>` + "caf\xc3\xa9</p>"), false},
		{"meta in a script is no meta", "text/html", []byte("<script>'<meta charset=latin1>'</script><p>caf\xc3\xa9</p>"), false},
		{"meta utf-16 means utf-8", "text/html", []byte("<meta charset=utf-16le><p>caf\xc3\xa9</p>"), false},
		{"header over meta", "text/html; charset=utf-8", []byte("<meta charset=latin1><p>caf\xc3\xa9</p>"), false},
		{"unknown header label, meta", "text/html; charset=bogus", []byte("<meta charset=latin1><p>\xe9</p>"), false},
		{"undeclared utf-8", "text/html", []byte("<p>caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d</p>"), false},
		{"undeclared latin1", "text/html", []byte("<p>caf\xe9</p>"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := xnetDecode(t, c.body, c.ctype)
			if c.dropsBOM {
				if !strings.HasPrefix(want, "\uFEFF") {
					t.Fatalf("x/net/html/charset dropped the byte-order mark: take dropsBOM off")
				}
				want = strings.TrimPrefix(want, "\uFEFF")
			}
			got, undecoded := Decode(c.body, c.ctype)
			if got != want || undecoded != "" {
				t.Errorf("Decode = %q, %q; x/net/html/charset %q", got, undecoded, want)
			}
		})
	}
}

// TestDecodeNamesWhatItCannotDecode: a page in a charset we do not
// decode (x/net/html/charset did) is read as UTF-8, and the charset is
// named, for the reader to be told.
func TestDecodeNamesWhatItCannotDecode(t *testing.T) {
	sjis := []byte("<p>\x93\xfa\x96\x7b</p>") // 日本 in Shift_JIS
	for _, c := range []struct{ ctype, body, want, undecoded string }{
		{"text/html; charset=Shift_JIS", string(sjis), "<p>\uFFFD\uFFFD\uFFFD{</p>", "shift_jis"},
		{"text/html", "<meta charset=gbk>" + string(sjis), "<meta charset=gbk><p>\uFFFD\uFFFD\uFFFD{</p>", "gbk"},
		// Valid UTF-8 needs no decoding, whatever the label.
		{"text/html; charset=koi8-r", "<p>ok é</p>", "<p>ok é</p>", ""},
	} {
		got, undecoded := Decode([]byte(c.body), c.ctype)
		if got != c.want || undecoded != c.undecoded {
			t.Errorf("%s %q: %q, %q; want %q, %q", c.ctype, c.body, got, undecoded, c.want, c.undecoded)
		}
	}
	if xnet := xnetDecode(t, sjis, "text/html; charset=Shift_JIS"); xnet != "<p>日本</p>" {
		t.Errorf("x/net/html/charset decoded Shift_JIS as %q", xnet)
	}
}
