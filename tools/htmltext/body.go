package htmltext

import "strings"

// The rules for the body, where most of a page is read: the elements a
// start tag implies or closes, and what an end tag closes.

func (b *builder) inBody(t token) {
	switch t.typ {
	case textToken:
		s := t.data
		if strings.IndexByte(s, 0) >= 0 {
			s = strings.ReplaceAll(s, "\x00", "")
		}
		if s == "" {
			return
		}
		b.reconstruct()
		if cur := b.top(); cur.FirstChild == nil && cur.ns == nsHTML && (cur.Tag == "pre" || cur.Tag == "listing" || cur.Tag == "textarea") {
			s = strings.TrimPrefix(s, "\n")
		}
		b.insertText(s)
	case startTagToken:
		b.startInBody(t)
	case endTagToken:
		b.endInBody(t)
	}
}

func (b *builder) startInBody(t token) {
	switch t.name {
	case "html", "head", "frameset", "caption", "col", "colgroup", "frame", "tbody", "td", "tfoot", "th", "thead", "tr":
	case "body":
		if b.body != nil {
			for _, a := range t.attr {
				b.steps += len(b.body.Attr)
				if len(b.body.Attr) < maxAttrs && !hasAttr(b.body.Attr, a.Key) {
					b.body.Attr = append(b.body.Attr, a)
				}
			}
		}
	case "base", "basefont", "bgsound", "link", "meta":
		b.insertVoid(t)
	case "title", "textarea":
		b.rawText(t, true)
	case "script", "style", "noframes", "noscript", "iframe", "noembed":
		b.rawText(t, false)
	case "xmp":
		b.closeP()
		b.reconstruct()
		b.rawText(t, false)
	case "template":
		if b.insert(t, nsHTML) != nil {
			b.afe = append(b.afe, nil)
		}
	case "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
		"fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p",
		"search", "section", "summary", "ul":
		b.closeP()
		b.insert(t, nsHTML)
	case "h1", "h2", "h3", "h4", "h5", "h6":
		b.closeP()
		if cur := b.top(); cur.ns == nsHTML && isHeading(cur.Tag) {
			b.pop()
		}
		b.insert(t, nsHTML)
	case "pre", "listing":
		b.closeP()
		b.insert(t, nsHTML)
	case "form":
		if b.form != nil && b.templates == 0 {
			return
		}
		b.closeP()
		if n := b.insert(t, nsHTML); n != nil && b.templates == 0 {
			b.form = n
		}
	case "li", "dd", "dt":
		for i := len(b.oe) - 1; i > 0; i-- {
			b.steps++
			n := b.oe[i]
			if n.ns == nsHTML && (n.Tag == t.name || t.name != "li" && (n.Tag == "dd" || n.Tag == "dt")) {
				b.impliedEnd(n.Tag)
				b.truncate(i)
				break
			}
			if isSpecial(n) && !(n.ns == nsHTML && (n.Tag == "address" || n.Tag == "div" || n.Tag == "p")) {
				break
			}
		}
		b.closeP()
		b.insert(t, nsHTML)
	case "plaintext":
		b.closeP()
		b.insert(t, nsHTML)
		b.z.plaintext = true
	case "button":
		if b.inScope(defaultScope, "button") {
			b.impliedEnd("")
			b.popTag("button")
		}
		b.reconstruct()
		b.insert(t, nsHTML)
	case "a":
		if i := b.lastFormatting("a"); i >= 0 {
			a := b.afe[i]
			b.adopt("a")
			b.removeFormatting(a)
			b.removeFromStack(a)
		}
		b.reconstruct()
		if n := b.insert(t, nsHTML); n != nil {
			b.pushFormatting(n)
		}
	case "b", "big", "code", "em", "font", "i", "s", "small", "strike", "strong", "tt", "u":
		b.reconstruct()
		if n := b.insert(t, nsHTML); n != nil {
			b.pushFormatting(n)
		}
	case "nobr":
		b.reconstruct()
		if b.inScope(defaultScope, "nobr") {
			b.adopt("nobr")
			b.reconstruct()
		}
		if n := b.insert(t, nsHTML); n != nil {
			b.pushFormatting(n)
		}
	case "applet", "marquee", "object":
		b.reconstruct()
		if b.insert(t, nsHTML) != nil {
			b.afe = append(b.afe, nil)
		}
	case "table":
		if !b.quirks {
			b.closeP()
		}
		b.insert(t, nsHTML)
	case "area", "br", "embed", "img", "keygen", "wbr", "input":
		b.reconstruct()
		b.insertVoid(t)
	case "image":
		t.name = "img"
		b.reconstruct()
		b.insertVoid(t)
	case "param", "source", "track":
		b.insertVoid(t)
	case "hr":
		b.closeP()
		b.insertVoid(t)
	case "select":
		b.reconstruct()
		b.insert(t, nsHTML)
	case "optgroup", "option":
		if cur := b.top(); cur.ns == nsHTML && cur.Tag == "option" {
			b.pop()
		}
		b.reconstruct()
		b.insert(t, nsHTML)
	case "rb", "rtc":
		if b.inScope(defaultScope, "ruby") {
			b.impliedEnd("")
		}
		b.insert(t, nsHTML)
	case "rp", "rt":
		if b.inScope(defaultScope, "ruby") {
			b.impliedEnd("rtc")
		}
		b.insert(t, nsHTML)
	case "math", "svg":
		b.reconstruct()
		ns := nsMath
		if t.name == "svg" {
			ns = nsSVG
		}
		if b.insert(t, ns) != nil && t.selfClosing {
			b.pop()
		}
	default:
		b.reconstruct()
		b.insert(t, nsHTML)
	}
}

func isHeading(tag string) bool {
	return len(tag) == 2 && tag[0] == 'h' && '1' <= tag[1] && tag[1] <= '6'
}

func (b *builder) endInBody(t token) {
	switch t.name {
	case "body", "html":
	case "template":
		if b.templates > 0 {
			b.impliedEnd("")
			b.popTag("template")
			b.clearFormattingToMarker()
		}
	case "address", "article", "aside", "blockquote", "button", "center", "details", "dialog", "dir", "div",
		"dl", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "listing", "main", "menu", "nav",
		"ol", "pre", "search", "section", "summary", "ul":
		if b.inScope(defaultScope, t.name) {
			b.impliedEnd("")
			b.popTag(t.name)
		}
	case "form":
		if b.templates > 0 {
			if b.inScope(defaultScope, "form") {
				b.impliedEnd("")
				b.popTag("form")
			}
			return
		}
		n := b.form
		b.form = nil
		if n == nil || !n.open || !b.inScope(defaultScope, "form") {
			return
		}
		b.impliedEnd("")
		b.removeFromStack(n)
	case "p":
		if !b.inScope(buttonScope, "p") {
			b.insert(token{name: "p"}, nsHTML)
		}
		b.closeP()
	case "li":
		if b.inScope(listItemScope, "li") {
			b.impliedEnd("li")
			b.popTag("li")
		}
	case "dd", "dt":
		if b.inScope(defaultScope, t.name) {
			b.impliedEnd(t.name)
			b.popTag(t.name)
		}
	case "h1", "h2", "h3", "h4", "h5", "h6":
		if b.inScope(defaultScope, "h1", "h2", "h3", "h4", "h5", "h6") {
			b.impliedEnd("")
			b.popTag("h1", "h2", "h3", "h4", "h5", "h6")
		}
	case "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u":
		b.adopt(t.name)
	case "applet", "marquee", "object":
		if b.inScope(defaultScope, t.name) {
			b.impliedEnd("")
			b.popTag(t.name)
			b.clearFormattingToMarker()
		}
	case "br":
		b.reconstruct()
		b.insertVoid(token{name: "br"})
	default:
		b.anyOtherEnd(t.name)
	}
}
