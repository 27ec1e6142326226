package htmltext

import "strings"

// Foreign content: SVG and MathML.

func mathTextPoint(n *Node) bool {
	switch n.Tag {
	case "mi", "mo", "mn", "ms", "mtext":
		return n.ns == nsMath
	}
	return false
}

func htmlPoint(n *Node) bool {
	switch n.ns {
	case nsSVG:
		return n.Tag == "foreignobject" || n.Tag == "desc" || n.Tag == "title"
	case nsMath:
		if n.Tag == "annotation-xml" {
			enc := strings.ToLower(n.AttrVal("encoding"))
			return enc == "text/html" || enc == "application/xhtml+xml"
		}
	}
	return false
}

// foreign reports whether t follows the rules of foreign content.
func (b *builder) foreign(t token) bool {
	cur := b.top()
	if cur.ns == nsHTML {
		return false
	}
	if mathTextPoint(cur) {
		if t.typ == textToken || t.typ == startTagToken && t.name != "mglyph" && t.name != "malignmark" {
			return false
		}
	}
	if cur.ns == nsMath && cur.Tag == "annotation-xml" && t.typ == startTagToken && t.name == "svg" {
		return false
	}
	if htmlPoint(cur) && (t.typ == startTagToken || t.typ == textToken) {
		return false
	}
	return true
}

// breakout reports the HTML start tags that end SVG or MathML content.
func breakout(tag string) bool {
	switch tag {
	case "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed",
		"h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol",
		"p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var":
		return true
	}
	return false
}

func (b *builder) inForeign(t token) {
	switch t.typ {
	case textToken:
		b.insertText(nulToReplacement(t.data))
	case startTagToken:
		if breakout(t.name) || t.name == "font" && (hasAttr(t.attr, "color") || hasAttr(t.attr, "face") || hasAttr(t.attr, "size")) {
			b.popForeign()
			b.inMode(t)
			return
		}
		if b.insert(t, b.top().ns) != nil && t.selfClosing {
			b.pop()
		}
	case endTagToken:
		if t.name == "br" || t.name == "p" {
			b.popForeign()
			b.inMode(t)
			return
		}
		for i := len(b.oe) - 1; i > 0; i-- {
			b.steps++
			n := b.oe[i]
			if n.ns == nsHTML {
				b.inMode(t)
				return
			}
			if strings.EqualFold(n.Tag, t.name) {
				b.truncate(i)
				return
			}
		}
	}
}

func (b *builder) popForeign() {
	for {
		n := b.top()
		if n.ns == nsHTML || mathTextPoint(n) || htmlPoint(n) {
			return
		}
		b.pop()
	}
}
