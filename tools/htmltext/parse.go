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
	// The text of an open title, script, style or noscript.
	if cur := b.top(); cur != b.head && cur != b.html && b.rawContent(t) {
		return
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

// rawContent reads t inside the open element whose content is raw text:
// text is its content and an end tag closes it, and either is consumed;
// any other token closes it too and is left to the caller.
func (b *builder) rawContent(t token) bool {
	switch t.typ {
	case textToken:
		b.insertText(t.data)
		return true
	case endTagToken:
		b.pop()
		return true
	}
	b.pop()
	return false
}

// inFrameset reads a page of frames: only the text of <noframes> counts.
func (b *builder) inFrameset(t token) {
	if b.top().Tag == "noframes" && b.rawContent(t) {
		return
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
