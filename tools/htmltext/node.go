// Package htmltext reads HTML pages into a tree the way browsers do for
// what matters to a page's text: the elements a tag implies or ends
// (paragraphs, list items, table rows and cells, options, void
// elements), misnested inline elements, tables, raw text (script, style,
// title, textarea), character references and the page's charset. It is
// not a full HTML5 parser: comments and doctypes are dropped, and a few
// rare corners of the standard's tree building are simplified. It never
// fails, and its work is linear in the input: the tree's depth and size
// are capped.
package htmltext

// NodeType says what a Node is.
type NodeType uint8

// The kinds of node.
const (
	DocumentNode NodeType = iota
	ElementNode
	TextNode
)

// Attr is one attribute of an element: the name lower-cased, the value
// with character references decoded.
type Attr struct {
	Key, Val string
}

// Node is a node of the tree: the document, an element or a run of text.
type Node struct {
	Type NodeType
	Tag  string // an element's lower-case name
	Data string // a text node's text
	Attr []Attr

	Parent, FirstChild, LastChild, PrevSibling, NextSibling *Node

	ns   namespace
	open bool     // on the builder's stack of open elements
	more []string // text still to be added to Data, while parsing
}

type namespace uint8

const (
	nsHTML namespace = iota
	nsSVG
	nsMath
)

// AttrVal is the value of the attribute key, "" without one.
func (n *Node) AttrVal(key string) string { return attrVal(n.Attr, key) }

func attrVal(attrs []Attr, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func (n *Node) appendChild(c *Node) {
	c.Parent = n
	c.PrevSibling = n.LastChild
	if n.LastChild != nil {
		n.LastChild.NextSibling = c
	} else {
		n.FirstChild = c
	}
	n.LastChild = c
}

func (n *Node) insertBefore(c, ref *Node) {
	c.Parent = n
	c.NextSibling = ref
	c.PrevSibling = ref.PrevSibling
	if ref.PrevSibling != nil {
		ref.PrevSibling.NextSibling = c
	} else {
		n.FirstChild = c
	}
	ref.PrevSibling = c
}

func (n *Node) removeChild(c *Node) {
	if c.PrevSibling != nil {
		c.PrevSibling.NextSibling = c.NextSibling
	} else {
		n.FirstChild = c.NextSibling
	}
	if c.NextSibling != nil {
		c.NextSibling.PrevSibling = c.PrevSibling
	} else {
		n.LastChild = c.PrevSibling
	}
	c.Parent, c.PrevSibling, c.NextSibling = nil, nil, nil
}
