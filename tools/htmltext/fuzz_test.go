package htmltext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHTMLText parses arbitrary pages: the tree is always well linked,
// within its caps, and the builder's work within what the caps allow,
// linear in the page. The caps are lowered for pages of a few kilobytes
// to reach them; a page is parsed with the real ones too.
func FuzzHTMLText(f *testing.F) {
	for _, seed := range []string{
		"", "<", "</", "<!", "<!--", "<?", "&", "&#", "&#x", "<p>a<p>b", "<b><i></b></i>", "<table>x<tr><td>y<td>z</table>",
		"<a href=x><div>y</a>z", "<script><!--<script></script>--></script>x", "<svg><p>x</svg><math><mi><b>y",
		"<select><option>a<table><tr><td>b</select>", "<template><td>x</template>", "<frameset><noframes>x",
		"<pre>\nx</pre><textarea>\ny</textarea>", "<ul><li>a<li>b<dl><dt>c<dd>d", "<body a=1><body b=2>",
		"<p><b><i><u><s><p>x</b>y", "<html><head><title>t</title></head><body>x</body></html>after",
		"<!DOCTYPE html><form><div></form>x", "<a href='&copy=1&amp;x'>l</a>", "<![CDATA[x]]><svg><![CDATA[y]]></svg>",
		"\x00<p\x00 a\x00=\x00>\x00", "<p>caf\xe9 \xff</p>", "<meta charset=shift_jis><p>x", "\xef\xbb\xbf<p>x", "\xff\xfe<\x00p\x00>\x00",
		strings.Repeat("<div>", 40) + "x", strings.Repeat("<b>", 80) + "<p>x<p>y",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, page string) {
		check(t, Parse(page))

		const depthCap, nodesCap = 16, 400
		b := newBuilder(page)
		b.maxDepth, b.maxNodes = depthCap, nodesCap
		b.run()
		depth, nodes := check(t, b.doc)
		// Text nodes and the reopened formatting elements that adoption
		// moves under a block can go past the depth of open elements.
		if depth > 2*depthCap+maxFormatting {
			t.Errorf("depth %d", depth)
		}
		if nodes > 2*nodesCap+4 {
			t.Errorf("%d nodes", nodes)
		}
		if limit := 32 * (len(page) + 1) * (depthCap + maxFormatting); b.steps > limit {
			t.Errorf("%d steps for %d bytes", b.steps, len(page))
		}

		for _, ctype := range []string{"text/html", "text/html; charset=utf-8", "text/html; charset=utf-16be", "text/html; charset=gbk", "text/html; charset=shift_jis", "text/html; charset=iso-2022-jp"} {
			if text := Decode([]byte(page), ctype); !utf8.ValidString(text) {
				t.Errorf("%s: invalid UTF-8 %q", ctype, text)
			}
		}
	})
}
