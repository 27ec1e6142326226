package htmltext

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xcharset "golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/htmlindex"

	"github.com/cline-ls/cline-ls/internal/shared"
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
			if got := Decode(c.body, c.ctype); got != want {
				t.Errorf("Decode = %q; x/net/html/charset %q", got, want)
			}
		})
	}
}

// TestDecodeEveryWHATWGEncoding: a page in any of the Encoding
// Standard's encodings decodes, whether the header or a <meta> names it.
// Before, all but UTF-8, UTF-16 and windows-1252 came out as U+FFFD.
func TestDecodeEveryWHATWGEncoding(t *testing.T) {
	text := map[string]string{
		"shift_jis": "日本語のページ", "euc-jp": "日本語のページ", "iso-2022-jp": "日本語のページ",
		"gbk": "中文网页", "gb18030": "中文网页", "big5": "中文網頁", "euc-kr": "한국어 페이지",
		"koi8-r": "Русская страница", "windows-1251": "Русская страница", "koi8-u": "Українська сторінка",
		"iso-8859-2": "Zażółć gęślą jaźń", "windows-1250": "Zażółć gęślą jaźń", "iso-8859-7": "Ελληνική σελίδα",
		"windows-1253": "Ελληνική σελίδα", "iso-8859-8": "עמוד בעברית", "windows-1255": "עמוד בעברית",
		"windows-1256": "صفحة عربية", "windows-874": "หน้าภาษาไทย", "windows-1258": "Đà và đi",
		"iso-8859-15": "café €", "macintosh": "café", "ibm866": "Русская страница", "windows-1254": "Türkçe sayfa",
	}
	for label, want := range text {
		enc, err := htmlindex.Get(label)
		if err != nil {
			t.Fatal(err)
		}
		body, err := enc.NewEncoder().String("<p>" + want + "</p>")
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if got := Decode([]byte(body), "text/html; charset="+strings.ToUpper(label)); got != "<p>"+want+"</p>" {
			t.Errorf("%s from the header: %q, want %q", label, got, want)
		}
		meta := "<meta charset=\"" + label + "\">"
		if got := Decode([]byte(meta+body), "text/html"); got != meta+"<p>"+want+"</p>" && label != "iso-2022-jp" {
			t.Errorf("%s from a meta: %q, want %q", label, got, want)
		}
	}
	// A label the standard maps to the replacement encoding (a charset
	// used for attacks) gives one U+FFFD, never its bytes.
	if got := Decode([]byte("<p>a</p>"), "text/html; charset=iso-2022-kr"); got != "\uFFFD" {
		t.Errorf("replacement encoding: %q", got)
	}
}

// TestPrescanIsTheStandards: the prescan reads bytes, not a tree, so a
// <meta> inside a script still counts (x/net/html/charset's tokenizer
// skips it: the one case where it and the standard part).
func TestPrescanIsTheStandards(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"<script>'<meta charset=latin1>'</script><p>caf\xc3\xa9</p>", "windows-1252"},
		{"<!-- <meta charset=koi8-r> --><meta charset=gbk>", "gbk"},
		{"<!--><meta charset=koi8-r>", "koi8-r"},
		{"<meta charset=utf-16le><p>caf\xc3\xa9</p>", "utf-8"},
		{"<meta charset=x-user-defined>", "windows-1252"},
		{"<meta http-equiv=content-type content='text/html;charset=euc-kr'>", "euc-kr"},
		{"<meta content='text/html;charset=euc-kr'>", "windows-1252"},
		{"<meta charset=euc-kr charset=gbk>", "euc-kr"},
		{"<div title='<meta charset=gbk>'><meta charset=koi8-r>", "koi8-r"},
		// Past the first 1024 bytes, the parser's change of encoding.
		{strings.Repeat(" ", 1020) + "<meta charset=gbk>", "gbk"},
	} {
		if _, name, _ := Sniff([]byte(c.body), "text/html"); name != c.want {
			t.Errorf("%.60q: %s, want %s", c.body, name, c.want)
		}
	}
}

// TestHTML5LibEncodingSniffing runs html5lib's encoding tests (the
// documents and the encoding a browser settles on, with no header) as a
// table test of Sniff. x/net/html/charset's figure on the same cases is
// logged beside ours.
func TestHTML5LibEncodingSniffing(t *testing.T) {
	dir := filepath.Join(shared.Conformance(t), "html5lib-tests", "encoding")
	files, _ := filepath.Glob(filepath.Join(dir, "*.dat"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.dat"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no encoding tests")
	}
	var total, ours, xnet int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scripted := strings.Contains(filepath.ToSlash(f), "/scripted/")
		for i, c := range encodingCases(b) {
			if scripted {
				continue // the encoding is set by script: no prescan can see it
			}
			total++
			want, err := htmlindex.Get(c.encoding)
			if err != nil {
				t.Fatalf("%s #%d: %q is no encoding", f, i, c.encoding)
			}
			wantName, _ := htmlindex.Name(want)
			_, name, _ := Sniff(c.data, "text/html")
			if name == wantName {
				ours++
			} else {
				t.Errorf("%s #%d: %s, want %s\n%.200s", filepath.Base(f), i, name, wantName, c.data)
			}
			if _, xname, _ := xcharset.DetermineEncoding(c.data, "text/html"); xname == wantName {
				xnet++
			}
		}
	}
	t.Logf("html5lib encoding sniffing: %d of %d (x/net/html/charset: %d)", ours, total, xnet)
}

type encodingCase struct {
	data     []byte
	encoding string
}

// encodingCases reads html5lib's encoding .dat format: "#data", the
// document, "#encoding", the name.
func encodingCases(b []byte) []encodingCase {
	var out []encodingCase
	for _, block := range bytes.Split(b, []byte("#data\n"))[1:] {
		data, enc, ok := bytes.Cut(block, []byte("\n#encoding\n"))
		if !ok {
			continue
		}
		name, _, _ := bytes.Cut(enc, []byte("\n"))
		out = append(out, encodingCase{data: data, encoding: string(bytes.TrimSpace(name))})
	}
	return out
}
