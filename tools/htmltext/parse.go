package htmltext

import (
	"slices"
	"strings"
)

// The caps that keep a hostile page's tree small: elements past MaxDepth
// open ones, or past MaxNodes in all, are left out (their text is kept).
const (
	MaxDepth = 512
	MaxNodes = 1 << 20
	// maxFormatting bounds the list of open inline formatting elements
	// that a new block reopens; the standard lets it grow with the page,
	// which makes reopening them quadratic.
	maxFormatting = 64
)

// Parse reads a page into a tree: a DocumentNode holding <html>, which
// holds <head> and <body>, both always there (a page of frames has a
// <frameset> instead of the body).
func Parse(src string) *Node {
	b := newBuilder(src)
	b.run()
	return b.doc
}

func newBuilder(src string) *builder {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	b := &builder{z: tokenizer{s: src}, quirks: true, maxDepth: MaxDepth, maxNodes: MaxNodes}
	b.doc = &Node{Type: DocumentNode}
	b.html = b.newElement("html", nil, nsHTML)
	b.doc.appendChild(b.html)
	b.push(b.html)
	b.head = b.newElement("head", nil, nsHTML)
	b.html.appendChild(b.head)
	b.push(b.head)
	return b
}

func (b *builder) run() {
	for {
		b.z.cdata = b.top().ns != nsHTML
		t := b.z.next()
		if t.typ == eofToken {
			break
		}
		if b.dropText {
			b.dropText = false
			if t.typ == textToken {
				continue
			}
		}
		b.process(t)
	}
	if b.body == nil && !b.frameset {
		b.startBody(nil)
	}
	for _, n := range b.pending {
		n.Data += strings.Join(n.more, "")
		n.more = nil
	}
}

type builder struct {
	z                     tokenizer
	doc, html, head, body *Node
	form                  *Node   // the open <form>: forms do not nest
	oe                    []*Node // the stack of open elements
	afe                   []*Node // open formatting elements to reopen; nil marks a boundary
	nodes                 int
	maxDepth, maxNodes    int  // the caps: MaxDepth and MaxNodes but in tests
	tableish              int  // open table, select and template elements: the modes beyond "in body"
	templates             int  // open templates
	foster                bool // insert before the table, not in it
	quirks                bool // no doctype, or an old one: a <table> does not end the open <p>
	sawDoctype            bool
	dropText              bool    // the raw text of an element left out
	frameset              bool    // a page of frames, with no body
	steps                 int     // elements visited in scans of the stack and lists, to check the work is linear
	pending               []*Node // text nodes with more text to join
}

type mode uint8

const (
	inBody mode = iota
	inTable
	inTableBody
	inRow
	inCell
	inCaption
	inColumnGroup
	inSelect
	inSelectInTable
)

func (b *builder) top() *Node { return b.oe[len(b.oe)-1] }

func (b *builder) newElement(tag string, attr []Attr, ns namespace) *Node {
	b.nodes++
	return &Node{Type: ElementNode, Tag: tag, Attr: attr, ns: ns}
}

func isTableish(n *Node) bool {
	return n.ns == nsHTML && (n.Tag == "table" || n.Tag == "select" || n.Tag == "template")
}

func (b *builder) push(n *Node) {
	n.open = true
	b.oe = append(b.oe, n)
	if isTableish(n) {
		b.tableish++
		if n.Tag == "template" {
			b.templates++
		}
	}
}

func (b *builder) closed(n *Node) {
	n.open = false
	if isTableish(n) {
		b.tableish--
		if n.Tag == "template" {
			b.templates--
		}
	}
}

// truncate pops the stack down to its first i elements; <html> stays.
func (b *builder) truncate(i int) {
	i = max(i, 1)
	for _, n := range b.oe[i:] {
		b.closed(n)
	}
	clear(b.oe[i:])
	b.oe = b.oe[:i]
}

func (b *builder) pop() { b.truncate(len(b.oe) - 1) }

func (b *builder) indexOf(n *Node) int {
	for i := len(b.oe) - 1; i >= 0; i-- {
		b.steps++
		if b.oe[i] == n {
			return i
		}
	}
	return -1
}

func (b *builder) removeFromStack(n *Node) {
	if i := b.indexOf(n); i > 0 {
		b.steps += len(b.oe) - i
		b.closed(n)
		b.oe = slices.Delete(b.oe, i, i+1)
	}
}

// popTag pops elements up to and including the last open HTML element
// named tag, which the caller knows is open.
func (b *builder) popTag(tags ...string) {
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		if n := b.oe[i]; n.ns == nsHTML && slices.Contains(tags, n.Tag) {
			b.truncate(i)
			return
		}
	}
}

// canInsert enforces the caps.
func (b *builder) canInsert() bool {
	return len(b.oe) < b.maxDepth && b.nodes < b.maxNodes
}

// place is where a new node goes: the current node, or before the table
// when content that tables cannot hold is being moved out of one.
func (b *builder) place() (parent, before *Node) {
	cur := b.top()
	if !b.foster || cur.ns != nsHTML {
		return cur, nil
	}
	switch cur.Tag {
	case "table", "tbody", "tfoot", "thead", "tr":
	default:
		return cur, nil
	}
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		if t := b.oe[i]; t.ns == nsHTML && t.Tag == "table" {
			if t.Parent != nil {
				return t.Parent, t
			}
			return b.oe[i-1], nil
		}
	}
	return b.oe[0], nil
}

func (b *builder) insertNode(n *Node) {
	parent, before := b.place()
	if before != nil {
		parent.insertBefore(n, before)
	} else {
		parent.appendChild(n)
	}
}

func (b *builder) insertText(s string) {
	if s == "" {
		return
	}
	parent, before := b.place()
	prev := parent.LastChild
	if before != nil {
		prev = before.PrevSibling
	}
	if prev != nil && prev.Type == TextNode {
		// Joined at the end: appending here would copy the text once
		// for every piece ("a<!---->a<!---->a...").
		if prev.more == nil {
			b.pending = append(b.pending, prev)
		}
		prev.more = append(prev.more, s)
		return
	}
	if b.nodes >= b.maxNodes {
		return
	}
	b.nodes++
	n := &Node{Type: TextNode, Data: s}
	if before != nil {
		parent.insertBefore(n, before)
	} else {
		parent.appendChild(n)
	}
}

// insert adds an element at the current place and opens it; nil when a
// cap leaves it out.
func (b *builder) insert(t token, ns namespace) *Node {
	if !b.canInsert() {
		return nil
	}
	n := b.newElement(t.name, t.attr, ns)
	b.insertNode(n)
	b.push(n)
	return n
}

func (b *builder) insertVoid(t token) {
	if b.insert(t, nsHTML) != nil {
		b.pop()
	}
}

// rawText opens an element whose content is text up to its end tag.
func (b *builder) rawText(t token, rcdata bool) {
	if b.insert(t, nsHTML) == nil {
		b.dropText = true
	}
	b.z.rawTag, b.z.rcdata = t.name, rcdata
}

func (b *builder) startBody(attr []Attr) {
	b.truncate(1)
	b.body = b.newElement("body", attr, nsHTML)
	b.html.appendChild(b.body)
	b.push(b.body)
}

func (b *builder) process(t token) {
	if t.typ == doctypeToken {
		if !b.sawDoctype && b.body == nil {
			b.quirks = t.name != "html" && !strings.HasPrefix(t.name, "html ")
		}
		b.sawDoctype = true
		return
	}
	if b.frameset {
		b.inFrameset(t)
		return
	}
	if b.body == nil && b.templates == 0 {
		b.inHead(t)
		return
	}
	if b.foreign(t) {
		b.inForeign(t)
		return
	}
	b.inMode(t)
}

func (b *builder) inMode(t token) {
	switch b.mode() {
	case inTable:
		b.inTable(t)
	case inTableBody:
		b.inTableBody(t)
	case inRow:
		b.inRow(t)
	case inCell:
		b.inCell(t)
	case inCaption:
		b.inCaption(t)
	case inColumnGroup:
		b.inColumnGroup(t)
	case inSelect, inSelectInTable:
		b.inSelect(t)
	default:
		b.inBody(t)
	}
}

// mode is the insertion mode the open elements imply.
func (b *builder) mode() mode {
	if b.tableish == 0 {
		return inBody
	}
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		n := b.oe[i]
		if n.ns != nsHTML {
			continue
		}
		switch n.Tag {
		case "td", "th":
			return inCell
		case "tr":
			return inRow
		case "tbody", "thead", "tfoot":
			return inTableBody
		case "caption":
			return inCaption
		case "colgroup":
			return inColumnGroup
		case "table":
			return inTable
		case "select":
			for j := i - 1; j > 0; j-- {
				b.steps++
				switch b.oe[j].Tag {
				case "template":
					return inSelect
				case "table":
					return inSelectInTable
				}
			}
			return inSelect
		case "template", "body":
			return inBody
		}
	}
	return inBody
}

const spaces = " \t\n\f\r"

func (b *builder) inHead(t token) {
	if cur := b.top(); cur != b.head && cur != b.html {
		// The text of an open title, script, style or noscript.
		switch t.typ {
		case textToken:
			b.insertText(t.data)
			return
		case endTagToken:
			b.pop()
			return
		}
		b.pop()
	}
	switch t.typ {
	case textToken:
		if rest := strings.TrimLeft(t.data, spaces); rest != "" {
			b.startBody(nil)
			b.process(token{typ: textToken, data: rest})
		}
	case startTagToken:
		switch t.name {
		case "html", "head":
		case "frameset":
			b.truncate(1)
			b.frameset = true
			n := b.newElement(t.name, t.attr, nsHTML)
			b.html.appendChild(n)
			b.push(n)
		case "base", "basefont", "bgsound", "link", "meta":
			b.head.appendChild(b.newElement(t.name, t.attr, nsHTML))
		case "title", "noscript", "noframes", "style", "script", "template":
			n := b.newElement(t.name, t.attr, nsHTML)
			b.head.appendChild(n)
			b.push(n)
			switch t.name {
			case "template":
				b.afe = append(b.afe, nil)
			case "title":
				b.z.rawTag, b.z.rcdata = t.name, true
			default:
				b.z.rawTag = t.name
			}
		case "body":
			b.startBody(t.attr)
		default:
			b.startBody(nil)
			b.process(t)
		}
	case endTagToken:
		switch t.name {
		case "head":
			if b.top() == b.head {
				b.pop()
			}
		case "body", "html", "br":
			b.startBody(nil)
			b.process(t)
		}
	}
}

// inFrameset reads a page of frames: only the text of <noframes> counts.
func (b *builder) inFrameset(t token) {
	if cur := b.top(); cur.Tag == "noframes" {
		switch t.typ {
		case textToken:
			b.insertText(t.data)
			return
		case endTagToken:
			b.pop()
			return
		}
		b.pop()
	}
	switch t.typ {
	case textToken:
		b.insertText(strings.Map(func(r rune) rune {
			if r < 0x80 && strings.IndexByte(spaces, byte(r)) >= 0 {
				return r
			}
			return -1
		}, t.data))
	case startTagToken:
		switch t.name {
		case "frameset":
			if b.top().Tag == "frameset" {
				b.insert(t, nsHTML)
			}
		case "frame":
			if b.top().Tag == "frameset" {
				b.insertVoid(t)
			}
		case "noframes":
			b.rawText(t, false)
		}
	case endTagToken:
		if t.name == "frameset" && b.top().Tag == "frameset" {
			b.pop()
		}
	}
}

// specialTag reports the HTML elements whose rules are their own; their
// end tags are not matched across one another. (A switch, not a map, so
// that the package has no init work at start-up.)
func specialTag(tag string) bool {
	switch tag {
	case "address", "applet", "area", "article", "aside", "base", "basefont", "bgsound", "blockquote",
		"body", "br", "button", "caption", "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt",
		"embed", "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4",
		"h5", "h6", "head", "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link",
		"listing", "main", "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol", "p",
		"param", "plaintext", "pre", "script", "search", "section", "select", "source", "style", "summary", "table",
		"tbody", "td", "template", "textarea", "tfoot", "th", "thead", "title", "tr", "track", "ul", "wbr", "xmp":
		return true
	}
	return false
}

func isSpecial(n *Node) bool {
	switch n.ns {
	case nsMath:
		return mathTextPoint(n) || n.Tag == "annotation-xml"
	case nsSVG:
		return n.Tag == "foreignobject" || n.Tag == "desc" || n.Tag == "title"
	}
	return specialTag(n.Tag)
}

type scope uint8

const (
	defaultScope scope = iota
	listItemScope
	buttonScope
	tableScope
	selectScope
)

// inScope reports an open HTML element named one of tags with no
// boundary of the scope between it and the current node.
func (b *builder) inScope(sc scope, tags ...string) bool {
	for i := len(b.oe) - 1; i >= 0; i-- {
		b.steps++
		n := b.oe[i]
		if n.ns == nsHTML && slices.Contains(tags, n.Tag) {
			return true
		}
		if b.boundary(n, sc) {
			return false
		}
	}
	return false
}

func (b *builder) elementInScope(e *Node) bool {
	for i := len(b.oe) - 1; i >= 0; i-- {
		b.steps++
		if b.oe[i] == e {
			return true
		}
		if b.boundary(b.oe[i], defaultScope) {
			return false
		}
	}
	return false
}

func (b *builder) boundary(n *Node, sc scope) bool {
	if n.ns != nsHTML {
		return sc != tableScope && sc != selectScope && isSpecial(n)
	}
	switch sc {
	case tableScope:
		return n.Tag == "html" || n.Tag == "table" || n.Tag == "template"
	case selectScope:
		return n.Tag != "optgroup" && n.Tag != "option"
	}
	switch n.Tag {
	case "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template":
		return true
	case "ol", "ul":
		return sc == listItemScope
	case "button":
		return sc == buttonScope
	}
	return false
}

// impliedEnd closes the elements whose end tags may be left out, but
// not one named except.
func (b *builder) impliedEnd(except string) {
	for {
		n := b.top()
		if n.ns != nsHTML || n.Tag == except {
			return
		}
		switch n.Tag {
		case "dd", "dt", "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc":
			b.pop()
		default:
			return
		}
	}
}

func (b *builder) closeP() {
	if b.inScope(buttonScope, "p") {
		b.impliedEnd("p")
		b.popTag("p")
	}
}

// Formatting elements: closed by a block, they are reopened in the
// next one.
func isFormatting(tag string) bool {
	switch tag {
	case "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u":
		return true
	}
	return false
}

func (b *builder) pushFormatting(n *Node) {
	// At most three equal ones after the last boundary.
	same, first := 0, -1
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		b.steps++
		b.steps += len(n.Attr)
		if e := b.afe[i]; e.Tag == n.Tag && sameAttrs(e.Attr, n.Attr) {
			same++
			first = i
		}
	}
	if same >= 3 {
		b.afe = slices.Delete(b.afe, first, first+1)
	}
	if len(b.afe) >= maxFormatting {
		b.afe = slices.Delete(b.afe, 0, 1)
	}
	b.afe = append(b.afe, n)
}

func sameAttrs(a, c []Attr) bool {
	if len(a) != len(c) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(c, x) {
			return false
		}
	}
	return true
}

func (b *builder) clearFormattingToMarker() {
	for len(b.afe) > 0 {
		n := b.afe[len(b.afe)-1]
		b.afe = b.afe[:len(b.afe)-1]
		if n == nil {
			return
		}
	}
}

// reconstruct reopens the formatting elements that a block closed.
func (b *builder) reconstruct() {
	if len(b.afe) == 0 {
		return
	}
	if e := b.afe[len(b.afe)-1]; e == nil || e.open {
		return
	}
	i := len(b.afe) - 1
	for i > 0 && b.afe[i-1] != nil && !b.afe[i-1].open {
		b.steps++
		i--
	}
	for ; i < len(b.afe); i++ {
		b.steps++
		e := b.afe[i]
		n := b.insert(token{name: e.Tag, attr: e.Attr}, e.ns)
		if n == nil {
			b.afe = b.afe[:i]
			return
		}
		b.afe[i] = n
	}
}

func (b *builder) lastFormatting(tag string) int {
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		b.steps++
		if b.afe[i].Tag == tag {
			return i
		}
	}
	return -1
}

func (b *builder) removeFormatting(n *Node) {
	if i := slices.Index(b.afe, n); i >= 0 {
		b.afe = slices.Delete(b.afe, i, i+1)
	}
}

// adopt ends a formatting element that may be misnested ("<b><p>x</b>"):
// the standard's adoption agency, which moves the blocks opened inside
// it out and reopens it within them.
func (b *builder) adopt(tag string) {
	if cur := b.top(); cur.ns == nsHTML && cur.Tag == tag && slices.Index(b.afe, cur) < 0 {
		b.pop()
		return
	}
	for range 8 {
		fi := b.lastFormatting(tag)
		if fi < 0 {
			b.anyOtherEnd(tag)
			return
		}
		fe := b.afe[fi]
		si := b.indexOf(fe)
		if si < 0 {
			b.afe = slices.Delete(b.afe, fi, fi+1)
			return
		}
		if !b.elementInScope(fe) {
			return
		}
		var furthest *Node
		fbi := -1
		for i := si + 1; i < len(b.oe); i++ {
			b.steps++
			if isSpecial(b.oe[i]) {
				furthest, fbi = b.oe[i], i
				break
			}
		}
		if furthest == nil {
			b.truncate(si)
			b.afe = slices.Delete(b.afe, fi, fi+1)
			return
		}
		ancestor := b.oe[si-1]
		bookmark := fi
		node, last := furthest, furthest
		ni := fbi
		for inner := 1; ; inner++ {
			b.steps++
			ni--
			node = b.oe[ni]
			if node == fe {
				break
			}
			ai := slices.Index(b.afe, node)
			if inner > 3 && ai >= 0 {
				b.afe = slices.Delete(b.afe, ai, ai+1)
				if ai < bookmark {
					bookmark--
				}
				ai = -1
			}
			if ai < 0 {
				b.closed(node)
				b.oe = slices.Delete(b.oe, ni, ni+1)
				fbi--
				continue
			}
			clone := b.newElement(node.Tag, node.Attr, node.ns)
			b.afe[ai] = clone
			b.oe[ni] = clone
			node.open, clone.open = false, true
			node = clone
			if last == furthest {
				bookmark = ai + 1
			}
			if last.Parent != nil {
				last.Parent.removeChild(last)
			}
			node.appendChild(last)
			last = node
		}
		if last.Parent != nil {
			last.Parent.removeChild(last)
		}
		switch ancestor.Tag {
		case "table", "tbody", "tfoot", "thead", "tr":
			if ancestor.ns == nsHTML {
				b.fosterAppend(last)
				break
			}
			ancestor.appendChild(last)
		default:
			ancestor.appendChild(last)
		}
		clone := b.newElement(fe.Tag, fe.Attr, fe.ns)
		for c := furthest.FirstChild; c != nil; c = furthest.FirstChild {
			b.steps++
			furthest.removeChild(c)
			clone.appendChild(c)
		}
		furthest.appendChild(clone)
		if i := slices.Index(b.afe, fe); i >= 0 {
			b.afe = slices.Delete(b.afe, i, i+1)
			if i < bookmark {
				bookmark--
			}
		}
		b.afe = slices.Insert(b.afe, min(bookmark, len(b.afe)), clone)
		b.removeFromStack(fe)
		fbi = b.indexOf(furthest)
		b.oe = slices.Insert(b.oe, fbi+1, clone)
		clone.open = true
	}
}

// fosterAppend puts n before the last open table.
func (b *builder) fosterAppend(n *Node) {
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		if t := b.oe[i]; t.ns == nsHTML && t.Tag == "table" {
			if t.Parent != nil {
				t.Parent.insertBefore(n, t)
			} else {
				b.oe[i-1].appendChild(n)
			}
			return
		}
	}
	b.oe[0].appendChild(n)
}

// anyOtherEnd closes the innermost element named tag, unless an element
// with rules of its own is open inside it.
func (b *builder) anyOtherEnd(tag string) {
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		n := b.oe[i]
		if n.ns == nsHTML && n.Tag == tag {
			b.impliedEnd(tag)
			b.truncate(i)
			return
		}
		if isSpecial(n) {
			return
		}
	}
}

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

// Tables.

func (b *builder) clearTo(tags ...string) {
	for {
		n := b.top()
		if n == b.html || n.ns == nsHTML && (n.Tag == "template" || slices.Contains(tags, n.Tag)) {
			return
		}
		b.pop()
	}
}

func (b *builder) inTable(t token) {
	switch t.typ {
	case textToken:
		s := strings.ReplaceAll(t.data, "\x00", "")
		if cur := b.top(); cur.ns == nsHTML {
			switch cur.Tag {
			case "table", "tbody", "tfoot", "thead", "tr":
				if strings.Trim(s, spaces) == "" {
					b.insertText(s)
					return
				}
			}
		}
	case startTagToken:
		switch t.name {
		case "caption":
			b.clearTo("table")
			b.afe = append(b.afe, nil)
			b.insert(t, nsHTML)
			return
		case "colgroup":
			b.clearTo("table")
			b.insert(t, nsHTML)
			return
		case "col":
			b.clearTo("table")
			if b.insert(token{name: "colgroup"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "tbody", "tfoot", "thead":
			b.clearTo("table")
			b.insert(t, nsHTML)
			return
		case "td", "th", "tr":
			b.clearTo("table")
			if b.insert(token{name: "tbody"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "table":
			if b.inScope(tableScope, "table") {
				b.popTag("table")
				b.process(t)
			}
			return
		case "style", "script":
			b.rawText(t, false)
			return
		case "template":
			b.startInBody(t)
			return
		case "input":
			if strings.EqualFold(attrVal(t.attr, "type"), "hidden") {
				b.insertVoid(t)
				return
			}
		case "form":
			if b.form == nil && b.templates == 0 {
				if n := b.insert(t, nsHTML); n != nil {
					b.form = n
					b.pop()
				}
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "table":
			if b.inScope(tableScope, "table") {
				b.popTag("table")
			}
			return
		case "body", "caption", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr":
			return
		case "template":
			b.endInBody(t)
			return
		}
	}
	b.foster = true
	b.inBody(t)
	b.foster = false
}

func attrVal(attrs []Attr, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func (b *builder) inTableBody(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "tr":
			b.clearTo("tbody", "tfoot", "thead")
			b.insert(t, nsHTML)
			return
		case "th", "td":
			b.clearTo("tbody", "tfoot", "thead")
			if b.insert(token{name: "tr"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "caption", "col", "colgroup", "tbody", "tfoot", "thead":
			if b.inScope(tableScope, "tbody", "thead", "tfoot") {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "tbody", "tfoot", "thead":
			if b.inScope(tableScope, t.name) {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
			}
			return
		case "table":
			if b.inScope(tableScope, "tbody", "thead", "tfoot") {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
				b.process(t)
			}
			return
		case "body", "caption", "col", "colgroup", "html", "td", "th", "tr":
			return
		}
	}
	b.inTable(t)
}

func (b *builder) inRow(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "th", "td":
			b.clearTo("tr")
			if b.insert(t, nsHTML) != nil {
				b.afe = append(b.afe, nil)
			}
			return
		case "caption", "col", "colgroup", "tbody", "tfoot", "thead", "tr":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "tr":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
			}
			return
		case "table":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		case "tbody", "tfoot", "thead":
			if b.inScope(tableScope, t.name) && b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		case "body", "caption", "col", "colgroup", "html", "td", "th":
			return
		}
	}
	b.inTable(t)
}

func (b *builder) closeCell() {
	b.impliedEnd("")
	b.popTag("td", "th")
	b.clearFormattingToMarker()
}

func (b *builder) inCell(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr":
			if b.inScope(tableScope, "td", "th") {
				b.closeCell()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "td", "th":
			if b.inScope(tableScope, t.name) {
				b.impliedEnd("")
				b.popTag(t.name)
				b.clearFormattingToMarker()
			}
			return
		case "body", "caption", "col", "colgroup", "html":
			return
		case "table", "tbody", "tfoot", "thead", "tr":
			if b.inScope(tableScope, t.name) {
				b.closeCell()
				b.process(t)
			}
			return
		}
	}
	b.inBody(t)
}

func (b *builder) inCaption(t token) {
	closeCaption := func() bool {
		if !b.inScope(tableScope, "caption") {
			return false
		}
		b.impliedEnd("")
		b.popTag("caption")
		b.clearFormattingToMarker()
		return true
	}
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr":
			if closeCaption() {
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "caption":
			closeCaption()
			return
		case "table":
			if closeCaption() {
				b.process(t)
			}
			return
		case "body", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr":
			return
		}
	}
	b.inBody(t)
}

func (b *builder) inColumnGroup(t token) {
	cur := b.top()
	switch t.typ {
	case textToken:
		s := t.data
		ws := len(s) - len(strings.TrimLeft(s, spaces))
		b.insertText(s[:ws])
		if s = s[ws:]; s == "" {
			return
		}
		t.data = s
	case startTagToken:
		switch t.name {
		case "col":
			b.insertVoid(t)
			return
		case "template":
			b.startInBody(t)
			return
		}
	case endTagToken:
		switch t.name {
		case "colgroup":
			if cur.Tag == "colgroup" {
				b.pop()
			}
			return
		case "col":
			return
		case "template":
			b.endInBody(t)
			return
		}
	}
	if cur.ns == nsHTML && cur.Tag == "colgroup" {
		b.pop()
		b.process(t)
	}
}

func (b *builder) inSelect(t token) {
	cur := b.top()
	switch t.typ {
	case textToken:
		b.insertText(strings.ReplaceAll(t.data, "\x00", ""))
	case startTagToken:
		switch t.name {
		case "option":
			if cur.Tag == "option" {
				b.pop()
			}
			b.insert(t, nsHTML)
		case "optgroup":
			if cur.Tag == "option" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
			b.insert(t, nsHTML)
		case "hr":
			if cur.Tag == "option" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
			b.insertVoid(t)
		case "select":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
			}
		case "input", "keygen", "textarea":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
				b.process(t)
			}
		case "script", "template":
			b.startInBody(t)
		case "caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th":
			if b.mode() == inSelectInTable {
				b.popTag("select")
				b.process(t)
			}
		}
	case endTagToken:
		switch t.name {
		case "optgroup":
			if cur.Tag == "option" && len(b.oe) > 2 && b.oe[len(b.oe)-2].Tag == "optgroup" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
		case "option":
			if cur.Tag == "option" {
				b.pop()
			}
		case "select":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
			}
		case "template":
			b.endInBody(t)
		case "caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th":
			if b.mode() == inSelectInTable && b.inScope(tableScope, t.name) {
				b.popTag("select")
				b.process(t)
			}
		}
	}
}

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
